// Which Kymas a promotion moves, in the order the waves take them. Pure.
import type { Kyma } from '../api/kyma';
import { effectiveKymaSpec } from '../api/runtime';
import { effectiveChannel, LABELS, MANDATORY_CHANNEL } from '../api/shared';
import type { ChannelRef, PromotionDiff, RolloutPlan, RolloutPlanView } from '../contract/rollout';
import { rolloutPriority } from './label-values';
import { cutWaves } from './rollout-policy';

function priorityOf(k: Kyma): number {
  return rolloutPriority(k.metadata.labels);
}

/**
 * The Kymas of the namespace that follow the module on the channel (not pinned, not being
 * deleted) and do not run `version` yet, ordered by their rollout-priority label (lower first),
 * then by name; and the version most of them run now. On the channel "mandatory": every Kyma
 * that does not list the module itself and is not paused (its status does not show mandatory
 * modules, so those at the version already are admitted too and answer at once).
 */
export function rolloutCandidates(
  kymas: readonly Kyma[],
  c: ChannelRef,
  version: string,
): { kymas: string[]; from?: string } {
  const chosen = kymas.filter((k) => {
    if (k.metadata.namespace !== c.namespace || k.metadata.deletionTimestamp) return false;
    // A Kyma with a runtime follows the modules its runtime's users chose.
    const spec = effectiveKymaSpec(k);
    const m = spec.modules?.find((x) => x.name === c.module);
    if (c.channel === MANDATORY_CHANNEL) return !m && k.metadata.labels?.[LABELS.skipReconciliation] !== 'true';
    if (!m || m.version || m.managed === false) return false;
    if (effectiveChannel(m.channel, spec.channel) !== c.channel) return false;
    const status = k.status?.modules?.find((x) => x.name === c.module);
    return !(status?.version === version && status.state === 'Ready');
  });
  chosen.sort((a, b) => priorityOf(a) - priorityOf(b) || a.metadata.name.localeCompare(b.metadata.name));
  const runs = new Map<string, number>();
  for (const k of chosen) {
    const v = k.status?.modules?.find((x) => x.name === c.module)?.version;
    if (v) runs.set(v, (runs.get(v) ?? 0) + 1);
  }
  const from = [...runs].sort((a, b) => b[1] - a[1])[0]?.[0];
  return { kymas: chosen.map((k) => k.metadata.name), ...(from ? { from } : {}) };
}

/** A promotion's plan as people read it: the planned Kymas cut into the policy's waves, with what the version changes. */
export function planView(c: ChannelRef, version: string, plan: RolloutPlan, diff?: PromotionDiff): RolloutPlanView {
  return {
    module: c.module,
    channel: c.channel,
    version,
    ...(plan.from ? { from: plan.from } : {}),
    policy: plan.policy,
    ...(plan.policyProblem ? { policyProblem: plan.policyProblem } : {}),
    waves: cutWaves(plan.kymas, plan.policy),
    ...(diff ? { diff } : {}),
  };
}
