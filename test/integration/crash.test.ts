import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getKyma, kymaInState, kymaObject, startKlm, type Klm } from '../support/klm';
import { stackInfo, uniqueName } from '../support/stack';

// node itself (with tsx as a loader), so that SIGKILL hits the worker and not a wrapper.
const NODE_ARGS = ['--import', 'tsx', 'src/workers/main.ts'];

function startWorkerProcess(klm: Klm, cacheDir: string): ChildProcess {
  const info = stackInfo();
  return spawn(process.execPath, NODE_ARGS, {
    env: { ...process.env, TEMPORAL_ADDRESS: info.temporalAddress, TEMPORAL_NAMESPACE: info.temporalNamespace, KUBECONFIG: info.kubeconfig, KLM_TASK_QUEUE: klm.taskQueue, KLM_BLOB_CACHE_DIR: cacheDir },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
}

describe('a worker killed mid-install', () => {
  let klm: Klm;
  let worker: ChildProcess | undefined;
  beforeAll(async () => {
    klm = await startKlm({ worker: false });
  });
  afterAll(async () => {
    worker?.kill('SIGKILL');
    await klm?.stop();
  });

  it('loses nothing: after SIGKILL and a restart all 20 Kymas reach Ready, each default CR exists once, no workflow failed', async () => {
    const cacheDir = await mkdtemp(path.join(tmpdir(), 'klm-blobs-'));
    worker = startWorkerProcess(klm, cacheDir);
    const names = Array.from({ length: 20 }, () => uniqueName('kyma'));
    await Promise.all(names.map((n) => klm.kube.create(kymaObject(klm.namespace, n, { channel: 'regular', modules: [{ name: 'greeter' }, { name: 'counter' }] }))));

    // Kill it while installs are under way: some Kymas have a status, not all are Ready.
    for (;;) {
      const states = await Promise.all(names.map(async (n) => (await getKyma(klm, n))?.status?.state));
      if (states.filter(Boolean).length >= 3) {
        expect(states.every((s) => s === 'Ready')).toBe(false);
        break;
      }
      await new Promise((r) => setTimeout(r, 50));
    }
    worker.kill('SIGKILL');
    await new Promise((r) => worker!.once('exit', r));
    worker = startWorkerProcess(klm, cacheDir);

    for (const n of names) await kymaInState(klm, n, 'Ready', 180_000);
    for (const n of names) {
      for (const [apiVersion, kind] of [['greeter.example.io/v1alpha1', 'Greeter'], ['counter.example.io/v1alpha1', 'Counter']] as const) {
        const { items } = await klm.kube.list(apiVersion, kind, { namespace: `${n}-system` });
        expect(items.map((i) => i.metadata.name)).toEqual(['default']);
      }
    }
    const bad: string[] = [];
    for await (const wf of klm.client.workflow.list({ query: `TaskQueue = '${klm.taskQueue}' AND ExecutionStatus != 'Running' AND ExecutionStatus != 'ContinuedAsNew'` })) {
      bad.push(`${wf.workflowId}: ${wf.status.name}`);
    }
    expect(bad).toEqual([]);
  }, 300_000);
});
