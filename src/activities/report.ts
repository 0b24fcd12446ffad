// A module's report in one step: the Manifest (spec and status) is written, then the Kyma
// workflow is told. Run as a local activity, it adds one marker to the module workflow's
// history, where a Manifest write plus a workflow-to-workflow signal took eight events.
import { Context } from '@temporalio/activity';
import { WorkflowNotFoundError } from '@temporalio/client';
import { kymaWorkflowId } from '../api/names';
import type { ModuleReport } from '../contract/readiness';
import { moduleReport } from '../contract/signals';
import type { ManifestWriter, SyncManifestInput } from './manifest';

export interface PublishModuleReportInput extends SyncManifestInput {
  report: ModuleReport;
  /** The Kyma's workflow runs the module and takes the report itself: no signal. */
  hosted?: boolean;
}

export function reportActivities(writer: ManifestWriter) {
  return {
    async publishModuleReport({ report, hosted, ...manifest }: PublishModuleReportInput): Promise<void> {
      await writer.sync(manifest);
      if (hosted) return;
      const { kyma } = manifest;
      try {
        await Context.current()
          .client.workflow.getHandle(kymaWorkflowId(kyma.namespace, kyma.name))
          .signal(moduleReport, report);
      } catch (err) {
        // The Kyma's workflow has ended (the Kyma is gone): nobody is left to tell.
        if (!(err instanceof WorkflowNotFoundError)) throw err;
      }
    },
  };
}
