// The ConfigMaps operators write policies in (rollout, maintenance windows): read when needed. A
// read the worker's role does not allow is the operator's to fix, not a failure to retry: it
// comes back as a problem the policy's users show.
import type { KubeObject } from '../api/shared';
import { KubeApiError } from '../k8s/request-errors';
import { type KubeClient } from '../k8s/rest-client';

export type PolicyConfigMap = { data?: Record<string, string> } | { problem: string };

/** The ConfigMap's data (none when it does not exist), or why it cannot be read. */
export async function readPolicyConfigMap(kcp: KubeClient, namespace: string, name: string): Promise<PolicyConfigMap> {
  try {
    const cm = await kcp.get<KubeObject & { data?: Record<string, string> }>('v1', 'ConfigMap', name, namespace);
    return cm?.data ? { data: cm.data } : {};
  } catch (err) {
    if (err instanceof KubeApiError && err.status === 403)
      return {
        problem: `ConfigMap ${namespace}/${name} cannot be read: the worker may not get ConfigMaps in ${namespace} (grant it, see deploy/kustomize/base)`,
      };
    throw err;
  }
}
