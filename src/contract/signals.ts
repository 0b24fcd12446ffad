// Signals between the bridge, the Kyma workflow and its module workflows. Definitions only:
// workflows set handlers, the bridge and activities send them.
import { defineSignal } from '@temporalio/workflow';
import type { DesiredModule } from './module';
import type { HostedModule } from './workflow-inputs';
import type { ModuleReport, ObservedObject } from './readiness';
import type { SeenVersions } from './seen-versions';

/** Bridge → Kyma workflow: the Kyma object changed. */
export const kymaChanged = defineSignal<[SeenVersions?]>('kymaChanged');
/** Bridge → Kyma workflow: a ModuleTemplate or ModuleReleaseMeta it may use changed. */
export const templatesChanged = defineSignal<[SeenVersions?]>('templatesChanged');
/** Bridge → Kyma workflow: a ModuleTemplate or ModuleReleaseMeta its runtime may see changed (its catalog is synced). */
export const catalogChanged = defineSignal('catalogChanged');
/** Module workflow (through publishModuleReport) → Kyma workflow: the module's status changed. */
export const moduleReport = defineSignal<[ModuleReport]>('moduleReport');
/** Kyma workflow → module workflow: what should be installed now (a removal under way stops). */
export const desiredModule = defineSignal<[DesiredModule]>('desiredModule');
/**
 * What changed for a module workflow: its Manifest (`seen`, the version its reads must
 * reflect), or objects of its in the target cluster (`observed`, the newest view of each). A
 * signal without a payload (a target cluster that stopped or started answering) means that
 * everything is to be read again.
 */
export interface ResourceChange {
  seen?: SeenVersions;
  observed?: ObservedObject[];
}

/** Bridge → module workflow: the module's CR, manager or Manifest changed, or its cluster's health. */
export const resourceChanged = defineSignal<[ResourceChange?]>('resourceChanged');
/** Kyma workflow → module workflow: the module left the spec (or the Kyma is deleted). */
export const removeModule = defineSignal('removeModule');
/** Module workflow → Kyma workflow: the module is removed or released; drop its entry. */
export const moduleRemoved = defineSignal<[string]>('moduleRemoved');
/** Kyma workflow → module workflow: managed became false (or the Kyma is gone); release the objects and end. */
export const unmanageModule = defineSignal('unmanageModule');

/**
 * Bridge → Kyma workflow (signalWithStart): a run of this Kyma's workflow, or of one of its
 * module workflows (`module`), ended without finishing its work: the server terminated it, it
 * failed or timed out. The Kyma says so, and a module's workflow is started again.
 */
export interface WorkflowEnded {
  workflowId: string;
  runId: string;
  module?: string;
  /** Terminated, Failed or TimedOut. */
  status: string;
  /** When it ended (ISO 8601). */
  at: string;
  /** Why, as the server recorded it (the termination's reason, the failure's message). */
  reason: string;
}
export const workflowEnded = defineSignal<[WorkflowEnded]>('workflowEnded');

/**
 * Bridge → Kyma workflow: what changed for its modules, one entry per module
 * (`resourceChanged`'s payload, for the modules the Kyma's workflow runs).
 */
export interface ModuleChange {
  module: string;
  change?: ResourceChange;
}
export const modulesChanged = defineSignal<[ModuleChange[]]>('modulesChanged');
/** Kyma workflow → module workflow of a run begun before modules were hosted: send your state and end. */
export const handOver = defineSignal('handOver');
/** Module workflow → Kyma workflow: the module's state, which the Kyma's workflow runs from now on. */
export const handedOver = defineSignal<[HostedModule]>('handedOver');
