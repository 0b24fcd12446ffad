// The module workflows a Kyma's workflow of an earlier shape left running (one per module, from
// before the Kyma's workflow ran its modules itself), so that a fresh run takes them over
// instead of running a module twice.
import { Context } from '@temporalio/activity';
import { moduleWorkflowId } from '../api/names';
import type { KymaRef } from '../contract/kyma';
import { MODULE_WORKFLOW } from '../contract/workflow-inputs';

export function moduleWorkflowActivities() {
  return {
    /** The modules of the Kyma whose module workflow runs, as visibility lists them. */
    async runningModuleWorkflows({ kyma }: { kyma: KymaRef }): Promise<string[]> {
      const prefix = moduleWorkflowId(kyma.namespace, kyma.name, '');
      const query = `WorkflowType = '${MODULE_WORKFLOW}' AND ExecutionStatus = 'Running' AND WorkflowId STARTS_WITH '${prefix}'`;
      const names: string[] = [];
      for await (const w of Context.current().client.workflow.list({ query }))
        names.push(w.workflowId.slice(prefix.length));
      return names;
    },
  };
}
