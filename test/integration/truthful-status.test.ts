// What the product says is what runs, on the real parts: a new version counts only when its own
// manager pods run (an upgrade whose pod cannot be scheduled is never Ready, and halts a canary
// with a failure budget of 0; a crash-looping manager is Error with the pod's reason; a manager
// that never appears turns Error after the manager timeout); every hold has an end (a module put
// back while its channel moved converges; the Kymas an aborted rollout did not reach say so); no
// Kyma can break its workflow (several hundred modules; a workflow the server ends is noticed).
import { describe, expect, it } from 'vitest';
import type { Manifest } from '../../src/api/manifest';
import { kymaWorkflowId, manifestName } from '../../src/api/names';
import { SA } from '../../src/api/search-attributes';
import { API_VERSION, LABELS, type KubeObject } from '../../src/api/shared';
import { abortRollout, rolloutProgress, rolloutWorkflowId } from '../../src/contract/rollout';
import { moduleReleaseMeta } from '../../src/publish/module';
import { eventually, getKyma, kymaInState, kymaObject, useKlm, type Klm } from '../support/klm';
import { installsFor } from '../support/history';
import { testModule } from '../support/modules';
import { uniqueName } from '../support/stack';

const MANAGER_TIMEOUT_MS = 12_000;

async function moduleStatus(klm: Klm, kyma: string, module: string) {
  return (await getKyma(klm, kyma))?.status?.modules?.find((m) => m.name === module);
}

/** The messages of the Kyma's Events of this reason, as `kubectl describe` finds them (by the Kyma's uid too). */
async function kymaEvents(klm: Klm, kyma: string, reason: string): Promise<string[]> {
  const uid = (await klm.kube.get(API_VERSION, 'Kyma', kyma, klm.namespace))?.metadata.uid;
  const events = await klm.kube.list<
    KubeObject & { reason?: string; message?: string; involvedObject?: { name?: string; uid?: string } }
  >('v1', 'Event', { namespace: klm.namespace });
  return events.items
    .filter((e) => e.involvedObject?.name === kyma && e.involvedObject.uid === uid && e.reason === reason)
    .map((e) => e.message ?? '');
}

function promoteFaulty(klm: Klm, version: string) {
  return klm.kube.apply(
    moduleReleaseMeta('faulty', 'kyma-project.io/module/faulty', klm.namespace, { regular: version }),
  );
}

