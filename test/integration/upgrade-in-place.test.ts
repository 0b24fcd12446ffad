// Upgrading in place from the first release, as docs/operator/upgrading.md says: a fleet run by the worker
// and bridge of v0.1.0 (a copy of the tag's tree, sharing this project's node_modules) gets this
// code's worker beside the old one, as a new Worker Deployment version. The new worker makes its
// version current; each Kyma's run continues as new onto it at its next wake-up (within one drift
// interval); the bridge is replaced in the middle, in no particular order; the old version drains
// and its worker stops. Nothing is re-created, no status flips, nothing is nondeterministic.
import { execFileSync } from 'node:child_process';
import { mkdtemp, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import proto from '@temporalio/proto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { manifestName } from '../../src/api/names';
import { API_VERSION, type KubeObject } from '../../src/api/shared';
import { describeDeployment } from '../../src/temporal/worker-deployment';
import { buildId } from '../../src/workers/build-id';
import { eventually, getKyma, kymaInState, kymaObject, kymaWorkflowId, startKlm, type Klm } from '../support/klm';
import type { VersionRow } from '../../src/cli/deployment-versions';
import { klmCli } from '../support/cli';
import { processEnv, startNode, type StartedProcess } from '../support/processes';
import { freePort, uniqueName } from '../support/stack';

/** The first release: its tag, and the commit it names (used when a clone lacks the tag). */
const RELEASE = { tag: 'v0.1.0', commit: 'fcc399fcfff85f786b8fe08a1f6e86d809a17935' };
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const UNHANDLED_COMMAND =
  proto.temporal.api.enums.v1.WorkflowTaskFailedCause.WORKFLOW_TASK_FAILED_CAUSE_UNHANDLED_COMMAND;
/** How often each Kyma's run wakes without news here: the bound on its move to the new version. */
const DRIFT_MS = 10_000;

/** What `klm deployment status -o json` prints. */
interface DeploymentStatus {
  current: string;
  versions: VersionRow[];
}

/** The tree of the release, sharing this project's node_modules. */
async function releaseTree(): Promise<string> {
  const git = (...args: string[]) => execFileSync('git', args, { cwd: ROOT, encoding: 'utf8' }).trim();
  let tagged: string | undefined;
  try {
    tagged = git('rev-parse', '--verify', '--quiet', `${RELEASE.tag}^{commit}`);
  } catch {
    // A clone without tags: the commit is in its history all the same.
  }
  if (tagged !== undefined) expect(tagged, `${RELEASE.tag} names the release commit`).toBe(RELEASE.commit);
  const dir = await mkdtemp(path.join(tmpdir(), 'klm-release-'));
  execFileSync('sh', ['-c', `git archive ${RELEASE.commit} | tar -x -C '${dir}'`], { cwd: ROOT });
  await symlink(path.join(ROOT, 'node_modules'), path.join(dir, 'node_modules'));
  return dir;
}

describe(`upgrading a running fleet from ${RELEASE.tag} to this code by worker deployment versions`, () => {
  let klm: Klm;
  const procs: StartedProcess[] = [];

  async function start(role: 'worker' | 'bridge', cwd: string, extra: NodeJS.ProcessEnv = {}): Promise<StartedProcess> {
    const env = processEnv(klm, {
      KLM_METRICS_PORT: String(await freePort()),
      KLM_BLOB_CACHE_DIR: await mkdtemp(path.join(tmpdir(), 'klm-blobs-')),
      KLM_KYMA_NAMESPACES: klm.namespace,
      ...extra,
    });
    const p = startNode(
      ['--import', 'tsx', role === 'worker' ? 'src/workers/main.ts' : 'src/starter/main.ts'],
      env,
      cwd,
    );
    procs.push(p);
    return p;
  }

  /** SIGTERM, as Kubernetes stops a pod; its exit code, or undefined when it did not end within `ms`. */
  const stop = (p: StartedProcess, ms = 30_000) =>
    new Promise<number | null | undefined>((resolve) => {
      if (p.proc.exitCode !== null) return resolve(p.proc.exitCode);
      const late = setTimeout(() => resolve(undefined), ms);
      p.proc.once('exit', (code) => {
        clearTimeout(late);
        resolve(code);
      });
      p.proc.kill('SIGTERM');
    });

  /** The build id each Kyma's current run is pinned to. */
  const versions = async (kymas: string[]) =>
    Promise.all(
      kymas.map(
        async (k) =>
          (await klm.client.workflow.getHandle(kymaWorkflowId(klm.namespace, k)).describe()).raw.workflowExecutionInfo
            ?.versioningInfo?.deploymentVersion?.buildId,
      ),
    );

  beforeAll(async () => {
    klm = await startKlm({ worker: false, bridge: false, settings: { driftIntervalMs: DRIFT_MS } });
  });
  afterAll(async () => {
    for (const p of procs) p.proc.kill('SIGKILL');
    await klm?.stop();
  });

  it('moves every Kyma to the new version within a drift interval: nothing re-created, no status flip, the old version drained and stopped', async () => {
    const release = await releaseTree();
    const oldWorker = await start('worker', release, { KLM_BUILD_ID: RELEASE.tag });
    const oldBridge = await start('bridge', release);
    const kymas = [uniqueName('a'), uniqueName('b'), uniqueName('c')];
    for (const [i, name] of kymas.entries())
      await klm.kube.create(
        kymaObject(klm.namespace, name, {
          channel: 'regular',
          modules: i === 2 ? [{ name: 'greeter' }] : [{ name: 'greeter' }, { name: 'counter' }],
        }),
      );
    for (const name of kymas) await kymaInState(klm, name, 'Ready', 120_000);
    expect(await versions(kymas)).toEqual(kymas.map(() => RELEASE.tag));

    const objects = kymas.flatMap((k, i) => [
      ['greeter.example.io/v1alpha1', 'Greeter', 'default', `${k}-system`],
      ['apps/v1', 'Deployment', 'greeter-manager', `${k}-system`],
      [API_VERSION, 'Manifest', manifestName(k, 'greeter'), klm.namespace],
      ...(i === 2
        ? []
        : [
            ['counter.example.io/v1alpha1', 'Counter', 'default', `${k}-system`],
            [API_VERSION, 'Manifest', manifestName(k, 'counter'), klm.namespace],
          ]),
    ]) as [string, string, string, string][];
    const identities = () =>
      Promise.all(
        objects.map(async ([v, kind, name, ns]) => (await klm.kube.get<KubeObject>(v, kind, name, ns))?.metadata.uid),
      );
    const before = await identities();
    expect(before.every(Boolean)).toBe(true);
    const statusBefore = await Promise.all(kymas.map(async (k) => (await getKyma(klm, k))?.status?.modules));

    // Every Kyma's state, looked at every half second from here to the end: none may leave Ready.
    const flips: string[] = [];
    let watching = true;
    const watch = (async () => {
      while (watching) {
        for (const k of kymas) {
          const state = (await getKyma(klm, k))?.status?.state;
          if (state !== 'Ready') flips.push(`${k}: ${state}`);
        }
        await new Promise((r) => setTimeout(r, 500));
      }
    })();

    // The bridge first (the order does not matter), then this code's worker beside the old one.
    expect(await stop(oldBridge), 'the old bridge stops on SIGTERM').toBe(0);
    await start('bridge', ROOT);
    const newWorker = await start('worker', ROOT);
    const current = buildId({ settings: klm.settings });
    const deploymentNow = () => describeDeployment(klm.client.connection, klm.client.options.namespace, klm.taskQueue);
    await eventually(
      `the new worker to make ${current} current`,
      async () => ((await deploymentNow())?.current === current ? true : undefined),
      120_000,
    ).catch((err: Error) => {
      throw new Error(`${err.message}; the new worker said: ${newWorker.out().slice(-3000)}`);
    });
    // Every Kyma moves within a drift interval of the switch (and a few seconds for the tasks of a loaded machine).
    let seen: (string | null | undefined)[] = [];
    await eventually(
      `every Kyma on version ${current}`,
      async () => {
        seen = await versions(kymas);
        return seen.every((v) => v === current) ? true : undefined;
      },
      DRIFT_MS + 30_000,
    ).catch((err: Error) => {
      throw new Error(
        `${err.message} (since the switch); the Kymas' versions ${seen.join(', ')}; the new worker said: ${newWorker.out().slice(-3000)}`,
      );
    });

    const deployment = await eventually(
      `version ${RELEASE.tag} drained`,
      async () => {
        const d = await deploymentNow();
        return d?.versions.find((v) => v.buildId === RELEASE.tag)?.drained ? d : undefined;
      },
      60_000,
    );
    expect(deployment.current).toBe(current);
    // What an operator looks at before stopping the old workers (visibility follows within seconds).
    const oldRow = await eventually(
      `klm deployment status to show ${RELEASE.tag} drained with no run pinned to it`,
      async () => {
        const status = await klmCli(['deployment', 'status', '-o', 'json'], processEnv(klm));
        expect(status.code, status.stderr).toBe(0);
        const view = JSON.parse(status.stdout) as DeploymentStatus;
        expect(view.current).toBe(current);
        const row = view.versions.find((v) => v.buildId === RELEASE.tag);
        return row?.pinnedRuns === 0 ? row : undefined;
      },
      30_000,
    ).catch(async (err: Error) => {
      const open: string[] = [];
      for await (const wf of klm.client.workflow.list({
        query:
          `TemporalWorkerDeploymentVersion = '${klm.taskQueue}:${RELEASE.tag}' AND ExecutionStatus = 'Running' ` +
          `AND TemporalWorkflowVersioningBehavior = 'Pinned'`,
      }))
        open.push(`${wf.workflowId} ${wf.runId} ${wf.type}`);
      throw new Error(`${err.message}; open: ${open.join('; ')}`);
    });
    expect(oldRow).toEqual({ buildId: RELEASE.tag, status: 'drained', drained: true, pinnedRuns: 0 });
    expect(await stop(oldWorker), 'the old worker stops on SIGTERM').toBe(0);

    watching = false;
    await watch;
    expect(flips, 'a Kyma that left Ready during the move').toEqual([]);
    expect(await identities(), 'no object re-created').toEqual(before);
    expect(await Promise.all(kymas.map(async (k) => (await getKyma(klm, k))?.status?.modules))).toEqual(statusBefore);

    // A change after the move reaches the modules through the new code.
    await klm.kube.mergePatch('greeter.example.io/v1alpha1', 'Greeter', 'default', `${kymas[0]}-system`, {
      spec: { simulateState: 'Error' },
    });
    await kymaInState(klm, kymas[0]!, 'Error');
    await klm.kube.mergePatch('greeter.example.io/v1alpha1', 'Greeter', 'default', `${kymas[0]}-system`, {
      spec: { simulateState: null },
    });
    await kymaInState(klm, kymas[0]!, 'Ready');

    // No run of any Kyma, old or new, had a workflow task fail but for a signal that came while a
    // task continued as new (UnhandledCommand: the server has the task run again with the signal).
    // Nondeterminism would fail tasks with another cause.
    for (const k of kymas) {
      const runs: string[] = [];
      for await (const wf of klm.client.workflow.list({ query: `WorkflowId = '${kymaWorkflowId(klm.namespace, k)}'` }))
        runs.push(wf.runId);
      expect(runs.length, `${k}: runs before and after the move`).toBeGreaterThanOrEqual(2);
      for (const runId of runs) {
        const { events } = await klm.client.workflow.getHandle(kymaWorkflowId(klm.namespace, k), runId).fetchHistory();
        const failed = (events ?? []).filter(
          (e) => e.workflowTaskFailedEventAttributes && e.workflowTaskFailedEventAttributes.cause !== UNHANDLED_COMMAND,
        );
        expect(
          failed.map((e) => e.workflowTaskFailedEventAttributes?.failure?.message),
          `${k} run ${runId}`,
        ).toEqual([]);
      }
    }
    expect(newWorker.proc.exitCode).toBeNull();
  }, 480_000);
});
