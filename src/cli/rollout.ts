// klm rollout status|pause|resume|abort: a channel's rollout as operators follow and steer it,
// through its workflow's query and updates (the same ones the Temporal UI offers); klm rollout
// plan: which Kymas a promotion would move, in wave order, and which objects it would add,
// change and remove, before it is made (computed by the worker, which holds the registry
// credentials; nothing is applied).
import {
  Client,
  Connection,
  WorkflowFailedError,
  WorkflowNotFoundError,
  WorkflowUpdateFailedError,
} from '@temporalio/client';
import {
  abortRollout,
  pauseRollout,
  PROMOTION_PLAN_WORKFLOW,
  promotionPlanWorkflowId,
  resumeRollout,
  rolloutProgress,
  rolloutWorkflowId,
  type ChannelRef,
  type PromotionDiffGroup,
  type PromotionPlanInput,
  type RolloutPlanView,
  type RolloutProgress,
} from '../contract/rollout';
import type { KlmConfig } from '../infra/config';

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
  const lines = [
    `${p.module} on ${p.channel}: ${p.version || '(no promotion yet)'}${p.from ? ` (from ${p.from})` : ''}  ${p.phase}`,
    p.message,
  ];
  if (p.waves.length) {
    lines.push('', 'WAVE  KYMAS  DONE  FAILED  UPGRADING  PENDING');
    p.waves.forEach((w, i) =>
      lines.push(
        [i + 1, w.size, w.done, w.failed, w.upgrading].map((n, c) => String(n).padEnd([6, 7, 6, 8, 11][c]!)).join('') +
          w.pending,
      ),
    );
  }
  for (const f of p.failed.slice(0, 20)) lines.push(`failed: ${f.kyma}: ${f.message}`);
  return lines.join('\n');
}

export async function rollout(cmd: RolloutCommand, config: Pick<KlmConfig, 'temporal'>): Promise<string> {
  if (cmd.action !== 'status' && !cmd.reason?.trim())
    throw new Error(`klm rollout ${cmd.action} needs --reason "why" (recorded with the rollout)`);
  const connection = await Connection.connect(config.temporal.connectionOptions);
  try {
    const handle = new Client({ connection, namespace: config.temporal.namespace }).workflow.getHandle(
      rolloutWorkflowId(cmd.channel),
    );
    let progress: RolloutProgress;
    try {
      progress =
        cmd.action === 'status'
          ? await handle.query(rolloutProgress)
          : await handle.executeUpdate(UPDATES[cmd.action], { args: [{ reason: cmd.reason! }] });
    } catch (err) {
      if (err instanceof WorkflowNotFoundError)
        throw new Error(
          `no rollout for module ${cmd.channel.module} on channel ${cmd.channel.channel} in namespace ` +
            `${cmd.channel.namespace}: it has not been promoted since the bridge started watching`,
          { cause: err },
        );
      if (err instanceof WorkflowUpdateFailedError)
        throw new Error(`${cmd.action} refused: ${err.cause?.message ?? err.message}`, { cause: err });
      throw err;
    }
    return cmd.output === 'json' ? JSON.stringify(progress, null, 2) : progressTable(progress);
  } finally {
    await connection.close();
  }
}

/** A channel's rollout, or why there is none to show. */
export interface ChannelRollout {
  module: string;
  channel: string;
  progress?: RolloutProgress;
  problem?: string;
}

/** The rollouts of these channels, over one connection; a channel never promoted has none. */
export async function rollouts(channels: ChannelRef[], config: Pick<KlmConfig, 'temporal'>): Promise<ChannelRollout[]> {
  const connection = await Connection.connect(config.temporal.connectionOptions);
  try {
    const client = new Client({ connection, namespace: config.temporal.namespace });
    return await Promise.all(
      channels.map(async (c): Promise<ChannelRollout> => {
        try {
          return {
            module: c.module,
            channel: c.channel,
            progress: await client.workflow.getHandle(rolloutWorkflowId(c)).query(rolloutProgress),
          };
        } catch (err) {
          if (err instanceof WorkflowNotFoundError)
            return { module: c.module, channel: c.channel, problem: 'not promoted since the bridge started watching' };
          return { module: c.module, channel: c.channel, problem: (err as Error).message };
        }
      }),
    );
  } finally {
    await connection.close();
  }
}

