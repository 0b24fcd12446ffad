// The target cluster of a Kyma, as activities need it. What goes wrong with reaching it ends
// as a typed, non-retryable failure naming the Kyma and its kubeconfig Secret (never the
// Secret's content), so the module shows it at once and its workflow tries again on its own
// backoff: a bad Secret is InvalidKubeconfig; a cluster that refuses connections, does not
// answer in time, fails TLS or refuses the credentials is TargetClusterUnreachable.
import type { KubeObject } from '../api/shared';
import type { KymaRef } from '../contract/kyma';
import { ClusterUnreachableError, CredentialError, KubeApiError, type KubeClient } from '../k8s/rest-client';
import { TargetClusterError, type TargetClusters } from '../k8s/target-cluster';
import { permanent } from './failure';

/** "the target cluster of Kyma ns/name (kubeconfig Secret ns/secret)", or the control plane's. */
function describeTarget(ref: KymaRef, secret: KubeObject | undefined): string {
  if (!secret) return `the control-plane cluster (Kyma ${ref.namespace}/${ref.name} has no kubeconfig Secret)`;
  return `the target cluster of Kyma ${ref.namespace}/${ref.name} (kubeconfig Secret ${secret.metadata.namespace}/${secret.metadata.name})`;
}

/** A failure of reaching or using the target cluster as the module shows it; anything else as it is. */
function targetFailure(err: unknown, where: string): unknown {
  if (err instanceof TargetClusterError) return permanent('InvalidKubeconfig', err.message);
  if (err instanceof CredentialError) return permanent('InvalidKubeconfig', `${where}: ${err.message}`);
  if (err instanceof ClusterUnreachableError) {
    return permanent('TargetClusterUnreachable', `${where} is unreachable: its API server ${err.message}; checked again on the module's retry backoff`);
  }
  if (err instanceof KubeApiError && err.status === 401) {
    return permanent('TargetClusterUnreachable', `${where} refused the credentials of its kubeconfig (HTTP 401); renew them in the Secret`);
  }
  return err;
}

/**
 * Runs `fn` with the Kyma's target-cluster client; failures of reaching it are typed. Looking
 * up the Secret in the control plane is not the target's failure: that one is retried as it is.
 */
export async function onTarget<T>(targets: TargetClusters, ref: KymaRef, fn: (client: KubeClient) => Promise<T>): Promise<T> {
  const secret = await targets.secretOf(ref.namespace, ref.name);
  try {
    return await fn(await targets.clientOf(ref.namespace, ref.name, secret, ref.remote));
  } catch (err) {
    throw targetFailure(err, describeTarget(ref, secret));
  }
}
