// klm module promote: moves a channel of a module to a version by editing its ModuleReleaseMeta,
// as module authors do, after showing the plan of the rollout that the promotion starts (the
// Kymas it moves, wave by wave, and what changes in them) and asking. A channel whose rollout
// policy cannot be used (its rollout would halt at once) is not moved unless asked to (--force).
import type { ModuleReleaseMeta } from '../api/modulereleasemeta';
import type { ModuleTemplate } from '../api/moduletemplate';
import { API_VERSION, ROLLOUT_POLICY_CONFIGMAP, type KubeObject } from '../api/shared';
import type { RolloutPlanView } from '../contract/rollout';
import { KubeApiError } from '../k8s/request-errors';
import { type KubeClient } from '../k8s/rest-client';
import { Refused } from './output';

type ReleaseMeta = ModuleReleaseMeta & KubeObject;

/** A channel of a module to move to a version (what `klm module promote` asks). */
export interface PromoteRequest {
  namespace: string;
  module: string;
  channel: string;
  version: string;
}

/** The ModuleReleaseMeta to edit and the version the channel has now; refuses what cannot be promoted. */
export async function checkPromotion(
  kube: KubeClient,
  p: PromoteRequest,
): Promise<{ meta: ReleaseMeta; from?: string }> {
  const meta = await kube.get<ReleaseMeta>(API_VERSION, 'ModuleReleaseMeta', p.module, p.namespace);
  if (!meta)
    throw new Refused(`module ${p.module} has no ModuleReleaseMeta in namespace ${p.namespace}: publish it first`);
  if (meta.spec.mandatory)
    throw new Refused(
      `module ${p.module} is mandatory (version ${meta.spec.mandatory.version}): it has no ` +
        `channels; edit spec.mandatory.version of its ModuleReleaseMeta instead`,
    );
  const { items } = await kube.list<ModuleTemplate & KubeObject>(API_VERSION, 'ModuleTemplate', {
    namespace: p.namespace,
  });
  const versions = items.filter((t) => t.spec.moduleName === p.module).map((t) => t.spec.version);
  if (!versions.includes(p.version))
    throw new Refused(
      `module ${p.module} has no ModuleTemplate for version ${p.version} in namespace ${p.namespace}; it has: ${versions.join(', ') || 'none'}`,
    );
  const from = meta.spec.channels?.find((c) => c.channel === p.channel)?.version;
  return { meta, ...(from ? { from } : {}) };
}

/** Why the promotion is not made: its rollout's policy cannot be used (the problem names the ConfigMap's key and what is wrong). */
export function policyRefusal(p: PromoteRequest, plan: RolloutPlanView): string | undefined {
  if (!plan.policyProblem) return undefined;
  return (
    `channel ${p.channel} of module ${p.module} not moved: its rollout would halt at once, for ` +
    `its policy cannot be used: ${plan.policyProblem}; fix that (kubectl edit configmap ` +
    `${ROLLOUT_POLICY_CONFIGMAP} -n ${p.namespace}), or move the channel anyway with --force ` +
    `(the rollout then halts until the policy is fixed and it is resumed)`
  );
}

/** Writes the channel's new version, guarded by the resourceVersion the check read. */
export async function promote(kube: KubeClient, p: PromoteRequest, meta: ReleaseMeta): Promise<void> {
  const channels = [
    ...(meta.spec.channels ?? []).filter((c) => c.channel !== p.channel),
    { channel: p.channel, version: p.version },
  ];
  try {
    await kube.mergePatch(API_VERSION, 'ModuleReleaseMeta', p.module, p.namespace, {
      metadata: { resourceVersion: meta.metadata.resourceVersion },
      spec: { channels },
    });
  } catch (err) {
    if (err instanceof KubeApiError && err.status === 409)
      throw new Refused(
        `the ModuleReleaseMeta ${p.namespace}/${p.module} changed while the plan was shown: run the command again to see the plan as it is now`,
      );
    throw err;
  }
}
