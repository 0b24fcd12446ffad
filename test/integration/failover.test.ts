// Replicas as an operator runs them: three bridge processes sharing the fleet's shards through
// Leases, two worker processes on one task queue, and 200 target clusters (a kubeconfig of its own
// per Kyma, over the local API server, whose controllers and kwok node run the modules' managers). A worker is SIGKILLed mid-install, then
// the bridge that holds shard 0: every cluster is watched by exactly one bridge again within the
// lease, changes made while nobody watched reach their workflows, nothing is done twice, and the
// bridge that comes back gets its share handed back.
import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parse, stringify } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { kubeconfigSecret } from '../../bench/fleet';
import type { Kyma } from '../../src/api/kyma';
import { API_VERSION, type KubeObject } from '../../src/api/shared';
import { shardOf } from '../../src/decisions/shards';
import { eventually, getKyma, kymaObject, startKlm, type Klm } from '../support/klm';
import { processEnv, startNode, type StartedProcess } from '../support/processes';
import { freePort, stackInfo, uniqueName } from '../support/stack';

const KYMAS = 200;
/** Kymas per shard that install the greeter module; the others only have their cluster watched. */
const WITH_MODULE_PER_SHARD = 2;
const SHARDS = 8;
const LEASE_S = 12;
const RETRY_S = 2;

type Lease = KubeObject & { spec?: { holderIdentity?: string } };

async function scrape(port: number): Promise<string> {
  return await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
}

/** The shards a bridge says it serves, with the clusters it watches for each. */
function shardClusters(text: string): Map<number, number> {
  const out = new Map<number, number>();
  for (const m of text.matchAll(/^klm_bridge_shard_clusters\{shard="(\d+)"\} (\d+)$/gm))
    out.set(Number(m[1]), Number(m[2]));
  return out;
}

function sample(text: string, name: string): number {
  const line = text.split('\n').find((l) => l.startsWith(`${name} `));
  return line === undefined ? NaN : Number(line.slice(line.lastIndexOf(' ') + 1));
}

