// The worker's activity interceptor for its log: a failed attempt is written once per failure
// (src/infra/failure-log.ts), with its reason, the workflow (so the Kyma and module) and when it
// is tried again; an activity that was failing and succeeds gets a line too. The SDK's own line
// per attempt is DEBUG (src/infra/log.ts).
import type { Context, Info } from '@temporalio/activity';
import { ApplicationFailure, CancelledFailure, type Logger } from '@temporalio/common';
import { Runtime, type ActivityInterceptorsFactory } from '@temporalio/worker';
import type { ReconcileSettings } from '../contract/settings';
import { nextAttemptDelayMs } from '../activities/failure';
import { FailureLog, span } from '../infra/failure-log';
import { activityFailureReason } from '../infra/metrics';

/** What happens after Temporal gives up on an activity: the workflows' install backoff. */
export type RetrySchedule = Pick<ReconcileSettings, 'installRetryMs' | 'driftIntervalMs'>;

/**
 * When an attempt that failed with `err` is tried again: by Temporal, after the delay its retry
 * policy (or the failure's own `nextRetryDelay`) sets; else by the workflow, as `afterLast` says.
 */
export function retryOutlook(info: Pick<Info, 'attempt' | 'retryPolicy'>, err: unknown, afterLast: string): string {
  const policy = info.retryPolicy ?? {};
  const type = err instanceof ApplicationFailure ? err.type : undefined;
  if (
    (err instanceof ApplicationFailure && err.nonRetryable) ||
    (type && policy.nonRetryableErrorTypes?.includes(type))
  )
    return `not retried by Temporal (permanent); ${afterLast}`;
  const max = policy.maximumAttempts ?? 0;
  if (max > 0 && info.attempt >= max) return `attempt ${info.attempt} of ${max}, the last; ${afterLast}`;
  const delay = nextAttemptDelayMs(policy, info.attempt, err);
  if (max === 0) return `attempt ${info.attempt}, next in ${span(delay)}, until it succeeds`;
  return `attempt ${info.attempt} of ${max}, next in ${span(delay)}; after the last, ${afterLast}`;
}

/** The module an activity's input names (`module: 'greeter'` or `module: { name: 'greeter' }`), if any. */
export function moduleOfInput(args: unknown[]): string | undefined {
  const m = (args[0] as { module?: unknown } | undefined)?.module;
  if (typeof m === 'string') return m;
  const name = (m as { name?: unknown } | undefined)?.name;
  return typeof name === 'string' ? name : undefined;
}

/**
 * The interceptor. `logger`: where the lines go (the Runtime's logger, at the time of writing).
 * Cancelled attempts (a timeout, the workflow moved on) are not failures of the activity.
 */
export function activityFailureLog(
  schedule: RetrySchedule,
  logger: () => Logger = () => Runtime.instance().logger,
  failures = new FailureLog(),
): ActivityInterceptorsFactory {
  const afterLast =
    `the workflow shows the failure and tries again after ${span(schedule.installRetryMs)}, ` +
    `doubling up to ${span(schedule.driftIntervalMs)}, or at the next change`;
  return (ctx: Context) => ({
    inbound: {
      async execute(input, next) {
        const { info } = ctx;
        // The Kyma's workflow runs its modules: the line names the module the activity is for.
        const module = moduleOfInput(input.args);
        const id = info.workflowExecution?.workflowId;
        const workflowId = `${id ?? `activity ${info.activityId}`}${module ? ` (module ${module})` : ''}`;
        try {
          const result = await next(input);
          const line = failures.succeeded(workflowId, info.activityType, Date.now());
          if (line) logger().info(line);
          return result;
        } catch (err) {
          if (!(err instanceof CancelledFailure) && !ctx.cancellationSignal.aborted) {
            const failure = {
              workflowId,
              activity: info.activityType,
              reason: activityFailureReason(err),
              message: err instanceof Error ? err.message : String(err),
              next: retryOutlook(info, err, afterLast),
            };
            const line = failures.failed(failure, Date.now());
            if (line) logger().warn(line);
          }
          throw err;
        }
      },
    },
  });
}
