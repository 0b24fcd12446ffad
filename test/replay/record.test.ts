// Records workflow histories for the replay tests. Runs only with KLM_RECORD_HISTORIES=1:
//   KLM_RECORD_HISTORIES=1 npx vitest run test/replay/record.test.ts
// then commit test/replay/histories/. Each recording covers one scenario's command sequence, of
// the one workflow shape there is (docs/contributor/workflow-versioning.md): `kyma-workflow-*.json` Kyma
// workflows, `rollout-workflow-*.json` rollouts; `*-continued.json` a run that continued as new
// for its history's length, `*-carried.json` the run after it, which goes on from what was carried.
import { execFileSync } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { kubeconfigSecret } from '../../bench/fleet';
import type { Kyma } from '../../src/api/kyma';
import { API_VERSION, type KubeObject } from '../../src/api/shared';
import { pkiIn } from '../../src/localstack/pki';
import { kymaWorkflowId } from '../../src/api/names';
import {
  abortRollout,
  pauseRollout,
  promoted,
  resumeRollout,
  ROLLOUT_WORKFLOW,
  rolloutPlanQuery,
  rolloutProgress,
  rolloutStart,
  rolloutWorkflowId,
  type RolloutWorkflowInput,
} from '../../src/contract/rollout';
import { moduleReleaseMeta } from '../../src/publish/module';
import {
  createKymaWithBrokenSecret,
  eventually,
  fixKubeconfigSecret,
  getKyma,
  kymaInState,
  kymaObject,
  useKlm,
} from '../support/klm';
import { testModule } from '../support/modules';
import { stackInfo, uniqueName } from '../support/stack';
import { startOwnCluster, type OwnCluster } from '../support/target-cluster';

const DIR = fileURLToPath(new URL('./histories/', import.meta.url));

/** The history as the Temporal CLI exports it (the JSON form historyFromJSON reads): of the workflow's latest run, or of `runId`. */
async function saveHistory(workflowId: string, file: string, runId?: string): Promise<void> {
  const { tools, temporalAddress, temporalNamespace } = stackInfo();
  const json = execFileSync(
    tools.temporal,
    [
      'workflow',
      'show',
      '--workflow-id',
      workflowId,
      ...(runId ? ['--run-id', runId] : []),
      '--address',
      temporalAddress,
      '--namespace',
      temporalNamespace,
      '--output',
      'json',
    ],
    { encoding: 'utf8' },
  );
  await writeFile(`${DIR}${file}.json`, json);
}

const save = saveHistory;