describe('three bridges sharing 200 clusters, two workers', () => {
  let klm: Klm;
  let lease: string;
  const bridges = new Map<string, { proc: StartedProcess; port: number }>();
  const workers: StartedProcess[] = [];
  const names = Array.from({ length: KYMAS }, (_, i) => `kyma-${String(i).padStart(3, '0')}`);
  /** The first Kymas of each shard: every bridge's shards have some with a module. */
  let withModule: string[] = [];

  async function startBridge(identity: string): Promise<void> {
    const port = await freePort();
    const proc = startNode(
      ['--import', 'tsx', 'src/starter/main.ts'],
      processEnv(klm, {
        KLM_LEADER_ELECTION_LEASE: `${klm.namespace}/${lease}`,
        KLM_BRIDGE_SHARDS: String(SHARDS),
        KLM_LEADER_ELECTION_LEASE_DURATION: `${LEASE_S}s`,
        KLM_LEADER_ELECTION_RENEW_DEADLINE: `${LEASE_S - 4}s`,
        KLM_LEADER_ELECTION_RETRY_PERIOD: `${RETRY_S}s`,
        POD_NAME: identity,
        KLM_METRICS_PORT: String(port),
        KLM_DEFAULT_NAMESPACE: '{kyma}-system',
        // The shared stack holds other test files' Kymas too: these bridges serve this fleet only.
        KLM_KYMA_NAMESPACES: klm.namespace,
        KLM_CRD_ESTABLISHED_TIMEOUT: '20s',
      }),
    );
    bridges.set(identity, { proc, port });
  }

  /** Each shard's holder, as its Lease names it ('' when free or not made yet). */
  async function holders(): Promise<string[]> {
    return Promise.all(
      Array.from(
        { length: SHARDS },
        async (_, i) =>
          (
            await klm.kube.get<Lease>(
              'coordination.k8s.io/v1',
              'Lease',
              `${lease}-shard-${i}-of-${SHARDS}`,
              klm.namespace,
            )
          )?.spec?.holderIdentity ?? '',
      ),
    );
  }

  /** What each live bridge serves, by its own metrics. */
  async function served(live: string[]): Promise<Map<string, Map<number, number>>> {
    return new Map(
      await Promise.all(live.map(async (id) => [id, shardClusters(await scrape(bridges.get(id)!.port))] as const)),
    );
  }

  const kymasIn = (shard: number) => names.filter((n) => shardOf(klm.namespace, n, SHARDS) === shard);

  /**
   * Every shard held by one of `live`, none beyond its fair share; each bridge serves exactly the
   * shards its Leases hold and watches each of their Kymas' clusters: every cluster once.
   */
  async function everyClusterWatchedOnce(live: string[]): Promise<true> {
    const now = await holders();
    if (now.some((h) => !live.includes(h))) throw new Error(`shard holders ${JSON.stringify(now)}`);
    const share = Math.ceil(SHARDS / live.length);
    if (live.some((id) => now.filter((h) => h === id).length > share))
      throw new Error(`shard holders over their share: ${JSON.stringify(now)}`);
    const seen = await served(live);
    for (const [id, shards] of seen) {
      const mine = now.flatMap((h, shard) => (h === id ? [shard] : []));
      const says = JSON.stringify(Object.fromEntries(shards));
      if (JSON.stringify([...shards.keys()].sort()) !== JSON.stringify(mine.sort()))
        throw new Error(`${id} holds ${JSON.stringify(mine)} and serves ${says}`);
      for (const shard of mine)
        if (shards.get(shard) !== kymasIn(shard).length)
          throw new Error(`${id} serves ${says}; shard ${shard} has ${kymasIn(shard).length} Kymas`);
    }
    const total = [...seen.values()].reduce((sum, s) => sum + [...s.values()].reduce((a, b) => a + b, 0), 0);
    if (total !== KYMAS) throw new Error(`${total} clusters watched`);
    return true;
  }

  const states = async () => {
    const { items } = await klm.kube.list(API_VERSION, 'Kyma', { namespace: klm.namespace });
    const state = new Map(items.map((k) => [k.metadata.name, (k as unknown as Kyma).status?.state]));
    return names.map((n) => state.get(n));
  };

  beforeAll(async () => {
    klm = await startKlm({ worker: false, bridge: false });
    lease = uniqueName('klm-bridge');
    withModule = Array.from({ length: SHARDS }, (_, shard) => kymasIn(shard).slice(0, WITH_MODULE_PER_SHARD)).flat();
    for (let i = 0; i < 2; i++)
      workers.push(
        startNode(
          ['--import', 'tsx', 'src/workers/main.ts'],
          processEnv(klm, { KLM_BLOB_CACHE_DIR: await mkdtemp(path.join(tmpdir(), 'klm-blobs-')) }),
        ),
      );
    for (const id of ['bridge-a', 'bridge-b', 'bridge-c']) await startBridge(id);
    // One kubeconfig per Kyma (its own context name): each a cluster of its own to worker and bridges.
    const base = parse(await readFile(stackInfo().kubeconfig, 'utf8')) as {
      contexts: { name: string }[];
      'current-context': string;
    };
    await Promise.all(
      names.map((n) =>
        klm.kube.create(
          kubeconfigSecret(
            klm.namespace,
            n,
            stringify({ ...base, contexts: [{ ...base.contexts[0]!, name: n }], 'current-context': n }),
          ),
        ),
      ),
    );
  });
  afterAll(async () => {
    for (const p of [...workers, ...[...bridges.values()].map((b) => b.proc)]) p.proc.kill('SIGKILL');
    await klm?.stop();
  });

  it(
    `installs ${KYMAS} Kymas through a worker's SIGKILL: each Ready once, every shard held ` +
      `once, every cluster watched by the bridge of its shard`,
    async () => {
      await Promise.all(
        names.map((n) =>
          klm.kube.create(
            kymaObject(klm.namespace, n, {
              channel: 'regular',
              modules: withModule.includes(n) ? [{ name: 'greeter' }] : [],
            }),
          ),
        ),
      );
      await eventually(
        'some Kymas to be Ready',
        async () => (await states()).filter((s) => s === 'Ready').length >= KYMAS / 4 || undefined,
        300_000,
      );
      expect((await states()).every((s) => s === 'Ready')).toBe(false);
      workers[0]!.proc.kill('SIGKILL');
      await eventually(
        `all ${KYMAS} Kymas to be Ready`,
        async () => {
          const now = await states();
          if (now.every((s) => s === 'Ready')) return true;
          const counts = new Map<string, number>();
          for (const s of now) counts.set(s ?? 'none', (counts.get(s ?? 'none') ?? 0) + 1);
          throw new Error(
            `states: ${JSON.stringify(Object.fromEntries(counts))}; not Ready: ${names
              .filter((_, i) => now[i] !== 'Ready')
              .slice(0, 5)
              .join(', ')}`,
          );
        },
        600_000,
      );

      await eventually(
        'the shards shared by all three bridges, every cluster watched once',
        () => everyClusterWatchedOnce(['bridge-a', 'bridge-b', 'bridge-c']),
        60_000,
      );
      const now = await holders();
      for (const id of ['bridge-a', 'bridge-b', 'bridge-c']) {
        // Shard 0's holder does the fleet-wide duties, and only it.
        expect(sample(await scrape(bridges.get(id)!.port), 'klm_bridge_leader'), id).toBe(now[0] === id ? 1 : 0);
      }
      // One default CR per module, one workflow per Kyma, each in its first run.
      for (const n of withModule) {
        const { items } = await klm.kube.list('greeter.example.io/v1alpha1', 'Greeter', { namespace: `${n}-system` });
        expect(
          items.map((i) => i.metadata.name),
          n,
        ).toEqual(['default']);
      }
      const runs = new Map<string, string[]>();
      for await (const wf of klm.client.workflow.list({ query: `TaskQueue = '${klm.taskQueue}'` }))
        runs.set(wf.workflowId, [...(runs.get(wf.workflowId) ?? []), wf.status.name]);
      for (const n of names) expect(runs.get(`kyma/${klm.namespace}/${n}`), n).toEqual(['RUNNING']);
    },
    900_000,
  );

  it(
    'SIGKILL of the bridge holding shard 0: its shards are served again within the lease, what ' +
      'changed meanwhile reaches its workflows, and the bridge that comes back gets its share',
    async () => {
      const before = await holders();
      const victim = before[0]!;
      const survivors = ['bridge-a', 'bridge-b', 'bridge-c'].filter((id) => id !== victim);
      const orphaned = before.flatMap((h, shard) => (h === victim ? [shard] : []));
      const orphans = names.filter((n) => orphaned.includes(shardOf(klm.namespace, n, SHARDS)));
      // A Kyma of the victim's with the module, and one without.
      const installed = orphans.find((n) => withModule.includes(n))!;
      const bare = orphans.find((n) => !withModule.includes(n))!;
      expect(installed, "a Kyma with the module in the victim's shards").toBeDefined();
      const deployment = await klm.kube.get('apps/v1', 'Deployment', 'greeter-manager', `${installed}-system`);

      bridges.get(victim)!.proc.proc.kill('SIGKILL');
      const killedAt = Date.now();
      // While nobody serves their shards: a manager deleted by hand in one's cluster, a module added to another's spec.
      await klm.kube.delete('apps/v1', 'Deployment', 'greeter-manager', `${installed}-system`);
      await klm.kube.mergePatch(API_VERSION, 'Kyma', bare, klm.namespace, { spec: { modules: [{ name: 'greeter' }] } });

      await eventually(
        'the survivors to serve every shard, every cluster watched once',
        () => everyClusterWatchedOnce(survivors),
        (LEASE_S + 30) * 1000,
      );
      const takeoverS = (Date.now() - killedAt) / 1000;
      // The Leases expire a lease duration after their last renewal; a survivor takes them at its next round.
      expect(takeoverS).toBeLessThan(LEASE_S + 3 * RETRY_S + 5);

      // The drift timer is 10 minutes here: only the takeover's fresh look explains these.
      await eventually(
        'the deleted manager to be back',
        async () => {
          const d = await klm.kube.get('apps/v1', 'Deployment', 'greeter-manager', `${installed}-system`);
          return d && d.metadata.uid !== deployment?.metadata.uid ? d : undefined;
        },
        90_000,
      );
      const kyma = await eventually(
        `${bare} to have installed greeter`,
        async () => {
          const k = await getKyma(klm, bare);
          return k?.status?.state === 'Ready' &&
            k.status?.modules?.some((m) => m.name === 'greeter' && m.state === 'Ready')
            ? k
            : undefined;
        },
        90_000,
      );
      expect(kyma.status?.state).toBe('Ready');
      const heldNow = await holders();
      expect(sample(await scrape(bridges.get(heldNow[0]!)!.port), 'klm_bridge_leader')).toBe(1);

      // As its Deployment would, the killed replica comes back: the others hand it its share, and
      // while they do no shard is served by two bridges for longer than the lease.
      await startBridge(victim);
      const all = ['bridge-a', 'bridge-b', 'bridge-c'];
      const twiceSince = new Map<number, number>();
      let longestTwiceMs = 0;
      await eventually(
        'the shards shared by all three again',
        async () => {
          const seen = await served(all).catch(() => undefined);
          if (seen) {
            const count = new Map<number, number>();
            for (const shards of seen.values())
              for (const shard of shards.keys()) count.set(shard, (count.get(shard) ?? 0) + 1);
            for (let shard = 0; shard < SHARDS; shard++) {
              if ((count.get(shard) ?? 0) > 1) twiceSince.set(shard, twiceSince.get(shard) ?? Date.now());
              else twiceSince.delete(shard);
            }
            for (const since of twiceSince.values()) longestTwiceMs = Math.max(longestTwiceMs, Date.now() - since);
          }
          return everyClusterWatchedOnce(all);
        },
        120_000,
      );
      expect(longestTwiceMs).toBeLessThan(LEASE_S * 1000);
      expect((await holders()).filter((h) => h === victim).length).toBeGreaterThan(0);
      console.log(
        `failover: ${orphaned.length} shards served again ${takeoverS.toFixed(1)} s after SIGKILL ` +
          `(lease ${LEASE_S} s); no shard served twice for longer than ` +
          `${(longestTwiceMs / 1000).toFixed(1)} s`,
      );
    },
    600_000,
  );
});