describe("readiness of a new version is the new version's", () => {
  const klm = useKlm({
    settings: { managerAvailableTimeoutMs: MANAGER_TIMEOUT_MS },
    rolloutPolicy: {
      default: 'waves: []\nsoak: 0s\nmaxConcurrent: 1000000\nfailureBudget: "100%"',
      regular: 'waves: [1]\nsoak: 0s\nfailureBudget: 0',
    },
  });

  it('never reports an upgrade Ready whose new manager pod cannot be scheduled while the old one serves: Processing, then Error naming the pod', async () => {
    const name = uniqueName('pin');
    await klm().kube.create(
      kymaObject(klm().namespace, name, { channel: 'regular', modules: [{ name: 'faulty', version: '1.0.0' }] }),
    );
    await kymaInState(klm(), name, 'Ready');
    await klm().kube.mergePatch(API_VERSION, 'Kyma', name, klm().namespace, {
      spec: { modules: [{ name: 'faulty', version: '2.0.0' }] },
    });
    const seen: string[] = [];
    const failing = await eventually("faulty 2.0.0 to be Error with its pod's reason", async () => {
      const m = await moduleStatus(klm(), name, 'faulty');
      if (m?.version === '2.0.0') seen.push(m.state);
      return m?.version === '2.0.0' && m.state === 'Error' ? m : undefined;
    });
    expect(seen).not.toContain('Ready');
    expect(seen).toContain('Processing');
    expect(failing.message).toMatch(
      /^manager Deployment \S+\/faulty-manager cannot roll out \(1 of 1 replicas updated, 1 old replica still running\): pod faulty-manager-\S+ cannot be scheduled: 0\/1 nodes are available/,
    );
    const manifest = await klm().kube.get<Manifest & KubeObject>(
      API_VERSION,
      'Manifest',
      manifestName(name, 'faulty'),
      klm().namespace,
    );
    expect(manifest?.status).toMatchObject({
      state: 'Error',
      conditions: [expect.objectContaining({ reason: 'ManagerPodsFailing' })],
    });
    expect((await getKyma(klm(), name))?.status?.state).toBe('Error');
    // The old pod still serves: it never turned Ready at 2.0.0 while we watched, not even past the manager timeout.
    await new Promise((r) => setTimeout(r, 3000));
    expect((await moduleStatus(klm(), name, 'faulty'))?.state).toBe('Error');
  });

  it("shows a crash-looping manager as Error with the pod's reason", async () => {
    const name = uniqueName('crash');
    await klm().kube.create(
      kymaObject(klm().namespace, name, { channel: 'regular', modules: [{ name: 'faulty', version: '3.0.0' }] }),
    );
    const m = await eventually('faulty 3.0.0 to be Error', async () => {
      const s = await moduleStatus(klm(), name, 'faulty');
      return s?.state === 'Error' ? s : undefined;
    });
    expect(m.message).toMatch(
      /cannot roll out \(0 of 1 updated replicas available\): pod faulty-manager-\S+ container manager is CrashLoopBackOff: back-off 2m40s restarting failed container=manager, restarted 5 times, last exit: Error \(code 1\)$/,
    );
  });

  it('turns a manager that never appears into Error after the manager timeout', async () => {
    const mod = await testModule(klm());
    await mod.publish('1.0.0');
    await mod.channels({ regular: '1.0.0' });
    await klm().kube.mergePatch(API_VERSION, 'ModuleTemplate', `${mod.name}-1.0.0`, klm().namespace, {
      spec: { manager: { group: 'apps', version: 'v1', kind: 'Deployment', name: 'nowhere-manager' } },
    });
    const name = uniqueName('missing');
    const created = Date.now();
    await klm().kube.create(kymaObject(klm().namespace, name, { channel: 'regular', modules: [{ name: mod.name }] }));
    await eventually(
      'the manager to be missing',
      async () => (await moduleStatus(klm(), name, mod.name))?.message?.includes('does not exist') || undefined,
    );
    const m = await eventually(
      'the missing manager to be Error',
      async () => {
        const s = await moduleStatus(klm(), name, mod.name);
        return s?.state === 'Error' ? s : undefined;
      },
      90_000,
    );
    expect(Date.now() - created).toBeGreaterThanOrEqual(MANAGER_TIMEOUT_MS);
    expect(m.message).toMatch(/^manager Deployment \S+\/nowhere-manager does not exist: still missing after 12s$/);
    expect(await kymaEvents(klm(), name, 'DependencyTimeout')).toHaveLength(1);
  }, 150_000);

  it('halts a canary wave with failure budget 0 on the unschedulable version; the Kymas not reached stay, and say so once it is aborted', async () => {
    const [canary, ...rest] = [uniqueName('canary'), uniqueName('wave-a'), uniqueName('wave-b')];
    await klm().kube.create({
      ...kymaObject(klm().namespace, canary, { channel: 'regular', modules: [{ name: 'faulty' }] }),
      metadata: { name: canary, namespace: klm().namespace, labels: { [LABELS.rolloutPriority]: '1' } },
    });
    for (const n of rest)
      await klm().kube.create(kymaObject(klm().namespace, n, { channel: 'regular', modules: [{ name: 'faulty' }] }));
    for (const n of [canary, ...rest]) await kymaInState(klm(), n, 'Ready');
    await promoteFaulty(klm(), '2.0.0');
    const rollout = klm().client.workflow.getHandle(
      rolloutWorkflowId({ namespace: klm().namespace, module: 'faulty', channel: 'regular' }),
    );
    const halted = await eventually(
      'the rollout to halt',
      async () => {
        const p = await rollout.query(rolloutProgress).catch(() => undefined);
        return p?.phase === 'Halted' ? p : undefined;
      },
      90_000,
    );
    expect(halted.failed).toEqual([
      expect.objectContaining({ kyma: canary, message: expect.stringMatching(/cannot be scheduled/) as unknown }),
    ]);
    // The rollout hears of the failure from the module; the Kyma's status write follows it.
    const failed = await eventually("the canary's module to show Error", async () => {
      const s = await moduleStatus(klm(), canary, 'faulty');
      return s?.state === 'Error' ? s : undefined;
    });
    expect(failed).toMatchObject({
      version: '2.0.0',
      state: 'Error',
      message: expect.stringMatching(/cannot be scheduled/) as unknown,
    });
    for (const n of rest)
      expect(await moduleStatus(klm(), n, 'faulty')).toMatchObject({ version: '1.0.0', state: 'Ready' });
    await rollout.executeUpdate(abortRollout, { args: [{ reason: 'the canary cannot schedule its manager' }] });
    // A Kyma not reached that resolves the channel again holds at 1.0.0, and says why.
    await klm().kube.mergePatch(API_VERSION, 'Kyma', rest[0], klm().namespace, {
      metadata: { labels: { touched: 'yes' } },
    });
    const held = await eventually('the Kyma not reached to say the rollout was aborted', async () => {
      const s = await moduleStatus(klm(), rest[0], 'faulty');
      return s?.message?.includes('aborted') ? s : undefined;
    });
    expect(held).toMatchObject({
      version: '1.0.0',
      state: 'Ready',
      message:
        'module is ready; the rollout of 2.0.0 on channel regular was aborted: the canary cannot ' +
        'schedule its manager; it stays at 1.0.0 until the next promotion',
    });
    await promoteFaulty(klm(), '1.0.0');
  }, 180_000);
});

