// The sample fleet of `klm up`: Kymas on different channels and module sets, all targeting the
// local cluster, each with a namespace of its own for its modules' objects.
import type { Kyma } from '../api/kyma';
import { RUNTIME_KYMA } from '../api/runtime';
import { API_VERSION, type KubeObject } from '../api/shared';

export const SAMPLE_NAMESPACE = 'kcp-system';

/** Where the sample Kymas' namespaced objects go: a namespace per Kyma on the shared cluster. */
export const SAMPLE_DEFAULT_NAMESPACE = '{kyma}-system';

/**
 * The newcomer's Kyma: `kyma-system/default`, where a runtime keeps its Kyma and so where klm's
 * `--kyma` looks by default. No modules yet; its namespace gets the sample catalog too (a Kyma is
 * offered the ModuleTemplates of its own namespace), so that `klm module add greeter` works as is.
 */
export function newcomerKyma(): KubeObject {
  return {
    apiVersion: API_VERSION,
    kind: 'Kyma',
    metadata: { ...RUNTIME_KYMA },
    spec: { channel: 'regular', modules: [] } satisfies Kyma['spec'],
  };
}

export function sampleFleet(size: number): KubeObject[] {
  const shapes: Kyma['spec'][] = [
    { channel: 'regular', modules: [{ name: 'greeter' }, { name: 'counter' }] },
    { channel: 'fast', modules: [{ name: 'greeter' }, { name: 'counter' }] },
    { channel: 'regular', modules: [{ name: 'greeter', channel: 'fast' }] },
    { channel: 'regular', modules: [{ name: 'counter', customResourcePolicy: 'Ignore' }] },
    { channel: 'fast', modules: [{ name: 'greeter', version: '1.0.0' }, { name: 'counter' }] },
  ];
  return Array.from({ length: size }, (_, i) => ({
    apiVersion: API_VERSION,
    kind: 'Kyma',
    metadata: { name: `sample-${i + 1}`, namespace: SAMPLE_NAMESPACE },
    spec: shapes[i % shapes.length]!,
  }));
}
