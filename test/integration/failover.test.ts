// Replicas as an operator runs them: two bridge processes that share one Lease and two worker
// processes on one task queue. The leading bridge is SIGKILLed during a 100-Kyma install, then a
// worker: every Kyma still reaches Ready, each once (one workflow per Kyma and per module, one
// default CR each), and the standby never signalled while the leader lived.
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { KubeObject } from '../../src/api/shared';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, getKyma, kymaObject, startKlm, type Klm } from '../support/klm';
import { processEnv, startNode, type StartedProcess } from '../support/processes';
import { freePort, uniqueName } from '../support/stack';

const KYMAS = 100;
const LEASE_SECONDS = 15;

type Lease = KubeObject & { spec?: { holderIdentity?: string; leaseTransitions?: number } };

async function scrape(port: number): Promise<string> {
  return await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
}

/** The value of an unlabelled series, or of the sum of a labelled one's samples. */
function sample(text: string, name: string): number {
  let sum = 0;
  for (const line of text.split('\n')) if (line.startsWith(`${name} `) || line.startsWith(`${name}{`)) sum += Number(line.slice(line.lastIndexOf(' ') + 1));
  return sum;
}

describe('two bridges on one Lease and two workers', () => {
  let klm: Klm;
  let lease: string;
  const bridges = new Map<string, { proc: StartedProcess; port: number }>();
  const workers: StartedProcess[] = [];

  async function startBridge(identity: string): Promise<void> {
    const port = await freePort();
    const proc = startNode(['--import', 'tsx', 'src/starter/main.ts'], processEnv(klm.taskQueue, {
      KLM_LEADER_ELECTION_LEASE: `${klm.namespace}/${lease}`,
      POD_NAME: identity,
      KLM_METRICS_PORT: String(port),
      // What the test harness gives its in-process bridges: each Kyma's modules in a namespace of its own.
      KLM_DEFAULT_NAMESPACE: '{kyma}-system',
      KLM_CRD_ESTABLISHED_TIMEOUT: '20s',
    }));
    bridges.set(identity, { proc, port });
  }

  async function holder(): Promise<Lease['spec']> {
    return (await klm.kube.get<Lease>('coordination.k8s.io/v1', 'Lease', lease, klm.namespace))?.spec;
  }

  beforeAll(async () => {
    klm = await startKlm({ worker: false, bridge: false });
    lease = uniqueName('klm-bridge');
    for (let i = 0; i < 2; i++) workers.push(startNode(['--import', 'tsx', 'src/workers/main.ts'], processEnv(klm.taskQueue, { KLM_BLOB_CACHE_DIR: await mkdtemp(path.join(tmpdir(), 'klm-blobs-')) })));
    await startBridge('bridge-a');
    await startBridge('bridge-b');
  });
  afterAll(async () => {
    for (const p of [...workers, ...[...bridges.values()].map((b) => b.proc)]) p.proc.kill('SIGKILL');
    await klm?.stop();
  });

  it('elects one bridge: the Lease names it, it alone says it leads and signals, the other stands by', async () => {
    const leader = await eventually('a leader', async () => (await holder())?.holderIdentity || undefined, 60_000);
    expect(['bridge-a', 'bridge-b']).toContain(leader);
    const name = uniqueName('kyma');
    await klm.kube.create(kymaObject(klm.namespace, name, { channel: 'regular', modules: [] }));
    await eventually('the Kyma to be Ready', async () => (await getKyma(klm, name))?.status?.state === 'Ready' || undefined, 120_000);
    for (const [identity, { port }] of bridges) {
      const text = await eventually(`${identity}'s metrics`, async () => scrape(port).catch(() => undefined), 30_000);
      expect(sample(text, 'klm_bridge_leader'), identity).toBe(identity === leader ? 1 : 0);
      // Both talk to the API server (the standby about the Lease only), and count it.
      expect(text).toMatch(/klm_kube_request_duration_seconds_count\{cluster="control-plane",method="(GET|PUT)",code="200"\} [1-9]/);
      if (identity === leader) expect(sample(text, 'klm_bridge_signals_total'), identity).toBeGreaterThan(0);
      else expect(sample(text, 'klm_bridge_signals_total'), identity).toBe(0);
    }
  });

  it(`loses nothing and doubles nothing: SIGKILL of the leading bridge, then of a worker, during a ${KYMAS}-Kyma install`, async () => {
    const first = (await holder())!;
    const leader = first.holderIdentity!;
    const standby = leader === 'bridge-a' ? 'bridge-b' : 'bridge-a';
    const names = Array.from({ length: KYMAS }, () => uniqueName('kyma'));
    const started = Date.now();
    await Promise.all(names.map((n) => klm.kube.create(kymaObject(klm.namespace, n, { channel: 'regular', modules: [{ name: 'greeter' }] }))));
    const states = async () => Promise.all(names.map(async (n) => (await getKyma(klm, n))?.status?.state));

    // The leader dies while some Kymas are under way and others not yet seen.
    await eventually('some Kymas to have a status', async () => (await states()).filter(Boolean).length >= 5 || undefined, 120_000);
    bridges.get(leader)!.proc.proc.kill('SIGKILL');
    const killedAt = Date.now();
    const next = await eventually('the standby to take the Lease', async () => {
      const spec = await holder();
      return spec?.holderIdentity === standby ? spec : undefined;
    }, (LEASE_SECONDS + 30) * 1000);
    const takeoverS = (Date.now() - killedAt) / 1000;
    expect(next.leaseTransitions).toBe((first.leaseTransitions ?? 0) + 1);
    // As its Deployment would, the killed replica comes back: as the standby.
    await startBridge(leader);

    // Then a worker dies mid-install; the other carries on alone.
    await eventually('more Kymas to be Ready', async () => (await states()).filter((s) => s === 'Ready').length >= KYMAS / 4 || undefined, 300_000);
    expect((await states()).every((s) => s === 'Ready')).toBe(false);
    workers[0]!.proc.kill('SIGKILL');

    await eventually(`all ${KYMAS} Kymas to be Ready`, async () => (await states()).every((s) => s === 'Ready') || undefined, 600_000);
    const allReadyS = (Date.now() - started) / 1000;

    // One default CR per Kyma, one workflow per Kyma (which runs its module), in its first run.
    for (const n of names) {
      const { items } = await klm.kube.list('greeter.example.io/v1alpha1', 'Greeter', { namespace: `${n}-system` });
      expect(items.map((i) => i.metadata.name), n).toEqual(['default']);
    }
    const runs = new Map<string, string[]>();
    for await (const wf of klm.client.workflow.list({ query: `TaskQueue = '${klm.taskQueue}'` })) runs.set(wf.workflowId, [...(runs.get(wf.workflowId) ?? []), wf.status.name]);
    for (const n of names) {
      expect(runs.get(`kyma/${klm.namespace}/${n}`), n).toEqual(['RUNNING']);
    }
    expect([...runs.values()].flat().filter((s) => s !== 'RUNNING')).toEqual([]);
    expect([...runs.keys()].filter((id) => id.includes('/module/'))).toEqual([]);

    // The restarted replica stands by; the new leader says so too.
    const now = (await holder())!.holderIdentity!;
    expect(now).toBe(standby);
    expect(sample(await scrape(bridges.get(standby)!.port), 'klm_bridge_leader')).toBe(1);
    expect(sample(await eventually('the restarted bridge to serve', async () => scrape(bridges.get(leader)!.port).catch(() => undefined), 30_000), 'klm_bridge_leader')).toBe(0);
    console.log(`failover: takeover ${takeoverS.toFixed(1)} s after SIGKILL of the leading bridge (Lease ${LEASE_SECONDS} s); all ${KYMAS} Kymas Ready ${allReadyS.toFixed(0)} s after creation`);
  }, 900_000);
});