describe('every hold has an end, and no Kyma can break its workflow', () => {
  const klm = useKlm({ endedWorkflowsPollMs: 1_000 });

  it('converges a module put back into the Kyma after its blocked removal outlived a promotion of its channel, through a rollout it starts', async () => {
    const mod = await testModule(klm());
    await mod.publish('1.0.0');
    await mod.publish('1.1.0');
    await mod.channels({ regular: '1.0.0' });
    const name = uniqueName('putback');
    await klm().kube.create(kymaObject(klm().namespace, name, { channel: 'regular', modules: [{ name: mod.name }] }));
    await kymaInState(klm(), name, 'Ready');
    await klm().kube.create({
      apiVersion: mod.apiVersion,
      kind: mod.kind,
      metadata: { name: 'blocker', namespace: klm().namespace },
      spec: {},
    });
    await klm().kube.mergePatch(API_VERSION, 'Kyma', name, klm().namespace, { spec: { modules: [] } });
    await eventually(
      'the blocked removal',
      async () => (await moduleStatus(klm(), name, mod.name))?.message?.includes('deletion blocked') || undefined,
    );
    await mod.channels({ regular: '1.1.0' });
    await new Promise((r) => setTimeout(r, 2000));
    await klm().kube.mergePatch(API_VERSION, 'Kyma', name, klm().namespace, {
      spec: { modules: [{ name: mod.name }] },
    });
    await eventually(
      `${mod.name} at 1.1.0 and Ready`,
      async () => {
        const s = await moduleStatus(klm(), name, mod.name);
        return s?.version === '1.1.0' && s.state === 'Ready' ? s : undefined;
      },
      90_000,
    );
    // Nobody followed the module on the channel when it was promoted: no rollout was started; the Kyma started one, and its policy moved it.
    expect(await kymaEvents(klm(), name, 'RolloutStarted')).toEqual([
      `module ${mod.name}: version 1.1.0 of channel regular had no rollout; this Kyma started it, and waits for it to admit the version`,
    ]);
    const rollout = await klm()
      .client.workflow.getHandle(
        rolloutWorkflowId({ namespace: klm().namespace, module: mod.name, channel: 'regular' }),
      )
      .query(rolloutProgress);
    expect(rollout).toMatchObject({ version: '1.1.0', phase: 'Completed' });
  }, 120_000);

  it('keeps serving a Kyma of several hundred modules: the search attribute stays within its limit and the details say so', async () => {
    const name = uniqueName('many');
    const unknown = Array.from({ length: 299 }, (_, i) => ({
      name: `no-such-module-with-a-long-name-${String(i).padStart(3, '0')}`,
    }));
    await klm().kube.create(
      kymaObject(klm().namespace, name, { channel: 'regular', modules: [{ name: 'counter' }, ...unknown] }),
    );
    await eventually(
      'counter Ready among 300 modules',
      async () => (await moduleStatus(klm(), name, 'counter'))?.state === 'Ready' || undefined,
    );
    const kyma = await getKyma(klm(), name);
    expect(kyma?.status?.modules).toHaveLength(300);
    expect(kyma?.status?.state).toBe('Error');
    const handle = klm().client.workflow.getHandle(kymaWorkflowId(klm().namespace, name));
    const d = await handle.describe();
    expect(d.status.name).toBe('RUNNING');
    const listed = d.typedSearchAttributes.get(SA.Modules) ?? [];
    expect(listed.length).toBeGreaterThan(10);
    expect(listed.length).toBeLessThan(300);
    expect(Buffer.byteLength(JSON.stringify(listed))).toBeLessThan(2048);
    // The 299 unknown modules are in Error: the list of them is cut the same way.
    const inError = d.typedSearchAttributes.get(SA.ModulesInError) ?? [];
    expect(inError.length).toBeGreaterThan(10);
    expect(inError.length).toBeLessThan(299);
    expect(Buffer.byteLength(JSON.stringify(inError))).toBeLessThan(2048);
    expect(d.typedSearchAttributes.get(SA.ModuleVersions)).toEqual(['counter@1.0.0']);
    // Still served: dropping the unknown modules makes it Ready.
    await klm().kube.mergePatch(API_VERSION, 'Kyma', name, klm().namespace, {
      spec: { modules: [{ name: 'counter' }] },
    });
    await kymaInState(klm(), name, 'Ready');
    expect((await handle.describe()).runId).toBe(d.runId);
  }, 120_000);

  it('notices a Kyma workflow that was terminated, says so on the Kyma, and its new run takes its modules over as they run', async () => {
    const name = uniqueName('ended');
    await klm().kube.create(kymaObject(klm().namespace, name, { channel: 'regular', modules: [{ name: 'counter' }] }));
    await kymaInState(klm(), name, 'Ready');
    const cr = await klm().kube.get('counter.example.io/v1alpha1', 'Counter', 'default', `${name}-system`);
    const kymaHandle = klm().client.workflow.getHandle(kymaWorkflowId(klm().namespace, name));
    await kymaHandle.terminate('stopped by an operator for the test');
    const condition = await eventually(
      'the Workflow condition',
      async () => (await getKyma(klm(), name))?.status?.conditions?.find((c) => c.type === 'Workflow'),
      30_000,
    );
    expect(condition.message).toMatch(
      /^a run of this Kyma's workflow \(\S+\) was terminated at \S+: stopped by an operator for the test; this run took over$/,
    );
    expect((await kymaHandle.describe()).status.name).toBe('RUNNING');
    expect(
      await eventually('the WorkflowEnded Event of the Kyma', async () =>
        (await kymaEvents(klm(), name, 'WorkflowEnded')).find((m) => m.startsWith('a run of')),
      ),
    ).toBe(condition.message);
    await eventually(
      'the new run to follow counter',
      async () => ((await installsFor(klm(), name, 'counter')) > 0 ? true : undefined),
      30_000,
    );
    await kymaInState(klm(), name, 'Ready');
    // Its module ran on: the default CR is the one it had, not made again.
    expect(
      (await klm().kube.get('counter.example.io/v1alpha1', 'Counter', 'default', `${name}-system`))?.metadata.uid,
    ).toBe(cr?.metadata.uid);
  }, 120_000);
});
