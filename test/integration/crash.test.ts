import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { manifestName } from '../../src/api/names';
import { API_VERSION } from '../../src/api/shared';
import { eventually, getKyma, kymaInState, kymaObject, startKlm, type Klm } from '../support/klm';
import { testModule } from '../support/modules';
import { processEnv } from '../support/processes';
import { uniqueName } from '../support/stack';

// node itself (with tsx as a loader), so that SIGKILL hits the worker and not a wrapper.
const NODE_ARGS = ['--import', 'tsx', 'src/workers/main.ts'];

function startWorkerProcess(klm: Klm, cacheDir: string): ChildProcess {
  return spawn(process.execPath, NODE_ARGS, {
    env: processEnv(klm, { KLM_BLOB_CACHE_DIR: cacheDir }),
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
    await Promise.all(
      names.map((n) =>
        klm.kube.create(
          kymaObject(klm.namespace, n, { channel: 'regular', modules: [{ name: 'greeter' }, { name: 'counter' }] }),
        ),
      ),
    );

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
      for (const [apiVersion, kind] of [
        ['greeter.example.io/v1alpha1', 'Greeter'],
        ['counter.example.io/v1alpha1', 'Counter'],
      ] as const) {
        const { items } = await klm.kube.list(apiVersion, kind, { namespace: `${n}-system` });
        expect(items.map((i) => i.metadata.name)).toEqual(['default']);
      }
    }
    const bad: string[] = [];
    for await (const wf of klm.client.workflow.list({
      query: `TaskQueue = '${klm.taskQueue}' AND ExecutionStatus != 'Running' AND ExecutionStatus != 'ContinuedAsNew'`,
    })) {
      bad.push(`${wf.workflowId}: ${wf.status.name}`);
    }
    expect(bad).toEqual([]);
  }, 300_000);
});

describe('a worker killed mid-lifecycle', () => {
  let klm: Klm;
  let worker: ChildProcess | undefined;
  let cacheDir: string;
  beforeAll(async () => {
    klm = await startKlm({ worker: false });
    cacheDir = await mkdtemp(path.join(tmpdir(), 'klm-blobs-'));
    worker = startWorkerProcess(klm, cacheDir);
  });
  afterAll(async () => {
    worker?.kill('SIGKILL');
    await klm?.stop();
  });

  async function restartWorker(): Promise<void> {
    worker!.kill('SIGKILL');
    await new Promise((r) => worker!.once('exit', r));
    worker = startWorkerProcess(klm, cacheDir);
  }

  it('finishes a blocked deletion after SIGKILL and a restart, leaving nothing behind', async () => {
    const mod = await testModule(klm);
    await mod.publish('1.0.0');
    await mod.channels({ regular: '1.0.0' });
    const name = uniqueName('kyma');
    await klm.kube.create(kymaObject(klm.namespace, name, { channel: 'regular', modules: [{ name: mod.name }] }));
    await kymaInState(klm, name, 'Ready', 120_000);
    await klm.kube.create({
      apiVersion: mod.apiVersion,
      kind: mod.kind,
      metadata: { name: 'blocker', namespace: klm.namespace },
      spec: {},
    });
    await klm.kube.mergePatch(API_VERSION, 'Kyma', name, klm.namespace, { spec: { modules: [] } });
    await eventually(
      'the blocked removal',
      async () =>
        (await getKyma(klm, name))?.status?.modules?.find(
          (m) => m.state === 'Warning' && m.message?.includes('blocker'),
        ),
      60_000,
    );
    await restartWorker();
    await klm.kube.delete(mod.apiVersion, mod.kind, 'blocker', klm.namespace);
    await eventually(
      'the module to be removed',
      async () => {
        const k = await getKyma(klm, name);
        return k?.status?.state === 'Ready' && (k.status.modules ?? []).length === 0 ? k : undefined;
      },
      120_000,
    );
    const ns = `${name}-system`;
    expect(await klm.kube.get('apps/v1', 'Deployment', `${mod.name}-manager`, ns)).toBeUndefined();
    expect(await klm.kube.get('v1', 'ServiceAccount', `${mod.name}-manager`, ns)).toBeUndefined();
    expect(
      await klm.kube.get('apiextensions.k8s.io/v1', 'CustomResourceDefinition', `${mod.name}s.${mod.name}.example.io`),
    ).toBeUndefined();
    expect(await klm.kube.get(API_VERSION, 'Manifest', manifestName(name, mod.name), klm.namespace)).toBeUndefined();
  }, 300_000);

  it('finishes an upgrade after SIGKILL and a restart, with what the new version dropped pruned', async () => {
    const mod = await testModule(klm);
    await mod.publish('1.0.0', 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: dropped\n');
    await mod.publish('2.0.0');
    await mod.channels({ regular: '1.0.0' });
    const name = uniqueName('kyma');
    const ns = `${name}-system`;
    await klm.kube.create(kymaObject(klm.namespace, name, { channel: 'regular', modules: [{ name: mod.name }] }));
    await kymaInState(klm, name, 'Ready', 120_000);
    await mod.channels({ regular: '2.0.0' });
    await eventually(
      'the upgrade to start',
      async () =>
        (await getKyma(klm, name))?.status?.modules?.find(
          (m) => m.message?.startsWith('upgrading from 1.0.0 to 2.0.0') || m.version === '2.0.0',
        ),
      60_000,
    );
    await restartWorker();
    await eventually(
      '2.0.0 to be Ready',
      async () =>
        (await getKyma(klm, name))?.status?.modules?.find((m) => m.version === '2.0.0' && m.state === 'Ready'),
      120_000,
    );
    await eventually(
      'the dropped ConfigMap to be pruned',
      async () => (await klm.kube.get('v1', 'ConfigMap', 'dropped', ns)) === undefined || undefined,
      60_000,
    );
    expect(
      (await klm.kube.list(mod.apiVersion, mod.kind)).items.map((i) => `${i.metadata.namespace}/${i.metadata.name}`),
    ).toEqual([`${ns}/default`]);
    const bad: string[] = [];
    for await (const wf of klm.client.workflow.list({
      query: `TaskQueue = '${klm.taskQueue}' AND ExecutionStatus = 'Failed'`,
    }))
      bad.push(wf.workflowId);
    expect(bad).toEqual([]);
  }, 300_000);
});
