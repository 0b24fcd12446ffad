// How the Kyma workflow runs its activities: their timeouts and retries, in one place.
// Control-plane reads and writes are local activities (one marker each, no task of their own),
// retried until they go through; steps in target clusters are activities of their own that give
// up after a few attempts, so a persistent failure shows as a status (then retried on the next
// change or the backoff), never as an invisible retry loop. An install heartbeats, the other
// steps of a module end within a minute: another worker takes up a lost worker's step soon.
import { proxyActivities, proxyLocalActivities } from '@temporalio/workflow';
import type { Activities } from '../activities';
import { MODULE_INSTALL_RETRY } from '../contract/install-retry';
import { RUNTIME_STEP_RETRY } from '../contract/runtime';

const CONTROL_PLANE_RETRY = { initialInterval: '1 second', maximumInterval: '30 seconds' } as const;
const STEP_RETRY = { ...CONTROL_PLANE_RETRY, maximumAttempts: 5 } as const;

/** Control-plane reads and writes, retried until they go through. */
export const controlPlane = proxyLocalActivities<Activities>({
  startToCloseTimeout: '30 seconds',
  retry: CONTROL_PLANE_RETRY,
});

/** Best effort, a few attempts: a rollout that cannot be started must not hold anything up. */
export const bestEffort = proxyLocalActivities<Activities>({
  startToCloseTimeout: '10 seconds',
  retry: { ...CONTROL_PLANE_RETRY, maximumAttempts: 3 },
});

/** The runtime Kyma's read and status write: a request or two, on every load and status change. */
export const runtimeKyma = proxyLocalActivities<Activities>({
  startToCloseTimeout: '30 seconds',
  retry: RUNTIME_STEP_RETRY,
});

/** The catalog sync and the clean-up in the managed cluster, which may write many objects. */
export const runtime = proxyActivities<Activities>({ startToCloseTimeout: '2 minutes', retry: RUNTIME_STEP_RETRY });

/** Readiness checks that read a target cluster, and the steps of a removal or release. */
export const targetSteps = proxyActivities<Activities>({ startToCloseTimeout: '45 seconds', retry: STEP_RETRY });

/**
 * A Kyma's installs that start together (`installModules`): each attempt of each module may take
 * up to the CRD timeout and a few minutes, and the batch heartbeats so that a lost worker is
 * noticed within 20 s.
 */
export function installer(crdEstablishedTimeoutMs: number) {
  const attempt = crdEstablishedTimeoutMs + 5 * 60_000 + MODULE_INSTALL_RETRY.maximumInterval;
  return proxyActivities<Activities>({
    startToCloseTimeout: MODULE_INSTALL_RETRY.maximumAttempts * attempt,
    heartbeatTimeout: '20 seconds',
    retry: STEP_RETRY,
  });
}
