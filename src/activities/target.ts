// The target cluster of a Kyma, as activities need it. What goes wrong with reaching it ends
// as a typed, non-retryable failure naming the Kyma and its kubeconfig Secret (never the
// Secret's content), so the module shows it at once and its workflow tries again on its own
// backoff: a bad Secret is InvalidKubeconfig; a cluster that refuses connections, does not
// answer in time or fails TLS is TargetClusterUnreachable; one that refuses the kubeconfig's
// credentials (401, or 403 on API discovery) is TargetCredentialsRefused, whichever step met it.
import type { KubeObject } from '../api/shared';
import type { KymaRef } from '../contract/kyma';
import { ClusterUnreachableError, CredentialError, KubeApiError } from '../k8s/request-errors';
import { type KubeClient } from '../k8s/rest-client';
import { kubeconfigDataKey, TargetClusterError, type TargetClusters } from '../k8s/target-cluster';
import { permanent } from './failure';

/** "the target cluster of Kyma ns/name (kubeconfig Secret ns/secret)", or the control plane's. */
function describeTarget(ref: KymaRef, secret: KubeObject | undefined): string {
  if (!secret) return `the control-plane cluster (Kyma ${ref.namespace}/${ref.name} has no kubeconfig Secret)`;
  return `the target cluster of Kyma ${ref.namespace}/${ref.name} (kubeconfig Secret ${secret.metadata.namespace}/${secret.metadata.name})`;
}

/**
 * Whether the cluster refused the kubeconfig's identity itself, not one request of it: a 401, or
 * a 403 on API discovery (which every authenticated user may read). Steps that type their own
 * API errors (the apply's ApplyRejected) leave these to `onTarget`.
 */
export function refusesCredentials(err: unknown): err is KubeApiError {
  return err instanceof KubeApiError && (err.status === 401 || (err.status === 403 && err.discovery));
}

/** What a user does about refused credentials: renew them where they are. */
function renew(secret: KubeObject | undefined): string {
  if (!secret) return "renew the worker's own credentials (its ServiceAccount token, or the KUBECONFIG it runs with)";
  return (
    `renew the credentials (a new token, or a new client certificate and key) in Secret ` +
    `${secret.metadata.namespace}/${secret.metadata.name}, data key ` +
    `"${kubeconfigDataKey(secret)}"; checked again on the retry backoff`
  );
}

/** A failure of reaching or using the target cluster as the module shows it; anything else as it is. */
function targetFailure(err: unknown, ref: KymaRef, secret: KubeObject | undefined): unknown {
  const where = describeTarget(ref, secret);
  if (err instanceof TargetClusterError) return permanent('InvalidKubeconfig', err.message);
  if (err instanceof CredentialError) return permanent('InvalidKubeconfig', `${where}: ${err.message}`);
  if (err instanceof ClusterUnreachableError) {
    return permanent(
      'TargetClusterUnreachable',
      `${where} is unreachable: its API server ${err.message}; checked again on the module's retry backoff`,
    );
  }
  if (refusesCredentials(err)) {
    const why =
      err.status === 401
        ? `refused the credentials of its kubeconfig (HTTP 401 Unauthorized: ${
            err.clientCertificate
              ? `its client certificate ${err.clientCertificate}`
              : 'the token or client certificate is not accepted, has expired or was revoked'
          })`
        : 'lets the identity of its kubeconfig do nothing at all (HTTP 403 on API discovery, which ' +
          'every authenticated user may read: the kubeconfig carries no credentials the API server ' +
          'recognises, or the identity was stripped of every right)';
    return permanent('TargetCredentialsRefused', `${where} ${why}: ${renew(secret)}`);
  }
  return err;
}

/**
 * Runs `fn` with the Kyma's target-cluster client; failures of reaching it are typed. Looking
 * up the Secret in the control plane is not the target's failure: that one is retried as it is.
 */
export async function onTarget<T>(
  targets: TargetClusters,
  ref: KymaRef,
  fn: (client: KubeClient) => Promise<T>,
): Promise<T> {
  const secret = await targets.secretOf(ref.namespace, ref.name);
  try {
    return await fn(await targets.clientOf(ref.namespace, ref.name, secret, ref.remote));
  } catch (err) {
    throw targetFailure(err, ref, secret);
  }
}
