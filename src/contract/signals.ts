// Signals between the bridge, the Kyma workflow and its module workflows. Definitions only:
// workflows set handlers, the bridge and activities send them.
import { defineSignal } from '@temporalio/workflow';
import type { DesiredModule } from './module';
import type { ModuleReport } from './readiness';

/** Bridge → Kyma workflow: the Kyma object changed. */
export const kymaChanged = defineSignal('kymaChanged');
/** Bridge → Kyma workflow: a ModuleTemplate or ModuleReleaseMeta in its namespace changed. */
export const templatesChanged = defineSignal('templatesChanged');
/** Module workflow (through publishModuleReport) → Kyma workflow: the module's status changed. */
export const moduleReport = defineSignal<[ModuleReport]>('moduleReport');
/** Kyma workflow → module workflow: what should be installed now (a removal under way stops). */
export const desiredModule = defineSignal<[DesiredModule]>('desiredModule');
/** Bridge → module workflow: the module's CR, manager or Manifest changed. */
export const resourceChanged = defineSignal('resourceChanged');
/** Kyma workflow → module workflow: the module left the spec (or the Kyma is deleted). */
export const removeModule = defineSignal('removeModule');
/** Module workflow → Kyma workflow: the module is removed or released; drop its entry. */
export const moduleRemoved = defineSignal<[string]>('moduleRemoved');
/** Kyma workflow → module workflow: managed became false (or the Kyma is gone); release the objects and end. */
export const unmanageModule = defineSignal('unmanageModule');
