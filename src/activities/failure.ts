// Typed activity failures: the failure's type is a Reason (src/api/reasons.ts), so the
// workflow maps it to the module's state through the one table. Permanent ones are
// non-retryable: the module shows them at once instead of an invisible retry loop.
import { ApplicationFailure } from '@temporalio/activity';
import type { RetryPolicy } from '@temporalio/common';
import type { Reason } from '../api/reasons';
import { MODULE_INSTALL_RETRY } from '../contract/install-retry';

export function permanent(reason: Reason, message: string): ApplicationFailure {
  return ApplicationFailure.nonRetryable(message, reason);
}

export function transient(reason: Reason, message: string): ApplicationFailure {
  return ApplicationFailure.retryable(message, reason);
}

/**
 * The longest delay a `Retry-After` may impose: an install's longest wait between its attempts
 * (./install/install-batch.ts), which its Kyma's other installs wait through. A registry that
 * asks for longer is asked again after this; after the install's last attempt the module shows
 * the failure, and its workflow tries again after its own backoff.
 */
export const MAX_RETRY_AFTER_MS = MODULE_INSTALL_RETRY.maximumInterval;

/** Retryable, after the delay the other side asked for (e.g. a registry's Retry-After), at most MAX_RETRY_AFTER_MS. */
export function retryAfter(reason: Reason, message: string, delayMs: number): ApplicationFailure {
  return ApplicationFailure.create({
    nonRetryable: false,
    nextRetryDelay: Math.min(Math.max(delayMs, 1), MAX_RETRY_AFTER_MS),
    type: reason,
    message,
  });
}

/**
 * The SDK hands activities their retry policy in milliseconds, and our failures set their
 * `nextRetryDelay` so (`retryAfter`); a duration as text is taken as none.
 */
function millis(d: unknown): number | undefined {
  return typeof d === 'number' ? d : undefined;
}

/**
 * The delay before the attempt after attempt `attempt` failed with `err`: the failure's own
 * `nextRetryDelay` (a registry's Retry-After), else `policy`'s backoff, as Temporal computes it.
 */
export function nextAttemptDelayMs(policy: RetryPolicy, attempt: number, err: unknown): number {
  const own = err instanceof ApplicationFailure ? millis(err.nextRetryDelay) : undefined;
  if (own !== undefined) return own;
  const initial = millis(policy.initialInterval) ?? 1000;
  const most = millis(policy.maximumInterval) ?? 100 * initial;
  return Math.min(initial * (policy.backoffCoefficient ?? 2) ** (attempt - 1), most);
}
