// The workflow bundle's entry point: every workflow type the worker runs.
export { kymaWorkflow } from './kyma-workflow';
export { rolloutWorkflow } from './rollout-workflow';
export { promotionPlanWorkflow } from './promotion-plan-workflow';
