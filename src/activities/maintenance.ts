// The maintenance-window policy (upstream's format) from a ConfigMap in the control plane
// (KLM_MAINTENANCE_POLICY = namespace/name, key `policy.json` as upstream's file), and the window
// each resolved module that requires downtime may move in, by the activity's clock.
import type { ModuleTemplate } from '../api/moduletemplate';
import { API_VERSION, type KubeObject } from '../api/shared';
import type { KymaSnapshot } from '../contract/kyma';
import type { Downtime, Resolution } from '../contract/module';
import { parsePolicy, resolveWindow } from '../decisions/maintenance-window';
import type { ObjectCache } from '../k8s/object-cache';
import type { KubeClient } from '../k8s/rest-client';
import { recordMaintenancePolicyRead } from '../infra/metrics';
import { readPolicyConfigMap } from './policy-configmap';

/** The ConfigMap key of the policy: upstream's policy file name. */
export const POLICY_KEY = 'policy.json';

export interface PolicyRef {
  namespace: string;
  name: string;
}

type Policy = ReturnType<typeof parsePolicy> | undefined;

/** The policy as it is now: none (no ConfigMap, or none configured: no restriction), or why it cannot be used. */
async function policyNow(kcp: KubeClient, ref: PolicyRef): Promise<Policy> {
  const cm = await readPolicyConfigMap(kcp, ref.namespace, ref.name);
  if ('problem' in cm) return { problem: cm.problem };
  const json = cm.data?.[POLICY_KEY];
  if (json === undefined) return undefined;
  const parsed = parsePolicy(json);
  return 'problem' in parsed
    ? { problem: `ConfigMap ${ref.namespace}/${ref.name} key ${POLICY_KEY}: ${parsed.problem}` }
    : parsed;
}

/**
 * `policyNow`, recorded as upstream's lifecycle_mgr_maintenance_window_config_read_success: 1 for
 * a policy that can be used; 0 when there is none (as upstream without its policy file), when it
 * cannot be read, or when it is invalid.
 */
async function readPolicy(kcp: KubeClient, ref: PolicyRef): Promise<Policy> {
  try {
    const policy = await policyNow(kcp, ref);
    recordMaintenancePolicyRead(policy !== undefined && !('problem' in policy));
    return policy;
  } catch (err) {
    recordMaintenancePolicyRead(false);
    throw err;
  }
}

/** Reads the policy once (the worker, as it starts): why it cannot be used, if it cannot. */
export async function checkMaintenancePolicy(kcp: KubeClient, ref: PolicyRef): Promise<string | undefined> {
  try {
    const policy = await readPolicy(kcp, ref);
    if (!policy)
      return `ConfigMap ${ref.namespace}/${ref.name} or its key ${POLICY_KEY} does not exist: no upgrade waits for a maintenance window`;
    return 'problem' in policy ? policy.problem : undefined;
  } catch (err) {
    return `ConfigMap ${ref.namespace}/${ref.name} cannot be read: ${err instanceof Error ? err.message : String(err)}`;
  }
}

/**
 * Adds `downtime` to the resolutions whose template requires downtime, unless the Kyma skips
 * maintenance windows or no policy is configured; the policy is read only when one does.
 */
export async function withDowntime(
  kcp: KubeClient,
  cache: ObjectCache,
  ref: PolicyRef | undefined,
  snapshot: KymaSnapshot,
  resolutions: Resolution[],
): Promise<Resolution[]> {
  if (!ref || snapshot.skipMaintenanceWindows) return resolutions;
  const requires = await Promise.all(
    resolutions.map(async (r) => {
      if (!r.module) return false;
      const t = await cache.get<ModuleTemplate & KubeObject>(
        API_VERSION,
        'ModuleTemplate',
        r.module.template.name,
        r.module.template.namespace,
      );
      return t?.spec.requiresDowntime === true;
    }),
  );
  if (!requires.some(Boolean)) return resolutions;
  const policy = await readPolicy(kcp, ref);
  if (!policy) return resolutions;
  let downtime: Downtime;
  if ('problem' in policy) downtime = { problem: policy.problem };
  else {
    const window = resolveWindow(policy.policy, snapshot.runtime ?? {}, Date.now());
    downtime = window ? { window } : {};
  }
  return resolutions.map((r, i) => (requires[i] ? { ...r, downtime } : r));
}
