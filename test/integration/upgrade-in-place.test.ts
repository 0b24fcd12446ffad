// Upgrading in place: a fleet run by the previous shape of the workflows (a module workflow per
// Kyma × module, started by the Kyma's workflow) is taken over by this code's worker and bridge
// without reinstalling a module, re-creating a default CR, deleting an object or losing a
// status. The previous code runs from a copy of the commit before the change (git archive),
// as its own worker and bridge processes; then they stop and this code's take their place.
import { execFileSync } from 'node:child_process';
import { mkdtemp, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { manifestName } from '../../src/api/names';
import { API_VERSION, type KubeObject } from '../../src/api/shared';
import { eventually, getKyma, kymaInState, kymaObject, kymaWorkflowId, startKlm, type Klm } from '../support/klm';
import { testModule } from '../support/modules';
import { processEnv, startNode, type StartedProcess } from '../support/processes';
import { freePort, stackInfo, uniqueName } from '../support/stack';

/** The last commit whose Kyma workflows started a module workflow per module. */
const PREVIOUS_SHAPE = '9e74a117e72ccfa68629d5c31075a023e974b7f3';
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const HISTORIES = fileURLToPath(new URL('../replay/histories/', import.meta.url));

/** The source tree of `commit`, sharing this project's node_modules. */
async function sourceOf(commit: string): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), 'klm-previous-'));
  execFileSync('sh', ['-c', `git archive ${commit} | tar -x -C '${dir}'`], { cwd: ROOT });
  await symlink(path.join(ROOT, 'node_modules'), path.join(dir, 'node_modules'));
  return dir;
}

