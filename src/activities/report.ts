// A module's report in one step: the Manifest (spec and status) is written, then the Kyma
// workflow is told. Run as a local activity, it adds one marker to the module workflow's
// history, where a Manifest write plus a workflow-to-workflow signal took eight events.
import { Context } from '@temporalio/activity';
import { WorkflowNotFoundError } from '@temporalio/client';
import { kymaWorkflowId } from '../api/names';
import { moduleReport } from '../workflows/signals';
import type { DefaultCrRef, KymaRef, ModuleReport, Readiness, RenderedRef, ResolvedModule } from '../workflows/types';
import type { kcpActivities } from './kcp';

export function reportActivities(kcp: Pick<ReturnType<typeof kcpActivities>, 'syncManifest'>) {
  return {
    async publishModuleReport(ref: KymaRef, uid: string, module: ResolvedModule, result: Readiness, rendered: RenderedRef | null, resource: DefaultCrRef | null, resourceKind: string | null, report: ModuleReport): Promise<void> {
      await kcp.syncManifest(ref, uid, module, result, rendered, resource, resourceKind);
      try {
        await Context.current().client.workflow.getHandle(kymaWorkflowId(ref.namespace, ref.name)).signal(moduleReport, report);
      } catch (err) {
        // The Kyma's workflow has ended (the Kyma is gone): nobody is left to tell.
        if (!(err instanceof WorkflowNotFoundError)) throw err;
      }
    },
  };
}