describe.runIf(process.env.KLM_RECORD_HISTORIES === '1')('recording histories', () => {
  const klm = useKlm();

  /**
   * A Kyma with these modules installed, its greeter CR put in Error and back to Ready;
   * `before` runs first (to start the Kyma's workflow a way of its own, say).
   */
  async function installWithCrErrorAndRecovery(
    modules: { name: string }[],
    before?: (name: string) => Promise<unknown>,
  ): Promise<string> {
    const name = uniqueName('kyma');
    await before?.(name);
    await klm().kube.create(kymaObject(klm().namespace, name, { channel: 'regular', modules }));
    await kymaInState(klm(), name, 'Ready');
    const cr = ['greeter.example.io/v1alpha1', 'Greeter', 'default', `${name}-system`] as const;
    await klm().kube.mergePatch(...cr, { spec: { simulateState: 'Error' } });
    await kymaInState(klm(), name, 'Error');
    await klm().kube.mergePatch(...cr, { spec: { simulateState: null } });
    await kymaInState(klm(), name, 'Ready');
    return name;
  }

  it('install, CR error and recovery, channel switch, resolution failure', async () => {
    const name = await installWithCrErrorAndRecovery([{ name: 'greeter' }, { name: 'counter' }]);
    await klm().kube.mergePatch('operator.kyma-project.io/v1beta2', 'Kyma', name, klm().namespace, {
      spec: { channel: 'fast' },
    });
    await kymaInState(klm(), name, 'Ready');
    await klm().kube.mergePatch('operator.kyma-project.io/v1beta2', 'Kyma', name, klm().namespace, {
      spec: { modules: [{ name: 'greeter' }, { name: 'counter' }, { name: 'nosuch' }] },
    });
    await kymaInState(klm(), name, 'Error');
    await save(kymaWorkflowId(klm().namespace, name), 'kyma-workflow-install');
  });

  it('upgrade with prune, blocked removal, Kyma deletion', async () => {
    const [mod, other] = [await testModule(klm()), await testModule(klm())];
    await mod.publish('1.0.0', 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: pruned\n');
    await mod.publish('2.0.0');
    await mod.channels({ regular: '1.0.0' });
    await other.publish('1.0.0');
    await other.channels({ regular: '1.0.0' });
    const name = uniqueName('kyma');
    await klm().kube.create(
      kymaObject(klm().namespace, name, { channel: 'regular', modules: [{ name: mod.name }, { name: other.name }] }),
    );
    await kymaInState(klm(), name, 'Ready');
    await mod.channels({ regular: '2.0.0' });
    await eventually('the upgrade', async () =>
      (await getKyma(klm(), name))?.status?.modules?.find(
        (m) => m.name === mod.name && m.version === '2.0.0' && m.state === 'Ready',
      ),
    );
    await klm().kube.create({
      apiVersion: other.apiVersion,
      kind: other.kind,
      metadata: { name: 'blocker', namespace: klm().namespace },
      spec: {},
    });
    await klm().kube.mergePatch('operator.kyma-project.io/v1beta2', 'Kyma', name, klm().namespace, {
      spec: { modules: [{ name: mod.name }] },
    });
    await eventually('the removal to be blocked', async () =>
      (await getKyma(klm(), name))?.status?.modules?.find(
        (m) => m.name === other.name && m.state === 'Warning' && m.message?.includes('blocker'),
      ),
    );
    await klm().kube.delete(other.apiVersion, other.kind, 'blocker', klm().namespace);
    await eventually(
      'the removal',
      async () => !(await getKyma(klm(), name))?.status?.modules?.some((m) => m.name === other.name) || undefined,
    );
    await klm().kube.delete('operator.kyma-project.io/v1beta2', 'Kyma', name, klm().namespace);
    await eventually('the Kyma to be gone', async () => (await getKyma(klm(), name)) === undefined || undefined);
    await save(kymaWorkflowId(klm().namespace, name), 'kyma-workflow-deletion');
  });

  it('unmanage and manage again, Manifest pause, skip-reconciliation on the Kyma', async () => {
    const mod = await testModule(klm());
    await mod.publish('1.0.0');
    await mod.channels({ regular: '1.0.0' });
    const name = uniqueName('kyma');
    const kymaPatch = (patch: unknown) =>
      klm().kube.mergePatch('operator.kyma-project.io/v1beta2', 'Kyma', name, klm().namespace, patch);
    const moduleState = async (state: string) =>
      eventually(`${mod.name} ${state}`, async () =>
        (await getKyma(klm(), name))?.status?.modules?.find((m) => m.name === mod.name && m.state === state),
      );
    await klm().kube.create(kymaObject(klm().namespace, name, { channel: 'regular', modules: [{ name: mod.name }] }));
    await kymaInState(klm(), name, 'Ready');
    await kymaPatch({ spec: { modules: [{ name: mod.name, managed: false }] } });
    await moduleState('Unmanaged');
    await kymaPatch({ spec: { modules: [{ name: mod.name, managed: true }] } });
    await moduleState('Ready');
    await klm().kube.mergePatch(
      'operator.kyma-project.io/v1beta2',
      'Manifest',
      `${name}-${mod.name}`,
      klm().namespace,
      { metadata: { labels: { 'operator.kyma-project.io/skip-reconciliation': 'true' } } },
    );
    await new Promise((r) => setTimeout(r, 1500));
    await klm().kube.mergePatch(
      'operator.kyma-project.io/v1beta2',
      'Manifest',
      `${name}-${mod.name}`,
      klm().namespace,
      { metadata: { labels: { 'operator.kyma-project.io/skip-reconciliation': null } } },
    );
    await kymaPatch({ metadata: { labels: { 'operator.kyma-project.io/skip-reconciliation': 'true' } } });
    await new Promise((r) => setTimeout(r, 1500));
    await kymaPatch({ metadata: { labels: { 'operator.kyma-project.io/skip-reconciliation': null } } });
    await kymaInState(klm(), name, 'Ready');
    await save(kymaWorkflowId(klm().namespace, name), 'kyma-workflow-unmanage-pause');
  });
});

describe.runIf(process.env.KLM_RECORD_HISTORIES === '1')(
  'recording histories of removals stopped and Kymas gone',
  () => {
    const klm = useKlm();

    it('a blocked removal stopped by wanting the module again, then the Kyma deleted without its finalizer', async () => {
      const mod = await testModule(klm());
      await mod.publish('1.0.0');
      await mod.publish('1.1.0');
      await mod.channels({ regular: '1.0.0', fast: '1.1.0' });
      const name = uniqueName('kyma');
      const kymaPatch = (patch: unknown) =>
        klm().kube.mergePatch('operator.kyma-project.io/v1beta2', 'Kyma', name, klm().namespace, patch);
      await klm().kube.create(kymaObject(klm().namespace, name, { channel: 'regular', modules: [{ name: mod.name }] }));
      await kymaInState(klm(), name, 'Ready');
      await klm().kube.create({
        apiVersion: mod.apiVersion,
        kind: mod.kind,
        metadata: { name: 'blocker', namespace: klm().namespace },
        spec: {},
      });
      await kymaPatch({ spec: { modules: [] } });
      await eventually('the removal to be blocked', async () =>
        (await getKyma(klm(), name))?.status?.modules?.find(
          (m) => m.name === mod.name && m.message?.includes('blocker'),
        ),
      );
      await kymaPatch({ spec: { modules: [{ name: mod.name, channel: 'fast' }] } });
      await eventually('1.1.0 to be Ready', async () =>
        (await getKyma(klm(), name))?.status?.modules?.find((m) => m.version === '1.1.0' && m.state === 'Ready'),
      );
      await kymaPatch({ metadata: { finalizers: null } });
      await klm().kube.delete('operator.kyma-project.io/v1beta2', 'Kyma', name, klm().namespace);
      await eventually(
        'the Kyma workflow to end',
        async () =>
          (await klm().client.workflow.getHandle(kymaWorkflowId(klm().namespace, name)).describe()).status.name ===
            'COMPLETED' || undefined,
      );
      await save(kymaWorkflowId(klm().namespace, name), 'kyma-workflow-gone');
    });
  },
);

describe.runIf(process.env.KLM_RECORD_HISTORIES === '1')('recording histories with a short install retry', () => {
  const klm = useKlm({ settings: { installRetryMs: 1000 } });

  it('a failed install retried on its timer until a fixed Secret lets it through', async () => {
    const name = uniqueName('kyma');
    await createKymaWithBrokenSecret(klm(), name, [{ name: 'greeter' }]);
    await kymaInState(klm(), name, 'Error');
    await new Promise((r) => setTimeout(r, 2500));
    await fixKubeconfigSecret(klm(), name);
    await kymaInState(klm(), name, 'Ready', 60_000);
    await save(kymaWorkflowId(klm().namespace, name), 'kyma-workflow-install-retry');
  });
});

describe.runIf(process.env.KLM_RECORD_HISTORIES === '1')('recording histories of rollouts', () => {
  const klm = useKlm({ rolloutPolicy: { default: 'waves: [1]\nsoak: 1s\nfailureBudget: 0' } });

  it('a promotion held by the gate until its rollout admits it, in two waves with a soak, a pause and a resume', async () => {
    const mod = await testModule(klm());
    await mod.publish('1.0.0');
    await mod.publish('1.1.0');
    await mod.channels({ regular: '1.0.0' });
    const [first, second] = [uniqueName('kyma-a'), uniqueName('kyma-b')];
    for (const name of [first, second])
      await klm().kube.create(kymaObject(klm().namespace, name, { channel: 'regular', modules: [{ name: mod.name }] }));
    for (const name of [first, second]) await kymaInState(klm(), name, 'Ready');
    await mod.channels({ regular: '1.1.0' });
    const rollout = klm().client.workflow.getHandle(
      rolloutWorkflowId({ namespace: klm().namespace, module: mod.name, channel: 'regular' }),
    );
    await eventually(
      'the first wave to soak',
      async () => (await rollout.query(rolloutProgress).catch(() => undefined))?.phase === 'Soaking' || undefined,
    );
    await rollout.executeUpdate(pauseRollout, { args: [{ reason: 'recording' }] });
    await rollout.executeUpdate(resumeRollout, { args: [{ reason: 'recorded' }] });
    await eventually(
      'the rollout to complete',
      async () => (await rollout.query(rolloutProgress)).phase === 'Completed' || undefined,
      120_000,
    );
    for (const name of [first, second])
      await eventually(`${name} at 1.1.0`, async () =>
        (await getKyma(klm(), name))?.status?.modules?.find((m) => m.version === '1.1.0' && m.state === 'Ready'),
      );
    await save(kymaWorkflowId(klm().namespace, second), 'kyma-workflow-rollout');
    await save(rollout.workflowId, 'rollout-workflow-waves');
  });

  it('a rollout that continues as new on its way (a history threshold of 40 events), paused in one run and resumed in the next', async () => {
    const mod = await testModule(klm());
    await mod.publish('1.0.0');
    await mod.publish('1.1.0');
    await mod.channels({ regular: '1.0.0' });
    const kymas = [uniqueName('kyma-a'), uniqueName('kyma-b'), uniqueName('kyma-c')];
    for (const name of kymas)
      await klm().kube.create(kymaObject(klm().namespace, name, { channel: 'regular', modules: [{ name: mod.name }] }));
    for (const name of kymas) await kymaInState(klm(), name, 'Ready');
    const start = rolloutStart(
      { namespace: klm().namespace, module: mod.name, channel: 'regular' },
      klm().taskQueue,
      klm().settings.defaultNamespace,
    );
    const input: RolloutWorkflowInput = { ...start.args[0], continueAsNewAfterEvents: 40 };
    const first = await klm().client.workflow.start(ROLLOUT_WORKFLOW, { ...start, args: [input] });
    const rollout = klm().client.workflow.getHandle(first.workflowId);
    await mod.channels({ regular: '1.1.0' });
    await eventually('the plan', async () => (await rollout.query(rolloutPlanQuery).catch(() => null)) ?? undefined);
    await rollout.executeUpdate(pauseRollout, { args: [{ reason: 'recording' }] });
    // The bridge relisting (the version rolling promoted again) lengthens the history until the run continues as new.
    await eventually('the first run to continue as new', async () => {
      await rollout.signal(promoted, { version: '1.1.0' });
      return (await rollout.describe()).runId !== first.firstExecutionRunId;
    });
    const second = (await rollout.describe()).runId;
    await rollout.executeUpdate(resumeRollout, { args: [{ reason: 'recorded' }] });
    await eventually(
      'the rollout to complete',
      async () => (await rollout.query(rolloutProgress)).phase === 'Completed' || undefined,
      120_000,
    );
    for (const name of kymas)
      await eventually(`${name} at 1.1.0`, async () =>
        (await getKyma(klm(), name))?.status?.modules?.find((m) => m.version === '1.1.0' && m.state === 'Ready'),
      );
    await save(first.workflowId, 'rollout-workflow-continued', first.firstExecutionRunId);
    await save(first.workflowId, 'rollout-workflow-carried', second);
  });
});

describe.runIf(process.env.KLM_RECORD_HISTORIES === '1')('recording histories of the runtime side', () => {
  const klm = useKlm({ settings: { driftIntervalMs: 10 * 60_000 } });
  let cluster: OwnCluster;
  beforeAll(async () => {
    cluster = await startOwnCluster();
  });
  afterAll(async () => {
    await cluster?.stop();
  });

  it('a runtime Kyma created, edited by its users, its catalog changed, then the Kyma deleted with its runtime side', async () => {
    const withoutWorkload = (manifest: string) =>
      manifest
        .split(/^---$/m)
        .filter((doc) => !/^kind: Deployment/m.test(doc))
        .join('---');
    const [a, b] = [await testModule(klm()), await testModule(klm())];
    for (const m of [a, b]) {
      cluster.manager.watch(m.apiVersion, m.kind);
      await m.publish('1.0.0', undefined, withoutWorkload);
      await m.channels({ regular: '1.0.0' });
    }
    const name = uniqueName('kyma');
    const pki = pkiIn(stackInfo().pkiDir);
    await klm().kube.create(
      kubeconfigSecret(klm().namespace, name, await cluster.certKubeconfig(pki.adminCert, pki.adminKey)),
    );
    await klm().kube.create(kymaObject(klm().namespace, name, { channel: 'regular', modules: [{ name: a.name }] }));
    const runtime = () => cluster.client.get<Kyma & KubeObject>(API_VERSION, 'Kyma', 'default', 'kyma-system');
    await eventually(
      'the runtime Kyma Ready',
      async () => (await runtime())?.status?.state === 'Ready' || undefined,
      90_000,
    );
    await cluster.client.mergePatch(API_VERSION, 'Kyma', 'default', 'kyma-system', {
      spec: { modules: [{ name: a.name }, { name: b.name }] },
    });
    await eventually('the added module Ready', async () =>
      (await runtime())?.status?.modules?.find((m) => m.name === b.name && m.state === 'Ready'),
    );
    await a.publish('1.1.0', undefined, withoutWorkload);
    await eventually(
      'the new template in the runtime',
      async () =>
        (await cluster.client.get(API_VERSION, 'ModuleTemplate', `${a.name}-1.1.0`, 'kyma-system')) !== undefined ||
        undefined,
    );
    await klm().kube.delete(API_VERSION, 'Kyma', name, klm().namespace);
    await eventually(
      'the Kyma to be gone',
      async () => (await getKyma(klm(), name)) === undefined || undefined,
      90_000,
    );
    await save(kymaWorkflowId(klm().namespace, name), 'kyma-workflow-runtime');
  }, 240_000);
});

describe.runIf(process.env.KLM_RECORD_HISTORIES === '1')('recording histories of truthful status', () => {
  const klm = useKlm({
    settings: { managerAvailableTimeoutMs: 12_000 },
    rolloutPolicy: { default: 'waves: [1]\nsoak: 0s\nfailureBudget: 0' },
    endedWorkflowsPollMs: 1_000,
  });

  it('a canary whose new manager cannot be scheduled halts its rollout; a held Kyma joins it and hears of the abort', async () => {
    const [canary, other] = [uniqueName('canary'), uniqueName('other')];
    await klm().kube.create({
      ...kymaObject(klm().namespace, canary, { channel: 'regular', modules: [{ name: 'faulty' }] }),
      metadata: {
        name: canary,
        namespace: klm().namespace,
        labels: { 'operator.kyma-project.io/rollout-priority': '1' },
      },
    });
    await klm().kube.create(kymaObject(klm().namespace, other, { channel: 'regular', modules: [{ name: 'faulty' }] }));
    for (const name of [canary, other]) await kymaInState(klm(), name, 'Ready');
    await klm().kube.apply(
      moduleReleaseMeta('faulty', 'kyma-project.io/module/faulty', klm().namespace, { regular: '2.0.0' }),
    );
    const rollout = klm().client.workflow.getHandle(
      rolloutWorkflowId({ namespace: klm().namespace, module: 'faulty', channel: 'regular' }),
    );
    await eventually(
      'the rollout to halt',
      async () => (await rollout.query(rolloutProgress).catch(() => undefined))?.phase === 'Halted' || undefined,
      90_000,
    );
    await klm().kube.mergePatch(API_VERSION, 'Kyma', other, klm().namespace, {
      metadata: { labels: { touched: 'yes' } },
    });
    await eventually(
      'the other Kyma to wait for the rollout',
      async () =>
        (await getKyma(klm(), other))?.status?.modules?.[0]?.message?.includes('waits for its rollout') || undefined,
    );
    await rollout.executeUpdate(abortRollout, { args: [{ reason: 'recording' }] });
    await eventually(
      'the other Kyma to hear of the abort',
      async () => (await getKyma(klm(), other))?.status?.modules?.[0]?.message?.includes('aborted') || undefined,
    );
    await save(kymaWorkflowId(klm().namespace, other), 'kyma-workflow-rollout-joined');
    await save(kymaWorkflowId(klm().namespace, canary), 'kyma-workflow-manager-rollout');
  }, 240_000);
});

describe.runIf(process.env.KLM_RECORD_HISTORIES === '1')('recording a Kyma that continues as new', () => {
  const klm = useKlm({ settings: { maxHistoryEvents: 60 } });

  it('five modules installed, one removed, the Kyma continuing as new on its way', async () => {
    const mods = await Promise.all(Array.from({ length: 3 }, () => testModule(klm())));
    for (const m of mods) {
      await m.publish('1.0.0');
      await m.channels({ regular: '1.0.0' });
    }
    const name = uniqueName('kyma');
    const modules = [...mods.map((m) => ({ name: m.name })), { name: 'greeter' }, { name: 'counter' }];
    await klm().kube.create(kymaObject(klm().namespace, name, { channel: 'regular', modules }));
    await kymaInState(klm(), name, 'Ready');
    await klm().kube.mergePatch(API_VERSION, 'Kyma', name, klm().namespace, { spec: { modules: modules.slice(1) } });
    await eventually(
      'the removal',
      async () => (await getKyma(klm(), name))?.status?.modules?.length === 4 || undefined,
    );
    // Visibility lags a little behind the continue-as-new.
    const runs = await eventually('a run that continued as new', async () => {
      const ids: string[] = [];
      for await (const wf of klm().client.workflow.list({
        query: `WorkflowId = '${kymaWorkflowId(klm().namespace, name)}' AND ExecutionStatus = 'ContinuedAsNew'`,
      }))
        ids.push(wf.runId);
      return ids.length ? ids : undefined;
    });
    await save(kymaWorkflowId(klm().namespace, name), 'kyma-workflow-continued', runs[runs.length - 1]);
    await save(kymaWorkflowId(klm().namespace, name), 'kyma-workflow-carried');
  }, 240_000);
});
