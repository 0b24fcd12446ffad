// The target cluster of a Kyma, as activities need it. What goes wrong with reaching it ends
// as a typed, non-retryable failure naming the Kyma and its kubeconfig Secret (never the
// Secret's content), so the module shows it at once and its workflow tries again on its own
// backoff: a bad Secret is InvalidKubeconfig; a cluster that refuses connections, does not
// answer in time, fails TLS or refuses the credentials is TargetClusterUnreachable.
import type { KymaRef } from '../contract/kyma';
import { ClusterUnreachableError, CredentialError, KubeApiError, type KubeClient } from '../k8s/rest-client';
import { TargetClusterError, type TargetClusters } from '../k8s/target-cluster';
import { permanent } from './failure';

/** "the target cluster of Kyma ns/name (kubeconfig Secret ns/secret)", or the control plane's. */
async function describeTarget(targets: TargetClusters, ref: KymaRef): Promise<string> {
  const secret = await targets.secretOf(ref.namespace, ref.name).catch(() => undefined);
  if (!secret) return `the control-plane cluster (Kyma ${ref.namespace}/${ref.name} has no kubeconfig Secret)`;
  return `the target cluster of Kyma ${ref.namespace}/${ref.name} (kubeconfig Secret ${secret.metadata.namespace}/${secret.metadata.name})`;
}

/** A failure of reaching or using the target cluster as the module shows it; anything else as it is. */
async function targetFailure(err: unknown, targets: TargetClusters, ref: KymaRef): Promise<unknown> {
  if (err instanceof TargetClusterError) return permanent('InvalidKubeconfig', err.message);
  if (err instanceof CredentialError) return permanent('InvalidKubeconfig', `${await describeTarget(targets, ref)}: ${err.message}`);
  if (err instanceof ClusterUnreachableError) {
    return permanent('TargetClusterUnreachable', `${await describeTarget(targets, ref)} is unreachable: its API server ${err.message}; checked again on the module's retry backoff`);
  }
  if (err instanceof KubeApiError && err.status === 401) {
    return permanent('TargetClusterUnreachable', `${await describeTarget(targets, ref)} refused the credentials of its kubeconfig (HTTP 401); renew them in the Secret`);
  }
  return err;
}

/** Runs `fn` with the Kyma's target-cluster client; failures of reaching it are typed. */
export async function onTarget<T>(targets: TargetClusters, ref: KymaRef, fn: (client: KubeClient) => Promise<T>): Promise<T> {
  try {
    return await fn(await targets.clientFor(ref.namespace, ref.name, ref.remote));
  } catch (err) {
    throw await targetFailure(err, targets, ref);
  }
}
