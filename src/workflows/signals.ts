// Signals between the bridge, the Kyma workflow and its module workflows.
import { defineSignal } from '@temporalio/workflow';
import type { ModuleReport, ResolvedModule } from './types';

/** Bridge → Kyma workflow: the Kyma object changed. */
export const kymaChanged = defineSignal('kymaChanged');
/** Bridge → Kyma workflow: a ModuleTemplate or ModuleReleaseMeta in its namespace changed. */
export const templatesChanged = defineSignal('templatesChanged');
/** Module workflow → Kyma workflow: the module's status changed. */
export const moduleReport = defineSignal<[ModuleReport]>('moduleReport');
/** Kyma workflow → module workflow: what should be installed now. */
export const desiredModule = defineSignal<[ResolvedModule]>('desiredModule');
/** Bridge → module workflow: the module's CR or manager workload changed in the target cluster. */
export const resourceChanged = defineSignal('resourceChanged');
/** Kyma workflow → module workflow: the module left the spec (or the Kyma is deleted). */
export const removeModule = defineSignal('removeModule');
/** Module workflow → Kyma workflow: the module is removed; drop its status entry. */
export const moduleRemoved = defineSignal<[string]>('moduleRemoved');
/** Kyma workflow → module workflow: managed became false; release the objects and end. */
export const unmanageModule = defineSignal('unmanageModule');