/** How long the command waits for a worker to compute the plan. */
const PLAN_TIMEOUT = '5 minutes';

/**
 * What a promotion of the channel to `version` would do now: the Kymas it moves, wave by wave,
 * and the objects it changes. Computed by a short workflow on the worker's task queue (the
 * worker reads its cache and the registries); applies nothing.
 */
export async function rolloutPlan(
  c: ChannelRef,
  version: string,
  config: Pick<KlmConfig, 'temporal' | 'taskQueue' | 'settings'>,
): Promise<RolloutPlanView> {
  const connection = await Connection.connect(config.temporal.connectionOptions);
  try {
    const client = new Client({ connection, namespace: config.temporal.namespace });
    return await client.workflow.execute<(input: PromotionPlanInput) => Promise<RolloutPlanView>>(
      PROMOTION_PLAN_WORKFLOW,
      {
        workflowId: promotionPlanWorkflowId(c, version),
        taskQueue: config.taskQueue,
        args: [{ channel: c, version, defaultNamespace: config.settings.defaultNamespace }],
        // Asked twice at once: both wait for the same plan.
        workflowIdConflictPolicy: 'USE_EXISTING',
        workflowExecutionTimeout: PLAN_TIMEOUT,
      },
    );
  } catch (err) {
    if (err instanceof WorkflowFailedError && /timed out/i.test(err.message + String(err.cause))) {
      throw new Error(
        `no worker on task queue "${config.taskQueue}" computed the plan within ${PLAN_TIMEOUT}: is the worker (klm up) running, with KLM_TASK_QUEUE as here?`,
        { cause: err },
      );
    }
    throw err;
  } finally {
    await connection.close();
  }
}

function groupLines(g: PromotionDiffGroup): string[] {
  const who =
    `${g.kymas.length} Kyma${g.kymas.length === 1 ? '' : 's'} ` +
    `${g.from ? `on ${g.from}` : 'without the module yet'} ` +
    `(${g.kymas.slice(0, 3).join(', ')}${g.kymas.length > 3 ? ', …' : ''})`;
  if (g.problem) return [`${who}: cannot tell: ${g.problem}`];
  const lines = [`${who}: ${g.added.length} added, ${g.changed.length} changed, ${g.removed.length} removed`];
  for (const [mark, names] of [
    ['+', g.added],
    ['~', g.changed],
    ['-', g.removed],
  ] as const)
    for (const n of names) lines.push(`  ${mark} ${n}`);
  if (g.more) lines.push(`  … and ${g.more} more`);
  return lines;
}

export function planTable(p: RolloutPlanView): string {
  const total = p.waves.reduce((n, w) => n + w.length, 0);
  const head = `${p.module} on ${p.channel} → ${p.version}${p.from ? ` (from ${p.from})` : ''}: ${total} Kymas`;
  const lines: string[] = [];
  if (p.policyProblem) {
    // No waves to show: those of the built-in default are not what would happen.
    lines.push(`${head}; the rollout would halt at once, for its policy cannot be used: ${p.policyProblem}`);
    lines.push(`the Kymas it would move once the policy is fixed: ${p.waves.flat().join(' ') || 'none'}`);
  } else {
    lines.push(
      `${head} in ${p.waves.length} waves, soak ${p.policy.soakMs / 1000} s, at most ` +
        `${p.policy.maxConcurrent} at once, failure budget ${p.policy.failureBudget}`,
    );
    p.waves.forEach((w, i) => lines.push(`wave ${i + 1} (${w.length}): ${w.join(' ')}`));
  }
  if (p.diff) lines.push('', `what ${p.version} changes, object by object:`, ...p.diff.groups.flatMap(groupLines));
  return lines.join('\n');
}
