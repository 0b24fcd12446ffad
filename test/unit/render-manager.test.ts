// Which workload is a module's manager: the template's spec.manager, where the manifest put it.
import { describe, expect, it } from 'vitest';
import { managerOf, parseManifest } from '../../src/activities/install/render';

const manifest = parseManifest(
  'apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: first}\n---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {name: op, namespace: op-system}\n',
  'kyma-system',
);

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
