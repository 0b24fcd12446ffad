// The fleet's states as the bridge exports them from its informers.
import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../../src/api/shared';
import { fleetStates } from '../../src/starter/fleet-states';

const obj = (kind: string, name: string, labels: Record<string, string>, state?: string): KubeObject => ({ apiVersion: 'operator.kyma-project.io/v1beta2', kind, metadata: { name, namespace: 'kcp', labels }, ...(state ? { status: { state } } : {}) });

describe('fleet states', () => {
  it("takes each Kyma's state with upstream's shoot and instance_id labels, and each module's from its Manifest", () => {
    const kymas = [obj('Kyma', 'k1', { 'kyma-project.io/shoot-name': 's1', 'kyma-project.io/instance-id': 'i1' }, 'Ready'), obj('Kyma', 'k2', {}, 'Error')];
    const manifests = [obj('Manifest', 'k1-greeter', { 'operator.kyma-project.io/kyma-name': 'k1', 'operator.kyma-project.io/module-name': 'greeter' }, 'Ready')];
    expect(fleetStates(kymas, manifests)).toEqual({
      kymas: [{ namespace: 'kcp', name: 'k1', state: 'Ready', shoot: 's1', instanceId: 'i1' }, { namespace: 'kcp', name: 'k2', state: 'Error' }],
      modules: [{ namespace: 'kcp', kyma: 'k1', module: 'greeter', state: 'Ready' }],
    });
  });

  it('leaves out what has no state yet, and Manifests without their labels', () => {
    expect(fleetStates([obj('Kyma', 'new', {})], [obj('Manifest', 'x', {}, 'Ready'), obj('Manifest', 'k-m', { 'operator.kyma-project.io/kyma-name': 'k', 'operator.kyma-project.io/module-name': 'm' })])).toEqual({ kymas: [], modules: [] });
  });
});
