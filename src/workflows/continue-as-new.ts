// When a never-ending workflow starts a fresh run (deterministic: workflow info only).
import { workflowInfo } from '@temporalio/workflow';
import type { ReconcileSettings } from '../contract/settings';

/** Continue-as-new when Temporal suggests it, or past the configured history length. */
export function shouldContinueAsNew(settings: ReconcileSettings): boolean {
  const info = workflowInfo();
  return (
    info.continueAsNewSuggested || (settings.maxHistoryEvents > 0 && info.historyLength >= settings.maxHistoryEvents)
  );
}
