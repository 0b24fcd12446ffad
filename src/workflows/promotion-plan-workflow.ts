// PromotionPlanWorkflow: `klm rollout plan` asks the worker (which holds the registry
// credentials and the control-plane cache) what a promotion would do: the Kymas it would move,
// wave by wave, and the objects it would add, change and remove. It applies nothing and ends.
import { proxyLocalActivities, setWorkflowOptions } from '@temporalio/workflow';
import type { Activities } from '../activities';
import type { PromotionPlanInput, RolloutPlanView } from '../contract/rollout';
import { planView } from '../decisions/rollout-plan';
import { promotionDiff } from './promotion-diff';

const kcp = proxyLocalActivities<Activities>({
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '1 second', maximumAttempts: 5 },
});

export async function promotionPlanWorkflow({
  channel,
  version,
  defaultNamespace,
}: PromotionPlanInput): Promise<RolloutPlanView> {
  const plan = await kcp.planRollout({ channel, version });
  const diff = plan.kymas.length
    ? await promotionDiff({ channel, version, kymas: plan.kymas, defaultNamespace })
    : undefined;
  return planView(channel, version, plan, diff);
}

// Pinned: it ends within a minute, on the version that started it.
setWorkflowOptions({ versioningBehavior: 'PINNED' }, promotionPlanWorkflow);