describe('upgrading a running fleet from module workflows to one workflow per Kyma', () => {
  let klm: Klm;
  const procs: StartedProcess[] = [];

  async function startProducts(cwd: string): Promise<StartedProcess[]> {
    const env = (extra: NodeJS.ProcessEnv) =>
      processEnv(klm.taskQueue, {
        KLM_DEFAULT_NAMESPACE: '{kyma}-system',
        KLM_CRD_ESTABLISHED_TIMEOUT: '20s',
        ...extra,
      });
    const started = [
      startNode(
        ['--import', 'tsx', 'src/workers/main.ts'],
        env({
          KLM_BLOB_CACHE_DIR: await mkdtemp(path.join(tmpdir(), 'klm-blobs-')),
          KLM_METRICS_PORT: String(await freePort()),
        }),
        cwd,
      ),
      startNode(['--import', 'tsx', 'src/starter/main.ts'], env({ KLM_METRICS_PORT: String(await freePort()) }), cwd),
    ];
    procs.push(...started);
    return started;
  }

  /** SIGTERM, as a rolling update stops a pod; SIGKILL after its grace period (10 s here). */
  async function stop(ps: StartedProcess[]): Promise<void> {
    await Promise.all(
      ps.map(
        (p) =>
          new Promise((r) => {
            if (p.proc.exitCode !== null) return r(undefined);
            const kill = setTimeout(() => p.proc.kill('SIGKILL'), 10_000);
            p.proc.once('exit', () => {
              clearTimeout(kill);
              r(undefined);
            });
            p.proc.kill('SIGTERM');
          }),
      ),
    );
  }

  const running = async (type: string): Promise<string[]> => {
    const ids: string[] = [];
    for await (const wf of klm.client.workflow.list({
      query: `TaskQueue = '${klm.taskQueue}' AND WorkflowType = '${type}' AND ExecutionStatus = 'Running'`,
    }))
      ids.push(wf.workflowId);
    return ids.sort();
  };

  beforeAll(async () => {
    klm = await startKlm({ worker: false, bridge: false });
  });
  afterAll(async () => {
    for (const p of procs) p.proc.kill('SIGKILL');
    await klm?.stop();
  });

  it(
    'takes every module over as it runs: nothing reinstalled, re-created or deleted, no status ' +
      'lost, and changes after it still reach the modules',
    async () => {
      const previous = await startProducts(await sourceOf(PREVIOUS_SHAPE));
      const mod = await testModule(klm);
      await mod.publish('1.0.0');
      await mod.channels({ regular: '1.0.0' });
      const [steady, leaving] = [uniqueName('steady'), uniqueName('leaving')];
      await klm.kube.create(
        kymaObject(klm.namespace, steady, { channel: 'regular', modules: [{ name: 'greeter' }, { name: 'counter' }] }),
      );
      await klm.kube.create(
        kymaObject(klm.namespace, leaving, { channel: 'regular', modules: [{ name: mod.name }, { name: 'counter' }] }),
      );
      for (const n of [steady, leaving]) await kymaInState(klm, n, 'Ready', 120_000);
      // A removal under way at the upgrade: a CR of the user's blocks it.
      await klm.kube.create({
        apiVersion: mod.apiVersion,
        kind: mod.kind,
        metadata: { name: 'blocker', namespace: klm.namespace },
        spec: {},
      });
      await klm.kube.mergePatch(API_VERSION, 'Kyma', leaving, klm.namespace, {
        spec: { modules: [{ name: 'counter' }] },
      });
      await eventually(
        'the blocked removal',
        async () =>
          (await getKyma(klm, leaving))?.status?.modules?.find(
            (m) => m.name === mod.name && m.message?.includes('deletion blocked'),
          ),
        60_000,
      );
      expect(await running('moduleWorkflow')).toHaveLength(4);

      const objects = [
        ['greeter.example.io/v1alpha1', 'Greeter', 'default', `${steady}-system`],
        ['counter.example.io/v1alpha1', 'Counter', 'default', `${steady}-system`],
        ['apps/v1', 'Deployment', 'greeter-manager', `${steady}-system`],
        ['apps/v1', 'Deployment', 'counter-manager', `${steady}-system`],
        [API_VERSION, 'Manifest', manifestName(steady, 'greeter'), klm.namespace],
        [API_VERSION, 'Manifest', manifestName(leaving, mod.name), klm.namespace],
      ] as const;
      const identities = async () =>
        Promise.all(
          objects.map(
            async ([apiVersion, kind, name, namespace]) =>
              (await klm.kube.get<KubeObject>(apiVersion, kind, name, namespace))?.metadata.uid,
          ),
        );
      const before = await identities();
      expect(before.every(Boolean)).toBe(true);
      const statusBefore = (await getKyma(klm, steady))?.status;

      await stop(previous);
      await startProducts(ROOT);

      // Every module workflow hands its module over to its Kyma's workflow and completes.
      await eventually(
        'no module workflow left running',
        async () => ((await running('moduleWorkflow')).length === 0 ? true : undefined),
        120_000,
      );
      const ended: string[] = [];
      for await (const wf of klm.client.workflow.list({
        query: `TaskQueue = '${klm.taskQueue}' AND WorkflowType = 'moduleWorkflow' AND ExecutionStatus != 'Completed'`,
      }))
        ended.push(`${wf.workflowId}: ${wf.status.name}`);
      expect(ended).toEqual([]);
      expect(await running('kymaWorkflow')).toEqual(
        [kymaWorkflowId(klm.namespace, leaving), kymaWorkflowId(klm.namespace, steady)].sort(),
      );

      // Nothing was made again, nothing lost.
      expect(await identities()).toEqual(before);
      const statusAfter = (await getKyma(klm, steady))?.status;
      expect(statusAfter?.state).toBe('Ready');
      expect(statusAfter?.modules).toEqual(statusBefore?.modules);
      const installsAfter = (
        await klm.client.workflow.getHandle(kymaWorkflowId(klm.namespace, steady)).fetchHistory()
      ).events?.filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'installModule').length;
      expect(installsAfter, 'installs by the new run').toBe(0);

      // The modules follow their CRs through the Kyma's workflow now ...
      await klm.kube.mergePatch('greeter.example.io/v1alpha1', 'Greeter', 'default', `${steady}-system`, {
        spec: { simulateState: 'Error' },
      });
      await kymaInState(klm, steady, 'Error');
      await klm.kube.mergePatch('greeter.example.io/v1alpha1', 'Greeter', 'default', `${steady}-system`, {
        spec: { simulateState: null },
      });
      await kymaInState(klm, steady, 'Ready');
      // ... and the removal under way ends once the user's CR goes.
      await klm.kube.delete(mod.apiVersion, mod.kind, 'blocker', klm.namespace);
      await eventually(
        `${mod.name} to leave ${leaving}`,
        async () => {
          const k = await getKyma(klm, leaving);
          return k?.status?.state === 'Ready' && !k.status.modules?.some((m) => m.name === mod.name) ? true : undefined;
        },
        60_000,
      );
      expect(
        await klm.kube.get(API_VERSION, 'Manifest', manifestName(leaving, mod.name), klm.namespace),
      ).toBeUndefined();

      if (process.env.KLM_RECORD_HISTORIES === '1') {
        const { tools, temporalAddress, temporalNamespace } = stackInfo();
        for (const [kyma, file] of [
          [steady, 'kyma-workflow-takeover'],
          [leaving, 'kyma-workflow-takeover-removal'],
        ] as const) {
          const json = execFileSync(
            tools.temporal,
            [
              'workflow',
              'show',
              '--workflow-id',
              kymaWorkflowId(klm.namespace, kyma),
              '--address',
              temporalAddress,
              '--namespace',
              temporalNamespace,
              '--output',
              'json',
            ],
            { encoding: 'utf8' },
          );
          await writeFile(`${HISTORIES}${file}.json`, json);
        }
      }
    },
    420_000,
  );
});
