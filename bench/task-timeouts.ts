// Workflow tasks that timed out after a moment (a worker's kill): per workflow, the first is the
// task the dead worker held; any further one means the workflow did not recover at once.
import type { Client } from '@temporalio/client';
import proto from '@temporalio/proto';

const { TimeoutType } = proto.temporal.api.enums.v1;

export interface TaskTimeouts {
  /** Workflow task timeouts since the moment, over all the workflows. */
  taskTimeouts: number;
  /** Those beyond the first of each workflow. */
  taskTimeoutsBeyondFirst: number;
  /** By kind: a task on a dead worker's sticky queue (schedule-to-start), one that ran too long (start-to-close). */
  taskTimeoutsByKind: Record<string, number>;
}

/** Counts the workflow task timeouts in the latest runs of `workflowIds` since `sinceMs` (epoch ms). */
export async function taskTimeoutsSince(client: Client, workflowIds: string[], sinceMs: number): Promise<TaskTimeouts> {
  let taskTimeouts = 0;
  let taskTimeoutsBeyondFirst = 0;
  const taskTimeoutsByKind: Record<string, number> = {};
  for (const id of workflowIds) {
    const history = await client.workflow.getHandle(id).fetchHistory();
    const timedOut = (history.events ?? []).filter((e) => {
      const at = e.eventTime ? Number(e.eventTime.seconds ?? 0) * 1000 + Math.floor((e.eventTime.nanos ?? 0) / 1e6) : 0;
      return e.workflowTaskTimedOutEventAttributes && at >= sinceMs;
    });
    for (const e of timedOut) {
      const kind =
        e.workflowTaskTimedOutEventAttributes?.timeoutType === TimeoutType.TIMEOUT_TYPE_SCHEDULE_TO_START
          ? 'schedule-to-start'
          : 'start-to-close';
      taskTimeoutsByKind[kind] = (taskTimeoutsByKind[kind] ?? 0) + 1;
    }
    const n = timedOut.length;
    taskTimeouts += n;
    taskTimeoutsBeyondFirst += Math.max(0, n - 1);
  }
  return { taskTimeouts, taskTimeoutsBeyondFirst, taskTimeoutsByKind };
}
