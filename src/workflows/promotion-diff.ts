// The object-level difference of a promotion, as the rollout and plan workflows fetch it: an
// activity (it may pull layers from a registry), whose failure becomes a problem in the plan
// rather than a stuck workflow.
import { ApplicationFailure, proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities';
import type { DiffPromotionInput } from '../activities/promotion-diff';
import type { PromotionDiff } from '../contract/rollout';

const registry = proxyActivities<Activities>({
  startToCloseTimeout: '10 minutes',
  heartbeatTimeout: '2 minutes',
  retry: { initialInterval: '2 seconds', maximumAttempts: 3 },
});

export async function promotionDiff(input: DiffPromotionInput): Promise<PromotionDiff> {
  try {
    return await registry.diffPromotion(input);
  } catch (err) {
    const cause = (err as { cause?: unknown }).cause;
    const message =
      cause instanceof ApplicationFailure ? `${cause.type ?? 'Error'}: ${cause.message}` : (err as Error).message;
    return {
      version: input.version,
      groups: [{ kymas: input.kymas, added: [], changed: [], removed: [], problem: message }],
    };
  }
}
