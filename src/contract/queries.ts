// The `status` query every Kyma's workflow answers (`temporal workflow query --name status
// --workflow-id kyma/<ns>/<name>`). Definitions only.
import { defineQuery } from '@temporalio/workflow';
import type { KymaStatusInput } from '../api/kyma';

/** The Kyma's status as the workflow would write it now. */
export const kymaStatusQuery = defineQuery<KymaStatusInput>('status');
