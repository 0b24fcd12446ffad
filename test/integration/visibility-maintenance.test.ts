// Visibility and maintenance windows on the real parts. A beta ModuleTemplate serves only Kymas
// labelled beta; a module whose template turns internal is removed from a Kyma that is not (as
// upstream deletes its Manifest). An upgrade to a template that requires downtime waits for the
// Kyma's maintenance window (policy in a ConfigMap) and happens when it opens, by the workflow's
// own timer: the drift timer is far off and no signal comes. A Kyma that skips maintenance
// windows upgrades at once.
import { describe, expect, it } from 'vitest';
import type { ModuleStatus } from '../../src/api/kyma';
import { manifestName } from '../../src/api/names';
import { API_VERSION, LABELS } from '../../src/api/shared';
import { eventually, getKyma, kymaInState, kymaObject, kymaWorkflowId, useKlm, type Klm } from '../support/klm';
import { uniqueName } from '../support/stack';

const POLICY = { namespace: 'default', name: uniqueName('maintenance-policy') };

async function moduleStatus(klm: Klm, kyma: string, module: string): Promise<ModuleStatus | undefined> {
  return (await getKyma(klm, kyma))?.status?.modules?.find((m) => m.name === module);
}

/** The Kyma workflow's signals from the bridge (Kyma and template changes) in its current run. */
async function bridgeSignals(klm: Klm, kyma: string): Promise<number> {
  const history = await klm.client.workflow.getHandle(kymaWorkflowId(klm.namespace, kyma)).fetchHistory();
  return (history.events ?? []).filter((e) =>
    ['kymaChanged', 'templatesChanged'].includes(e.workflowExecutionSignaledEventAttributes?.signalName ?? ''),
  ).length;
}

describe('visibility and maintenance windows', () => {
  // The drift timer must not be what moves anything here.
  const klm = useKlm({ settings: { driftIntervalMs: 60 * 60_000 }, maintenancePolicy: POLICY });

  it('serves a beta template only to a Kyma labelled beta, and removes a module whose template turns internal', async () => {
    const ns = klm().namespace;
    const name = uniqueName('vis');
    await klm().kube.mergePatch(API_VERSION, 'ModuleTemplate', 'counter-1.0.0', ns, {
      metadata: { labels: { [LABELS.beta]: 'true' } },
    });
    await klm().kube.create(kymaObject(ns, name, { channel: 'regular', modules: [{ name: 'counter' }] }));
    const hidden = await eventually('counter to be refused', async () => {
      const s = await moduleStatus(klm(), name, 'counter');
      return s?.state === 'Error' ? s : undefined;
    });
    expect(hidden.message).toBe(
      `module "counter": ModuleTemplate ${ns}/counter-1.0.0 is beta ` +
        `(operator.kyma-project.io/beta: "true"): not available to this Kyma, which lacks that ` +
        `label`,
    );
    expect((await getKyma(klm(), name))?.status?.conditions?.[0]).toMatchObject({ reason: 'ModuleNotVisible' });
    expect(await klm().kube.get(API_VERSION, 'Manifest', manifestName(name, 'counter'), ns)).toBeUndefined();

    // Labelled beta, the Kyma sees it.
    await klm().kube.mergePatch(API_VERSION, 'Kyma', name, ns, { metadata: { labels: { [LABELS.beta]: 'true' } } });
    await kymaInState(klm(), name, 'Ready');
    expect(await moduleStatus(klm(), name, 'counter')).toMatchObject({ version: '1.0.0', state: 'Ready' });

    // Internal now: the Kyma is not internal, so the installed module goes, and says why.
    await klm().kube.mergePatch(API_VERSION, 'ModuleTemplate', 'counter-1.0.0', ns, {
      metadata: { labels: { [LABELS.internal]: 'true' } },
    });
    await eventually(
      'the counter Manifest to go',
      async () => (await klm().kube.get(API_VERSION, 'Manifest', manifestName(name, 'counter'), ns)) === undefined,
    );
    const kyma = await kymaInState(klm(), name, 'Error');
    expect(kyma.status?.modules).toEqual([
      expect.objectContaining({
        name: 'counter',
        state: 'Error',
        message: expect.stringContaining(
          'is internal (operator.kyma-project.io/internal: "true"): not available to this Kyma',
        ) as string,
      }),
    ]);
  }, 120_000);

  it(
    'upgrades a module whose template requires downtime only when the maintenance window opens, ' +
      'by its timer; at once when the Kyma skips windows',
    async () => {
      const ns = klm().namespace;
      const [held, skipping] = [uniqueName('held'), uniqueName('skip')];
      await klm().kube.create(
        kymaObject(ns, held, { channel: 'regular', modules: [{ name: 'greeter', version: '1.0.0' }] }),
      );
      await klm().kube.create(
        kymaObject(ns, skipping, {
          channel: 'regular',
          skipMaintenanceWindows: true,
          modules: [{ name: 'greeter', version: '1.0.0' }],
        }),
      );
      for (const k of [held, skipping]) await kymaInState(klm(), k, 'Ready');

      // A window that opens in 40 s and lasts well beyond upstream's 20-minute minimum.
      const begin = Date.now() + 40_000;
      const window = { begin: new Date(begin).toISOString(), end: new Date(begin + 2 * 3_600_000).toISOString() };
      await klm().kube.create({
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: POLICY,
        data: { 'policy.json': JSON.stringify({ rules: [], default: window }) },
      });
      await klm().kube.mergePatch(API_VERSION, 'ModuleTemplate', 'greeter-1.1.0', ns, {
        spec: { requiresDowntime: true },
      });
      for (const k of [held, skipping])
        await klm().kube.mergePatch(API_VERSION, 'Kyma', k, ns, {
          spec: { modules: [{ name: 'greeter', version: '1.1.0' }] },
        });

      await eventually('the skipping Kyma to run greeter 1.1.0', async () => {
        const s = await moduleStatus(klm(), skipping, 'greeter');
        return s?.version === '1.1.0' && s.state === 'Ready';
      });
      const waiting = await eventually('the held Kyma to show maintenance', async () => {
        const s = await moduleStatus(klm(), held, 'greeter');
        return s?.maintenance ? s : undefined;
      });
      expect(Date.now()).toBeLessThan(begin);
      expect(waiting).toMatchObject({
        version: '1.0.0',
        state: 'Ready',
        message: `upgrading greeter from 1.0.0 to 1.1.0 requires downtime: waiting for the maintenance window ${window.begin} – ${window.end}`,
      });
      const signals = await bridgeSignals(klm(), held);

      const moved = await eventually(
        'the held Kyma to run greeter 1.1.0',
        async () => {
          const s = await moduleStatus(klm(), held, 'greeter');
          return s?.version === '1.1.0' && s.state === 'Ready' ? s : undefined;
        },
        90_000,
      );
      expect(Date.now()).toBeGreaterThanOrEqual(begin);
      expect(moved.maintenance).toBeFalsy();
      // Nothing but the workflow's timer woke it.
      expect(await bridgeSignals(klm(), held)).toBe(signals);
    },
    180_000,
  );
});
