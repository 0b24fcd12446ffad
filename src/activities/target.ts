// The target cluster of a Kyma, as activities need it: a bad kubeconfig Secret is a typed,
// non-retryable failure (the module shows it), not an endless retry.
import type { KymaRef } from '../contract/kyma';
import type { KubeClient } from '../k8s/rest-client';
import { TargetClusterError, type TargetClusters } from '../k8s/target-cluster';
import { permanent, transient } from './failure';

export async function targetClient(targets: TargetClusters, ref: KymaRef): Promise<KubeClient> {
  try {
    return await targets.clientFor(ref.namespace, ref.name, ref.remote);
  } catch (err) {
    if (err instanceof TargetClusterError) throw permanent('InvalidKubeconfig', err.message);
    throw transient('TargetClusterUnreachable', `cannot reach the target cluster of Kyma ${ref.namespace}/${ref.name}: ${(err as Error).message}`);
  }
}
