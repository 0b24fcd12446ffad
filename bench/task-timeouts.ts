// Workflow tasks that timed out after a moment (a worker's kill): per workflow, the first is the
// task the dead worker held; any further one means the workflow did not recover at once.
import type { Client } from '@temporalio/client';

export interface TaskTimeouts {
  /** Workflow task timeouts since the moment, over all the workflows. */
  taskTimeouts: number;
  /** Those beyond the first of each workflow. */
  taskTimeoutsBeyondFirst: number;
}

/** Counts the workflow task timeouts in the latest runs of `workflowIds` since `sinceMs` (epoch ms). */
export async function taskTimeoutsSince(client: Client, workflowIds: string[], sinceMs: number): Promise<TaskTimeouts> {
  let taskTimeouts = 0;
  let taskTimeoutsBeyondFirst = 0;
  for (const id of workflowIds) {
    const history = await client.workflow.getHandle(id).fetchHistory();
    const n = (history.events ?? []).filter((e) => {
      const at = e.eventTime ? Number(e.eventTime.seconds ?? 0) * 1000 + Math.floor((e.eventTime.nanos ?? 0) / 1e6) : 0;
      return e.workflowTaskTimedOutEventAttributes && at >= sinceMs;
    }).length;
    taskTimeouts += n;
    taskTimeoutsBeyondFirst += Math.max(0, n - 1);
  }
  return { taskTimeouts, taskTimeoutsBeyondFirst };
}
