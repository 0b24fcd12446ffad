// src/manifests, the one library for a manifest's objects into a cluster (the worker's installs
// and klm's direct installs): parsing, the manager, the order of apply and deletion, what a new
// version prunes, batches; and the one key of an object (src/api/object-id.ts).
import { describe, expect, it } from 'vitest';
import { idOf, objectKey, refOf } from '../../src/api/object-id';
import type { KubeObject } from '../../src/api/shared';
import { applyInOrder } from '../../src/manifests/apply';
import { inBatches } from '../../src/manifests/batches';
import { managerOf } from '../../src/manifests/manager';
import { applyOrder, deletionTiers, pruned } from '../../src/manifests/order';
import { parseManifest, RenderError } from '../../src/manifests/parse';

const manifest = parseManifest(
  'apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: first}\n---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {name: op, namespace: op-system}\n',
  'kyma-system',
);

const obj = (apiVersion: string, kind: string, name: string, namespace?: string): KubeObject => ({
  apiVersion,
  kind,
  metadata: { name, ...(namespace ? { namespace } : {}) },
});

function renderError(yaml: string): RenderError {
  try {
    parseManifest(yaml, 'kyma-system');
  } catch (err) {
    if (err instanceof RenderError) return err;
    throw err;
  }
  throw new Error('parsed');
}

describe('the manager of a module', () => {
  it("is the template's spec.manager; one without a namespace is in the namespace the manifest's objects without one went to", () => {
    expect(
      managerOf(
        manifest,
        { group: 'apps', version: 'v1', kind: 'Deployment', name: 'op', namespace: 'op-system' },
        'kyma-system',
      ),
    ).toEqual({ group: 'apps', version: 'v1', kind: 'Deployment', name: 'op', namespace: 'op-system' });
    expect(
      managerOf(manifest, { group: 'apps', version: 'v1', kind: 'Deployment', name: 'first' }, 'kyma-system'),
    ).toEqual({ group: 'apps', version: 'v1', kind: 'Deployment', name: 'first', namespace: 'kyma-system' });
  });

  it("is else the manifest's first Deployment or StatefulSet", () => {
    expect(managerOf(manifest, undefined, 'kyma-system')).toEqual({
      group: 'apps',
      version: 'v1',
      kind: 'Deployment',
      name: 'first',
      namespace: 'kyma-system',
    });
  });
});

describe('parsing a raw manifest', () => {
  it('puts namespaced objects without a namespace into the default one, and takes it from cluster-scoped ones', () => {
    const objects = parseManifest(
      [
        'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}',
        'apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: r, namespace: x}',
        'apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: gs.example.io}\nspec: {scope: Cluster, names: {kind: G}}',
        'apiVersion: example.io/v1\nkind: G\nmetadata: {name: g, namespace: y}',
        '',
      ].join('\n---\n'),
      'kyma-system',
    );
    expect(objects.map((o) => o.metadata.namespace)).toEqual(['kyma-system', undefined, undefined, undefined]);
  });

  it('refuses a repeated object, also in another version of its kind, as MalformedManifest', () => {
    const twice = renderError(
      'apiVersion: autoscaling/v1\nkind: HorizontalPodAutoscaler\nmetadata: {name: ' +
        'h}\n---\napiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\nmetadata: {name: h}\n',
    );
    expect(twice.reason).toBe('MalformedManifest');
    expect(twice.message).toBe('the manifest repeats HorizontalPodAutoscaler kyma-system/h');
  });

  it('expands a kind: List (lists in it too), as kubectl does, and names an item that is no object', () => {
    const objects = parseManifest(
      [
        'apiVersion: v1\nkind: List\nitems:',
        '- {apiVersion: v1, kind: ConfigMap, metadata: {name: a}}',
        '- {apiVersion: v1, kind: ConfigMapList, items: [{apiVersion: v1, kind: ConfigMap, metadata: {name: b}}]}',
        '---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}',
      ].join('\n'),
      'kyma-system',
    );
    expect(objects.map((o) => `${o.kind} ${o.metadata.namespace}/${o.metadata.name}`)).toEqual([
      'ConfigMap kyma-system/a',
      'ConfigMap kyma-system/b',
      'ConfigMap kyma-system/c',
    ]);
    const item = renderError(
      'apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: ConfigMap, metadata: {name: a}}\n- {kind: x}\n',
    );
    expect(item.message).toBe(
      'document 1, item 2 of its List is not a Kubernetes object (it needs apiVersion, kind and metadata.name)',
    );
  });

  it('refuses what is no object as MalformedManifest, and a manifest without any as EmptyManifest', () => {
    expect(renderError('- a\n- b\n').reason).toBe('MalformedManifest');
    expect(renderError('a: [\n').reason).toBe('MalformedManifest');
    expect(renderError('---\n').reason).toBe('EmptyManifest');
  });
});

