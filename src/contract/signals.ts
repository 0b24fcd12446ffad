// Signals from the bridge to the Kyma workflow. Definitions only: the workflow sets handlers,
// the bridge sends them.
import { defineSignal } from '@temporalio/workflow';
import type { ObservedObject } from './readiness';
import type { SeenVersions } from './seen-versions';

/** Bridge → Kyma workflow: the Kyma object changed. */
export const kymaChanged = defineSignal<[SeenVersions?]>('kymaChanged');
/** Bridge → Kyma workflow: a ModuleTemplate or ModuleReleaseMeta it may use changed. */
export const templatesChanged = defineSignal<[SeenVersions?]>('templatesChanged');
/** Bridge → Kyma workflow: a ModuleTemplate or ModuleReleaseMeta its runtime may see changed (its catalog is synced). */
export const catalogChanged = defineSignal('catalogChanged');
/**
 * What changed for a module: its Manifest (`seen`, the version its reads must reflect), or
 * objects of its in the target cluster (`observed`, the newest view of each). No change (a
 * target cluster that stopped or started answering) means that everything is to be read again.
 */
export interface ResourceChange {
  seen?: SeenVersions;
  observed?: ObservedObject[];
}

/**
 * Bridge → Kyma workflow (signalWithStart): a run of this Kyma's workflow ended without
 * finishing its work: the server terminated it, it failed or timed out. The new run says so.
 */
export interface WorkflowEnded {
  workflowId: string;
  runId: string;
  /** Terminated, Failed or TimedOut. */
  status: string;
  /** When it ended (ISO 8601). */
  at: string;
  /** Why, as the server recorded it (the termination's reason, the failure's message). */
  reason: string;
}
export const workflowEnded = defineSignal<[WorkflowEnded]>('workflowEnded');

/** Bridge → Kyma workflow: what changed for its modules, one entry per module. */
export interface ModuleChange {
  module: string;
  change?: ResourceChange;
}
export const modulesChanged = defineSignal<[ModuleChange[]]>('modulesChanged');
