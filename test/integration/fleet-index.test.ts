// The bridge's fleet index on the real parts: a promotion reaches only the Kymas that use the
// module on the channel whose version changed (through the channel's rollout), and that Kyma
// moves to the new version; a template event only the Kymas that resolve to it. The signals
// are counted in the workflows' own histories.
import { beforeAll, describe, expect, it } from 'vitest';
import type { ModuleReleaseMeta } from '../../src/api/modulereleasemeta';
import { API_VERSION, type KubeObject } from '../../src/api/shared';
import { eventually, getKyma, kymaInState, kymaObject, kymaWorkflowId, useKlm, type Klm } from '../support/klm';
import { uniqueName } from '../support/stack';

/** The signals of this name the Kyma's workflow (its current run) has received, with their arguments. */
async function signalled(klm: Klm, kyma: string, name: string): Promise<unknown[]> {
  const history = await klm.client.workflow.getHandle(kymaWorkflowId(klm.namespace, kyma)).fetchHistory();
  return (history.events ?? [])
    .map((e) => e.workflowExecutionSignaledEventAttributes)
    .filter((x) => x?.signalName === name)
    .map((x) =>
      (x?.input?.payloads ?? []).map((p) => JSON.parse(Buffer.from(p.data ?? []).toString('utf8')) as unknown),
    );
}

async function templatesChangedSignals(klm: Klm, kyma: string): Promise<number> {
  return (await signalled(klm, kyma, 'templatesChanged')).length;
}

describe('the fleet index', () => {
  const klm = useKlm();
  // A: greeter on regular. B: greeter pinned at 1.0.0 on regular. C: greeter on fast, counter on regular.
  const [a, b, c] = [uniqueName('a'), uniqueName('b'), uniqueName('c')];

  beforeAll(async () => {
    const ns = klm().namespace;
    await klm().kube.create(kymaObject(ns, a, { channel: 'regular', modules: [{ name: 'greeter' }] }));
    await klm().kube.create(
      kymaObject(ns, b, { channel: 'regular', modules: [{ name: 'greeter', version: '1.0.0' }] }),
    );
    await klm().kube.create(
      kymaObject(ns, c, { channel: 'fast', modules: [{ name: 'greeter' }, { name: 'counter', channel: 'regular' }] }),
    );
    for (const k of [a, b, c]) await kymaInState(klm(), k, 'Ready');
  });

  it("tells a promotion of greeter's regular channel to its rollout, which admits only the Kyma on that channel; the others hear nothing", async () => {
    const ns = klm().namespace;
    const statsBefore = klm().bridge!.stats.templateSignals;
    const signalsOf = async (k: string, name: string) => (await signalled(klm(), k, name)).length;
    const before = Object.fromEntries(
      await Promise.all(
        [a, b, c].map(
          async (k) =>
            [k, { t: await signalsOf(k, 'templatesChanged'), a: await signalsOf(k, 'admitModule') }] as const,
        ),
      ),
    );

    // Promote greeter 1.1.0 to regular (fast already has it).
    const meta = (await klm().kube.get<ModuleReleaseMeta & KubeObject>(
      API_VERSION,
      'ModuleReleaseMeta',
      'greeter',
      ns,
    ))!;
    expect(meta.spec.channels).toEqual(
      expect.arrayContaining([
        { channel: 'regular', version: '1.0.0' },
        { channel: 'fast', version: '1.1.0' },
      ]),
    );
    const patched = await klm().kube.mergePatch(API_VERSION, 'ModuleReleaseMeta', 'greeter', ns, {
      spec: {
        channels: [
          { channel: 'regular', version: '1.1.0' },
          { channel: 'fast', version: '1.1.0' },
        ],
      },
    });

    await eventually(
      'A to run greeter 1.1.0',
      async () => {
        const kyma = await getKyma(klm(), a);
        const greeter = kyma?.status?.modules?.find((m) => m.name === 'greeter');
        return kyma?.status?.state === 'Ready' && greeter?.version === '1.1.0' && greeter.state === 'Ready';
      },
      60_000,
    );
    expect(await klm().kube.get('v1', 'ConfigMap', 'greeter-config', `${a}-system`)).toBeDefined();
    // A: one admission from the rollout, which names the event behind it (reads must see at
    // least that version) and the newest template the bridge had seen.
    const admissions = await signalled(klm(), a, 'admitModule');
    expect(admissions).toHaveLength(before[a]!.a + 1);
    expect(admissions.at(-1)).toEqual([
      {
        module: 'greeter',
        channel: 'regular',
        version: '1.1.0',
        seen: {
          ModuleReleaseMeta: patched.metadata.resourceVersion,
          ModuleTemplate: expect.stringMatching(/^\d+$/) as unknown,
        },
      },
    ]);
    // Nobody was poked by the release-meta event itself; B (pinned) and C (fast, counter on regular) heard nothing.
    for (const k of [a, b, c]) expect(await signalsOf(k, 'templatesChanged'), k).toBe(before[k]!.t);
    for (const k of [b, c]) expect(await signalsOf(k, 'admitModule'), k).toBe(before[k]!.a);
    const stats = klm().bridge!.stats.templateSignals;
    expect({ sent: stats.sent - statsBefore.sent, skipped: stats.skipped - statsBefore.skipped }).toEqual({
      sent: 0,
      skipped: 3,
    });
    const [kb, kc] = [await getKyma(klm(), b), await getKyma(klm(), c)];
    expect(kb?.status?.modules?.find((m) => m.name === 'greeter')).toMatchObject({ version: '1.0.0', state: 'Ready' });
    expect(kc?.status?.modules?.find((m) => m.name === 'counter')).toMatchObject({ version: '1.0.0', state: 'Ready' });
  });

  it('signals a template event only to the Kymas that resolve to it: none for a version not yet promoted', async () => {
    const ns = klm().namespace;
    const counts = async () =>
      Object.fromEntries(
        await Promise.all([a, b, c].map(async (k) => [k, await templatesChangedSignals(klm(), k)] as const)),
      );
    const before = await counts();
    // A version nobody pins and no channel maps: published ahead of its promotion.
    const template = (await klm().kube.get<KubeObject & { spec: { version: string } }>(
      API_VERSION,
      'ModuleTemplate',
      'greeter-1.1.0',
      ns,
    ))!;
    const { namespace, labels } = template.metadata;
    await klm().kube.create({
      ...template,
      metadata: { name: 'greeter-2.0.0', namespace, labels },
      spec: { ...template.spec, version: '2.0.0' },
    });
    // Then a change to greeter-1.0.0, which only B (pinned) resolves to. The informer delivers the
    // events in order, so once B has heard of it the bridge has routed the first one too.
    await klm().kube.mergePatch(API_VERSION, 'ModuleTemplate', 'greeter-1.0.0', ns, {
      metadata: { labels: { touched: 'yes' } },
    });
    await eventually('B to be signalled', async () => (await templatesChangedSignals(klm(), b)) === before[b]! + 1);
    const after = await counts();
    expect(after).toEqual({ [a]: before[a], [b]: before[b]! + 1, [c]: before[c] });
    const last = (await signalled(klm(), b, 'templatesChanged')).at(-1) as [Record<string, string>];
    expect(Object.keys(last[0])).toEqual(['ModuleTemplate']);
  });
});
