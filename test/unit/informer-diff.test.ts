// What an informer emits when it lists again: only the differences to its cache, also after a resync.
import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../../src/api/shared';
import { Informer, relistDiff } from '../../src/k8s/informer';
import type { KubeClient } from '../../src/k8s/rest-client';
import { KubeApiError } from '../../src/k8s/request-errors';

const obj = (name: string, rv: string): KubeObject => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace: 'n', resourceVersion: rv },
});

describe('relistDiff', () => {
  it('emits ADDED, MODIFIED and DELETED for what changed, nothing for what did not, and updates the cache', () => {
    const cache = new Map<string, KubeObject>([
      ['n/same', obj('same', '1')],
      ['n/changed', obj('changed', '1')],
      ['n/gone', obj('gone', '1')],
    ]);
    const events = relistDiff(cache, [obj('same', '1'), obj('changed', '2'), obj('new', '3')]);
    expect(events.map((e) => `${e.type} ${e.obj.metadata.name}`)).toEqual([
      'MODIFIED changed',
      'ADDED new',
      'DELETED gone',
    ]);
    expect([...cache.keys()].sort()).toEqual(['n/changed', 'n/new', 'n/same']);
    expect(relistDiff(cache, [obj('same', '1'), obj('changed', '2'), obj('new', '3')])).toEqual([]);
  });
});

describe('Informer.resync', () => {
  it('lists again and ends the current watch, keeping its cache: an object gone meanwhile comes as DELETED', async () => {
    const lists = [[obj('a', '1'), obj('b', '1')], [obj('a', '1')]];
    let watches = 0;
    // Only what the informer calls: list, the watch path, and a watch that runs until aborted.
    const client = {
      list: () => Promise.resolve({ items: lists.shift() ?? [obj('a', '1')], resourceVersion: '5' }),
      clusterWidePath: () => Promise.resolve('/api/v1/configmaps'),
      watch: (_p: string, _q: Record<string, string>, _on: unknown, signal: AbortSignal) => {
        watches++;
        return new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
      },
    } as unknown as KubeClient;
    const events: string[] = [];
    const informer = new Informer(client, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      onEvent: (type, o) => events.push(`${type} ${o.metadata.name}`),
    });
    await informer.start();
    await new Promise((r) => setTimeout(r, 10));
    informer.resync();
    await new Promise((r) => setTimeout(r, 10));
    informer.stop();
    expect(events).toEqual(['ADDED a', 'ADDED b', 'DELETED b']);
    expect(watches).toBe(2);
  });
});

/** A watch that runs until aborted. */
const untilAborted = (signal: AbortSignal) =>
  new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));

/** An informer on `client` and the events it gave, each with whether a list found it. */
function recording(client: KubeClient): { informer: Informer; events: string[] } {
  const events: string[] = [];
  const informer = new Informer(client, {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    onEvent: (type, o, listed) => events.push(`${type} ${o.metadata.name} ${listed ? 'listed' : 'watched'}`),
  });
  return { informer, events };
}

describe('Informer events', () => {
  it('says which came from a list and which the watch saw', async () => {
    let watched = false;
    const { informer, events } = recording({
      list: () => Promise.resolve({ items: [obj('listed', '1')], resourceVersion: '5' }),
      clusterWidePath: () => Promise.resolve('/api/v1/configmaps'),
      watch: (_p: string, _q: Record<string, string>, on: (e: unknown) => void, signal: AbortSignal) => {
        if (!watched) on({ type: 'ADDED', object: obj('watched', '6') });
        watched = true;
        return untilAborted(signal);
      },
    } as unknown as KubeClient);
    await informer.start();
    await new Promise((r) => setTimeout(r, 10));
    informer.stop();
    expect(events).toEqual(['ADDED listed listed', 'ADDED watched watched']);
  });

  it('counts what the first list of a kind not served at first finds as made while it watched, and lists after that as lists', async () => {
    let lists = 0;
    const { informer, events } = recording({
      list: () => {
        lists++;
        // Not served at first (its CRD comes later), then served with one object.
        if (lists === 1)
          return Promise.reject(new KubeApiError(404, 'NotFound', 'the API server does not serve kind Kyma'));
        return Promise.resolve({
          items: lists === 2 ? [obj('made', '1')] : [obj('made', '1'), obj('later', '2')],
          resourceVersion: '5',
        });
      },
      clusterWidePath: () => Promise.resolve('/apis/x/v1/kymas'),
      watch: (_p: string, _q: Record<string, string>, _on: unknown, signal: AbortSignal) => untilAborted(signal),
    } as unknown as KubeClient);
    await informer.start();
    await new Promise((r) => setTimeout(r, 10));
    informer.resync();
    await new Promise((r) => setTimeout(r, 10));
    informer.stop();
    expect(events).toEqual(['ADDED made watched', 'ADDED later listed']);
  });
});
