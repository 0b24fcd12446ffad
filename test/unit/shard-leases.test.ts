// ShardLeases against an in-memory Lease store whose writes can be made slow: what a replica
// serves and what its Leases say must agree, also when the API server answers late.
import { afterEach, describe, expect, it } from 'vitest';
import { KubeApiError } from '../../src/k8s/request-errors';
import { type KubeClient } from '../../src/k8s/rest-client';
import type { Lease } from '../../src/k8s/lease';
import { ShardLeases } from '../../src/starter/shard-leases';

/** Leases in memory, with optimistic concurrency as the API server's, and a delay on writes. */
class LeaseStore {
  readonly leases = new Map<string, Lease>();
  writeDelayMs = 0;
  listDelayMs = 0;
  private version = 0;

  client(): KubeClient {
    const store = this as LeaseStore;
    return {
      get(_v: string, _k: string, name: string) {
        const l = store.leases.get(name);
        return l
          ? Promise.resolve(structuredClone(l))
          : Promise.reject(new KubeApiError(404, 'NotFound', `${name} not found`));
      },
      async list() {
        await new Promise((r) => setTimeout(r, store.listDelayMs));
        return { items: [...store.leases.values()].map((l) => structuredClone(l)) };
      },
      async request(method: string, path: string, body?: Lease) {
        await new Promise((r) => setTimeout(r, store.writeDelayMs));
        const name = method === 'POST' ? body!.metadata.name : decodeURIComponent(path.split('/').at(-1)!);
        const current = store.leases.get(name);
        if (method === 'DELETE') return store.leases.delete(name);
        if (method === 'POST' && current) throw new KubeApiError(409, 'AlreadyExists', 'exists');
        if (method === 'PUT' && current?.metadata.resourceVersion !== body!.metadata.resourceVersion)
          throw new KubeApiError(409, 'Conflict', 'conflict');
        const written = {
          ...structuredClone(body!),
          metadata: { ...body!.metadata, resourceVersion: String(++store.version) },
        };
        store.leases.set(name, written);
        return structuredClone(written);
      },
    } as unknown as KubeClient;
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const running: ShardLeases[] = [];
afterEach(() => running.splice(0).forEach((l) => l.stop()));

describe('shard leases', () => {
  it('serves again a shard lost while its renewal was out, rather than renewing its Lease unserved', async () => {
    const store = new LeaseStore();
    const serving = new Set<number>();
    const leases = new ShardLeases({
      client: store.client(),
      namespace: 'kcp-system',
      name: 'klm',
      identity: 'bridge-a',
      shards: 1,
      leaseDurationMs: 1_500,
      renewDeadlineMs: 600,
      retryPeriodMs: 100,
      onGain: (s) => serving.add(s),
      onLose: (s) => serving.delete(s),
    });
    running.push(leases);
    await leases.join();
    void leases.run();
    for (let i = 0; i < 100 && !serving.has(0); i++) await sleep(50);
    expect(serving.has(0)).toBe(true);

    // The API server is slow: rounds take longer than the renew deadline, so the deadline passes
    // while a renewal is out (and the renewal lands after it): the shard is given up.
    store.listDelayMs = 450;
    store.writeDelayMs = 200;
    for (let i = 0; i < 100 && serving.has(0); i++) await sleep(50);
    expect(serving.has(0)).toBe(false);
    await sleep(2_000);

    // It answers at once again: the Lease names this replica and is renewed, so it serves the shard.
    store.listDelayMs = 0;
    store.writeDelayMs = 0;
    await sleep(1_500);
    const lease = store.leases.get('klm-shard-0-of-1');
    expect(lease?.spec?.holderIdentity).toBe('bridge-a');
    expect(Date.now() - Date.parse(lease!.spec!.renewTime!)).toBeLessThan(600);
    expect(serving.has(0)).toBe(true);
    expect(leases.shards).toEqual([0]);
  }, 15_000);
});
