// Control-plane reads and writes as local activities, for the Kyma's workflow and the modules it
// runs: one marker each, no workflow task of their own, retried until they go through.
import { proxyLocalActivities } from '@temporalio/workflow';
import type { Activities } from '../activities';

export const CONTROL_PLANE_RETRY = { initialInterval: '1 second', maximumInterval: '30 seconds' } as const;

export const controlPlaneActivities = proxyLocalActivities<Activities>({
  startToCloseTimeout: '30 seconds',
  retry: CONTROL_PLANE_RETRY,
});

/**
 * Best effort, a few attempts: an Event that cannot be recorded (its namespace is being deleted,
 * say) or a rollout that cannot be started must not hold anything up.
 */
export const bestEffortActivities = proxyLocalActivities<Activities>({
  startToCloseTimeout: '10 seconds',
  retry: { ...CONTROL_PLANE_RETRY, maximumAttempts: 3 },
});
