// The worker's control-plane cache: reads cost no request when the cache holds the object and
// has seen the version a signal told of; an absent object, or a cache that does not catch up,
// is read from the API server. Relists come from the watch cache.
import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../../src/api/shared';
import { resourceVersionReached as reached } from '../../src/api/shared';
import { ObjectCache } from '../../src/k8s/object-cache';
import type { KubeClient, ListOptions, WatchEvent } from '../../src/k8s/rest-client';

const kyma = (name: string, rv: string, channel = 'regular'): KubeObject => ({
  apiVersion: 'operator.kyma-project.io/v1beta2',
  kind: 'Kyma',
  metadata: { name, namespace: 'kcp', resourceVersion: rv, managedFields: [{ manager: 'kubectl' }] },
  spec: { channel },
});

/** A control plane of one kind: a list, one watch the test feeds, and GETs counted. */
function fakeControlPlane(items: KubeObject[], live: Record<string, KubeObject>) {
  const calls = { get: 0, lists: [] as ListOptions[] };
  let push: ((e: WatchEvent) => void) | undefined;
  const client = {
    list: (_a: string, _k: string, opts: ListOptions) => {
      calls.lists.push(opts);
      return Promise.resolve({ items: items.map((o) => structuredClone(o)), resourceVersion: '10' });
    },
    clusterWidePath: () => Promise.resolve('/apis/operator.kyma-project.io/v1beta2/kymas'),
    watch: (_p: string, _q: Record<string, string>, on: (e: WatchEvent) => void, signal: AbortSignal) => {
      push = on;
      return new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
    },
    get: (_a: string, _k: string, name: string) => {
      calls.get++;
      return Promise.resolve(live[name]);
    },
  } as unknown as KubeClient;
  return { client, calls, push: (e: WatchEvent) => push!(e) };
}

async function started(items: KubeObject[], live: Record<string, KubeObject> = {}) {
  const cp = fakeControlPlane(items, live);
  const cache = new ObjectCache(cp.client, [{ apiVersion: 'operator.kyma-project.io/v1beta2', kind: 'Kyma' }]);
  await cache.start();
  await new Promise((r) => setTimeout(r, 5));
  return { ...cp, cache };
}

describe('resourceVersionReached', () => {
  it('compares resourceVersions as the numbers etcd gives them, and never claims an opaque one reached', () => {
    expect(reached('10', '9')).toBe(true);
    expect(reached('10', '10')).toBe(true);
    expect(reached('9', '10')).toBe(false);
    expect(reached('123456789012345678901', '99')).toBe(true);
    expect(reached('abc', '1')).toBe(false);
    expect(reached('', '1')).toBe(false);
  });
});

describe('ObjectCache', () => {
  it('serves a held object without a request, and keeps no managedFields', async () => {
    const { cache, calls } = await started([kyma('a', '7')]);
    const got = await cache.get<KubeObject>('operator.kyma-project.io/v1beta2', 'Kyma', 'a', 'kcp');
    expect(got?.metadata.name).toBe('a');
    expect(got?.metadata.managedFields).toBeUndefined();
    expect(calls.get).toBe(0);
    cache.stop();
  });

  it('lists from the API server watch cache, in pages', async () => {
    const { cache, calls } = await started([]);
    expect(calls.lists[0]).toMatchObject({ resourceVersion: '0', resourceVersionMatch: 'NotOlderThan', limit: 500 });
    cache.stop();
  });

  it('reads an object it does not hold from the API server: absence is verified', async () => {
    const fresh = kyma('new', '11');
    const { cache, calls } = await started([], { new: fresh });
    expect(
      (await cache.get<KubeObject>('operator.kyma-project.io/v1beta2', 'Kyma', 'new', 'kcp'))?.metadata.resourceVersion,
    ).toBe('11');
    expect(calls.get).toBe(1);
    cache.stop();
  });

  it('waits for the version a signal told of, then serves the new object from the cache', async () => {
    const { cache, calls, push } = await started([kyma('a', '7')]);
    const read = cache.get<KubeObject & { spec: { channel: string } }>(
      'operator.kyma-project.io/v1beta2',
      'Kyma',
      'a',
      'kcp',
      '12',
    );
    setTimeout(() => push({ type: 'MODIFIED', object: kyma('a', '12', 'fast') }), 20);
    expect((await read)?.spec.channel).toBe('fast');
    expect(calls.get).toBe(0);
    cache.stop();
  });

  it('reads from the API server when the cache does not catch up in time', async () => {
    const { cache, calls } = await started([kyma('a', '7')], { a: kyma('a', '12', 'fast') });
    const got = await cache.get<KubeObject & { spec: { channel: string } }>(
      'operator.kyma-project.io/v1beta2',
      'Kyma',
      'a',
      'kcp',
      '12',
    );
    expect(got?.spec.channel).toBe('fast');
    expect(calls.get).toBe(1);
    cache.stop();
  }, 10_000);

  it('as of a version it has seen, trusts its own absence: no request for an object nobody told of', async () => {
    const { cache, calls, push } = await started([kyma('a', '7')], { b: kyma('b', '9') });
    push({ type: 'MODIFIED', object: kyma('a', '12', 'fast') });
    expect(await cache.getAt('operator.kyma-project.io/v1beta2', 'Kyma', 'b', 'kcp', '12')).toBeUndefined();
    expect(
      (
        await cache.getAt<KubeObject & { spec: { channel: string } }>(
          'operator.kyma-project.io/v1beta2',
          'Kyma',
          'a',
          'kcp',
          '12',
        )
      )?.spec.channel,
    ).toBe('fast');
    expect(calls.get).toBe(0);
    cache.stop();
  });

  it('does not serve a cached object that the caller finds too old', async () => {
    const { cache, calls } = await started([kyma('a', '7')], { a: kyma('a', '12', 'fast') });
    const got = await cache.getIf<KubeObject & { spec: { channel: string } }>(
      'operator.kyma-project.io/v1beta2',
      'Kyma',
      'a',
      'kcp',
      (k) => k.spec.channel === 'fast',
    );
    expect(got?.spec.channel).toBe('fast');
    expect(calls.get).toBe(1);
    cache.stop();
  });
});
