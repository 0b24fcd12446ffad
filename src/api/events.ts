// The Kubernetes Events this product records on a Kyma, one per lifecycle step.
export const EVENT_REASONS = [
  'ModuleInstalling',
  'ModuleUpgrading',
  'ModuleRemoving',
  'DeletionBlocked',
  'DeletingObjects',
  'ModuleRemoved',
  'ObjectsLeftInPlace',
  'ModuleUnmanaged',
  'DependencyTimeout',
  'Deleting',
  'Deleted',
  'TargetClusterGone',
  'TargetClusterSwitched',
  'KymaGone',
  'MandatoryModuleFailed',
  'RuntimeKymaTaken',
  'RuntimeCleanupFailed',
  'RolloutStarted',
  'WorkflowEnded',
  'ModuleNameMismatch',
  'InvalidLabelValue',
] as const;

export type EventReason = (typeof EVENT_REASONS)[number];

export interface KymaEvent {
  type: 'Normal' | 'Warning';
  reason: EventReason;
  message: string;
}
