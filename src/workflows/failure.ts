// An activity's failure as the module shows it: its typed reason (see src/api/reasons.ts) and
// message. Activities fail as ActivityFailure (local activities with the ApplicationFailure or
// TimeoutFailure itself); anything else (a bug, a cancellation) is not a module failure and is
// thrown on.
import { ActivityFailure, ApplicationFailure, CancelledFailure, TimeoutFailure } from '@temporalio/workflow';
import { reasonOf } from '../api/reasons';
import type { Readiness } from '../contract/readiness';

export function failureOf(err: unknown): Readiness {
  const cause = err instanceof ActivityFailure ? err.cause : err;
  const what = err instanceof ActivityFailure ? `${err.activityType}: ` : '';
  if (cause instanceof CancelledFailure) throw err;
  if (cause instanceof ApplicationFailure) return { reason: reasonOf(cause.type), message: cause.message };
  if (cause instanceof TimeoutFailure)
    return {
      reason: 'Failed',
      message: `${what}${(cause.timeoutType ?? 'TIMEOUT').toLowerCase().replaceAll('_', ' ')} timeout`,
    };
  if (err instanceof ActivityFailure)
    return { reason: 'Failed', message: `${what}${cause instanceof Error ? cause.message : err.message}` };
  throw err;
}
