// What an informer emits when it lists again: only the differences to its cache.
import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../../src/api/shared';
import { relistDiff } from '../../src/k8s/informer';

const obj = (name: string, rv: string): KubeObject => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'n', resourceVersion: rv } });

describe('relistDiff', () => {
  it('emits ADDED, MODIFIED and DELETED for what changed, nothing for what did not, and updates the cache', () => {
    const cache = new Map<string, KubeObject>([['n/same', obj('same', '1')], ['n/changed', obj('changed', '1')], ['n/gone', obj('gone', '1')]]);
    const events = relistDiff(cache, [obj('same', '1'), obj('changed', '2'), obj('new', '3')]);
    expect(events.map((e) => `${e.type} ${e.obj.metadata.name}`)).toEqual(['MODIFIED changed', 'ADDED new', 'DELETED gone']);
    expect([...cache.keys()].sort()).toEqual(['n/changed', 'n/new', 'n/same']);
    expect(relistDiff(cache, [obj('same', '1'), obj('changed', '2'), obj('new', '3')])).toEqual([]);
  });
});
