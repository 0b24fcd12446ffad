// Small workflow-side helpers (deterministic).
import { workflowInfo } from '@temporalio/workflow';
import type { ReconcileSettings } from './types';

/** Continue-as-new when Temporal suggests it, or past the configured history length. */
export function shouldContinueAsNew(settings: ReconcileSettings): boolean {
  const info = workflowInfo();
  return info.continueAsNewSuggested || (settings.maxHistoryEvents > 0 && info.historyLength >= settings.maxHistoryEvents);
}
