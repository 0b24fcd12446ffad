import { describe, expect, it } from 'vitest';
import { loadCrds } from '../../src/k8s/crds';

describe('deploy/crds', () => {
  it('defines the four v1beta2 kinds with a status subresource where upstream has one', async () => {
    const crds = await loadCrds();
    const byKind = Object.fromEntries(crds.map((c) => [c.spec.names.kind, c]));
    expect(Object.keys(byKind).sort()).toEqual(['Kyma', 'Manifest', 'ModuleReleaseMeta', 'ModuleTemplate']);
    for (const crd of crds) {
      expect(crd.spec.group).toBe('operator.kyma-project.io');
      expect(crd.spec.versions.map((v) => v.name)).toEqual(['v1beta2']);
    }
    expect(byKind.Kyma!.spec.versions[0]!.subresources?.status).toEqual({});
    expect(byKind.Manifest!.spec.versions[0]!.subresources?.status).toEqual({});
  });

  it('has the short names upstream has (kubectl get mt, kubectl get mrm), and no others', async () => {
    const crds = await loadCrds();
    const shortNames = Object.fromEntries(crds.map((c) => [c.spec.names.kind, c.spec.names.shortNames ?? []]));
    expect(shortNames).toEqual({ Kyma: [], Manifest: [], ModuleReleaseMeta: ['mrm'], ModuleTemplate: ['mt'] });
  });
});
