// What the lifecycle manager found in a cluster gets back exactly its own labels and
// annotations, and system namespaces are told apart by name (kyma-system: by who created it).
import { describe, expect, it } from 'vitest';
import { FOUND_ANNOTATION, OWNED_BY_ANNOTATION } from '../../src/api/names';
import { LABELS, type KubeObject } from '../../src/api/shared';
import { foundMetadata, isSystemNamespace, restorePatch } from '../../src/activities/install/ownership';

const ns = (name: string, labels?: Record<string, string>, annotations?: Record<string, string>): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Namespace',
  metadata: { name, ...(labels ? { labels } : {}), ...(annotations ? { annotations } : {}) },
});

describe('an object found there', () => {
  const own = { labels: { app: 'users', team: 'a', gone: 'soon' }, annotations: { note: 'mine' } };
  const applied = ns('users', { app: 'mod', [LABELS.managedBy]: 'klm-temporal', [LABELS.moduleName]: 'mod' });

  it('gets back the values the apply overwrote, loses what the apply added, and keeps what people changed since', () => {
    const live = ns(
      'users',
      { app: 'mod', team: 'b', [LABELS.managedBy]: 'klm-temporal', [LABELS.moduleName]: 'mod' },
      { note: 'mine', [FOUND_ANNOTATION]: JSON.stringify(own), [OWNED_BY_ANNOTATION]: 'kcp/k1/mod' },
    );
    expect(foundMetadata(live)).toEqual(own);
    expect(restorePatch(live, own, applied)).toEqual({
      labels: { app: 'users', gone: 'soon', [LABELS.managedBy]: null, [LABELS.moduleName]: null },
      annotations: { [OWNED_BY_ANNOTATION]: null, [FOUND_ANNOTATION]: null },
    });
  });

  it('with a record someone broke, is still found there (never deleted)', () => {
    expect(foundMetadata(ns('x', {}, { [FOUND_ANNOTATION]: '{not json' }))).toEqual({ labels: {}, annotations: {} });
    expect(foundMetadata(ns('x'))).toBeUndefined();
  });
});

describe('system namespaces', () => {
  it('are the cluster’s own by name, and kyma-system unless the lifecycle manager created it', () => {
    for (const name of ['kube-system', 'kube-public', 'kube-node-lease', 'default'])
      expect(isSystemNamespace(ns(name), undefined)).toBe(true);
    expect(isSystemNamespace(ns('users'), ns('users'))).toBe(false);
    expect(isSystemNamespace(ns('kyma-system'), undefined)).toBe(false);
    expect(isSystemNamespace(ns('kyma-system'), ns('kyma-system'))).toBe(true);
    expect(isSystemNamespace(ns('kyma-system'), ns('kyma-system', { [LABELS.managedBy]: 'klm-temporal' }))).toBe(false);
  });
});