describe('the order of a manifest into a cluster', () => {
  const objects = [
    obj('apps/v1', 'Deployment', 'm', 'kyma-system'),
    obj('v1', 'Namespace', 'own'),
    obj('v1', 'ConfigMap', 'c', 'own'),
    obj('apiextensions.k8s.io/v1', 'CustomResourceDefinition', 'gs.example.io'),
    obj('rbac.authorization.k8s.io/v1', 'ClusterRole', 'r'),
  ];

  it('is CRDs, namespaces, the namespaces the rest needs and the manifest lacks, then the rest', () => {
    const order = applyOrder(objects);
    expect(order.crds.map((o) => o.metadata.name)).toEqual(['gs.example.io']);
    expect(order.namespaces.map((o) => o.metadata.name)).toEqual(['own']);
    expect(order.referenced).toEqual(['kyma-system']);
    expect(order.rest.map((o) => o.metadata.name)).toEqual(['m', 'c', 'r']);
  });

  it('waits for the CRDs, with their apply answers, before anything else', async () => {
    const calls: string[] = [];
    await applyInOrder(objects, {
      apply: (o) => {
        calls.push(`apply ${o.metadata.name}`);
        return Promise.resolve({ ...o, metadata: { ...o.metadata, resourceVersion: '1' } });
      },
      established: (crds) => {
        calls.push(`established ${crds.map((c) => `${c.metadata.name}@${c.metadata.resourceVersion}`).join()}`);
        return Promise.resolve();
      },
      ensureNamespace: (n) => {
        calls.push(`namespace ${n}`);
        return Promise.resolve();
      },
    });
    expect(calls).toEqual([
      'apply gs.example.io',
      'established gs.example.io@1',
      'apply own',
      'namespace kyma-system',
      'apply m',
      'apply c',
      'apply r',
    ]);
  });

  it('deletes in tiers: ordinary objects first (newest first), then workloads, services, accounts, RBAC, namespaces, CRDs', () => {
    const tiers = deletionTiers([
      ...objects,
      obj('v1', 'ServiceAccount', 'sa', 'own'),
      obj('v1', 'Secret', 's', 'own'),
      obj('v1', 'Service', 'svc', 'own'),
    ]);
    expect(tiers.map((t) => t.map((o) => o.metadata.name))).toEqual([
      ['s', 'c'],
      ['m'],
      ['svc'],
      ['sa'],
      ['r'],
      ['own'],
      ['gs.example.io'],
    ]);
  });

  it('prunes what the new version lacks, not what it has in another version of its kind', () => {
    const before = [obj('autoscaling/v1', 'HorizontalPodAutoscaler', 'h', 'ns'), obj('v1', 'ConfigMap', 'old', 'ns')];
    const after = [obj('autoscaling/v2', 'HorizontalPodAutoscaler', 'h', 'ns'), obj('v1', 'ConfigMap', 'new', 'ns')];
    expect(pruned(before, after, idOf).map((o) => o.metadata.name)).toEqual(['old']);
    expect(pruned(before.map(idOf), after.map(idOf), (o) => o)).toEqual([
      { apiVersion: 'v1', kind: 'ConfigMap', name: 'old', namespace: 'ns' },
    ]);
  });
});

describe('writes in batches', () => {
  it('runs every item, at most so many at once', async () => {
    let running = 0;
    let most = 0;
    const done: number[] = [];
    await inBatches(
      Array.from({ length: 20 }, (_, i) => i),
      async (i) => {
        most = Math.max(most, ++running);
        await new Promise((r) => setTimeout(r, 1));
        done.push(i);
        running--;
      },
      3,
    );
    expect(most).toBe(3);
    expect(done.sort((a, b) => a - b)).toEqual(Array.from({ length: 20 }, (_, i) => i));
  });
});

describe('the key of an object', () => {
  it('is `<apiVersion>/<kind>/<namespace>/<name>` (workflow histories carry it), by group for any version', () => {
    const d = obj('apps/v1', 'Deployment', 'm', 'kyma-system');
    expect(objectKey(idOf(d))).toBe('apps/v1/Deployment/kyma-system/m');
    expect(objectKey(idOf(d), true)).toBe('apps/Deployment/kyma-system/m');
    expect(objectKey(idOf(obj('v1', 'Namespace', 'n')))).toBe('v1/Namespace//n');
    expect(objectKey(idOf(obj('v1', 'Namespace', 'n')), true)).toBe('/Namespace//n');
  });

  it("converts to upstream's spelling (group and version apart)", () => {
    expect(refOf({ apiVersion: 'v1', kind: 'ConfigMap', name: 'c', namespace: 'n' })).toEqual({
      group: '',
      version: 'v1',
      kind: 'ConfigMap',
      name: 'c',
      namespace: 'n',
    });
  });
});
