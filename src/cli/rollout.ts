// klm rollout status|pause|resume|abort: a channel's rollout as operators follow and steer it,
// through its workflow's query and updates (the same ones the Temporal UI offers); klm rollout
// plan: which Kymas a promotion would move, in wave order, before it is made.
import { Client, Connection, WorkflowNotFoundError, WorkflowUpdateFailedError } from '@temporalio/client';
import { abortRollout, pauseRollout, resumeRollout, rolloutProgress, rolloutWorkflowId, type ChannelRef, type RolloutPolicy, type RolloutProgress } from '../contract/rollout';
import type { Kyma } from '../api/kyma';
import { API_VERSION, type KubeObject } from '../api/shared';
import { rolloutPolicyFor } from '../activities/rollout';
import { rolloutCandidates } from '../decisions/rollout-plan';
import { cutWaves } from '../decisions/rollout-policy';
import type { KlmConfig } from '../infra/config';
import type { KubeClient } from '../k8s/rest-client';

export type RolloutAction = 'status' | 'pause' | 'resume' | 'abort';

export interface RolloutCommand {
  action: RolloutAction;
  channel: ChannelRef;
  reason?: string;
  output: 'table' | 'json';
}

const UPDATES = { pause: pauseRollout, resume: resumeRollout, abort: abortRollout } as const;

/** The progress as people read it: the phase, what it means, and a line per wave. */
export function progressTable(p: RolloutProgress): string {
  const lines = [`${p.module} on ${p.channel}: ${p.version || '(no promotion yet)'}${p.from ? ` (from ${p.from})` : ''}  ${p.phase}`, p.message];
  if (p.waves.length) {
    lines.push('', 'WAVE  KYMAS  DONE  FAILED  UPGRADING  PENDING');
    p.waves.forEach((w, i) => lines.push(`${String(i + 1).padEnd(6)}${String(w.size).padEnd(7)}${String(w.done).padEnd(6)}${String(w.failed).padEnd(8)}${String(w.upgrading).padEnd(11)}${w.pending}`));
  }
  for (const f of p.failed.slice(0, 20)) lines.push(`failed: ${f.kyma}: ${f.message}`);
  return lines.join('\n');
}

export async function rollout(cmd: RolloutCommand, config: Pick<KlmConfig, 'temporalAddress' | 'temporalNamespace'>): Promise<string> {
  if (cmd.action !== 'status' && !cmd.reason?.trim()) throw new Error(`klm rollout ${cmd.action} needs --reason "why" (recorded with the rollout)`);
  const connection = await Connection.connect({ address: config.temporalAddress });
  try {
    const handle = new Client({ connection, namespace: config.temporalNamespace }).workflow.getHandle(rolloutWorkflowId(cmd.channel));
    let progress: RolloutProgress;
    try {
      progress = cmd.action === 'status' ? await handle.query(rolloutProgress) : await handle.executeUpdate(UPDATES[cmd.action], { args: [{ reason: cmd.reason! }] });
    } catch (err) {
      if (err instanceof WorkflowNotFoundError) throw new Error(`no rollout for module ${cmd.channel.module} on channel ${cmd.channel.channel} in namespace ${cmd.channel.namespace}: it has not been promoted since the bridge started watching`);
      if (err instanceof WorkflowUpdateFailedError) throw new Error(`${cmd.action} refused: ${(err.cause)?.message ?? err.message}`);
      throw err;
    }
    return cmd.output === 'json' ? JSON.stringify(progress, null, 2) : progressTable(progress);
  } finally {
    await connection.close();
  }
}

export interface RolloutPlanView {
  module: string;
  channel: string;
  version: string;
  from?: string;
  policy: RolloutPolicy;
  /** The ConfigMap's policy could not be used (the rollout would halt at once). */
  policyProblem?: string;
  waves: string[][];
}

/** What a promotion of the channel to `version` would do now: the Kymas it moves, wave by wave. Applies nothing. */
export async function rolloutPlan(kcp: KubeClient, c: ChannelRef, version: string): Promise<RolloutPlanView> {
  const { items } = await kcp.list<Kyma & KubeObject>(API_VERSION, 'Kyma', { namespace: c.namespace });
  const { kymas, from } = rolloutCandidates(items, c, version);
  const { policy, policyProblem } = await rolloutPolicyFor(kcp, c);
  return { module: c.module, channel: c.channel, version, ...(from ? { from } : {}), policy, ...(policyProblem ? { policyProblem } : {}), waves: cutWaves(kymas, policy) };
}

export function planTable(p: RolloutPlanView): string {
  const total = p.waves.reduce((n, w) => n + w.length, 0);
  const lines = [`${p.module} on ${p.channel} → ${p.version}${p.from ? ` (from ${p.from})` : ''}: ${total} Kymas in ${p.waves.length} waves, soak ${p.policy.soakMs / 1000} s, at most ${p.policy.maxConcurrent} at once, failure budget ${p.policy.failureBudget}`];
  if (p.policyProblem) lines.push(`the policy cannot be used (the rollout would halt at once): ${p.policyProblem}`);
  p.waves.forEach((w, i) => lines.push(`wave ${i + 1} (${w.length}): ${w.join(' ')}`));
  return lines.join('\n');
}
