// The `status` query every Kyma and module workflow answers (`temporal workflow query --name
// status --workflow-id kyma/<ns>/<name>[/module/<module>]`). Definitions only.
import { defineQuery } from '@temporalio/workflow';
import type { KymaStatusInput } from '../api/kyma';
import type { ModuleReport } from './readiness';

/** The Kyma's status as the workflow would write it now. */
export const kymaStatusQuery = defineQuery<KymaStatusInput>('status');
/** The module's status and reason as published last (null before its first report of this run). */
export const moduleStatusQuery = defineQuery<ModuleReport | null>('status');
