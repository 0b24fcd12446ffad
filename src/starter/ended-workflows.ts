// Workflows that ended without finishing their work: the server terminated them (a search
// attribute or payload past its limits, a history too long, an operator), they failed or timed
// out. Nothing else would notice: the Kyma's status would stay as the last run wrote it. The
// bridge asks Temporal's visibility for such ends on its task queue every interval and tells
// the Kyma's workflow (starting it again where it was its own run that ended), which shows it.
import type { Client, WorkflowExecutionInfo } from '@temporalio/client';
import { parseKymaKey } from '../api/names';
import { KYMA_WORKFLOW } from '../contract/workflow-inputs';
import type { WorkflowEnded } from '../contract/signals';

/** How long after a workflow's n-th noticed end its Kyma is told again: doubling from the interval, at most an hour. */
export function retellDelayMs(ends: number, intervalMs: number): number {
  return Math.min(3_600_000, intervalMs * 2 ** Math.max(0, Math.min(20, ends - 1)));
}

const ENDED = "ExecutionStatus IN ('Terminated', 'Failed', 'TimedOut')";
/** Runs handled, kept this long (well past any visibility lag). */
const REMEMBER_MS = 24 * 3_600_000;

export class EndedWorkflows {
  private timer?: NodeJS.Timeout;
  /** Runs whose end was told already, with when. */
  private readonly told = new Map<string, number>();
  /** Per workflow id: ends noticed, and when the next may be told (a run that ends again and again is not restarted in a tight loop). */
  private readonly repeats = new Map<string, { ends: number; next: number }>();
  private since: Date;

  constructor(
    private readonly temporal: Client,
    private readonly taskQueue: string,
    private readonly intervalMs: number,
    private readonly tell: (kyma: { namespace: string; name: string }, ended: WorkflowEnded) => void,
    private readonly log?: (msg: string) => void,
  ) {
    // A run that ended before this bridge started is found too, within the last hour.
    this.since = new Date(Date.now() - 3_600_000);
  }

  start(): void {
    const tick = async () => {
      await this.poll().catch((err: unknown) =>
        this.log?.(`listing ended workflows failed: ${(err as Error).message}`),
      );
      if (this.timer !== undefined) this.timer = setTimeout(() => void tick(), this.intervalMs);
    };
    this.timer = setTimeout(() => void tick(), this.intervalMs);
  }

  stop(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** One look: every run of a Kyma's workflow that ended badly since the last, told once. */
  async poll(): Promise<void> {
    const from = new Date(this.since.getTime() - 60_000); // visibility may lag a little behind
    const query =
      `TaskQueue = '${this.taskQueue}' AND WorkflowType = '${KYMA_WORKFLOW}' AND ${ENDED} ` +
      `AND CloseTime > '${from.toISOString()}'`;
    const now = Date.now();
    let newest = this.since;
    /** The earliest end held back by its delay: the next look must still find it. */
    let held: Date | undefined;
    for await (const info of this.temporal.workflow.list({ query })) {
      const key = `${info.workflowId}#${info.runId}`;
      const owner = parseKymaKey(info.workflowId);
      if (!owner || owner.module) continue;
      const r = this.repeats.get(info.workflowId) ?? { ends: 0, next: 0 };
      if (!this.told.has(key) && now < r.next) {
        // Told once its delay is over.
        if (info.closeTime && (!held || info.closeTime < held)) held = info.closeTime;
        continue;
      }
      if (info.closeTime && info.closeTime > newest) newest = info.closeTime;
      if (this.told.has(key)) continue;
      this.told.set(key, now);
      r.ends++;
      r.next = now + retellDelayMs(r.ends, this.intervalMs);
      this.repeats.set(info.workflowId, r);
      const ended = {
        workflowId: info.workflowId,
        runId: info.runId,
        status: statusName(info),
        at: (info.closeTime ?? new Date()).toISOString(),
        reason: await this.reasonOf(info),
      };
      this.log?.(
        `workflow ${info.workflowId} (run ${info.runId}) ended ${ended.status}: ${ended.reason}; telling Kyma ${owner.namespace}/${owner.name}`,
      );
      this.tell({ namespace: owner.namespace, name: owner.name }, ended);
    }
    this.since = held && held < newest ? held : newest;
    for (const [key, at] of this.told) if (now - at > REMEMBER_MS) this.told.delete(key);
  }

  /** Why the run ended, from its last history event (the termination's reason, the failure's message). */
  private async reasonOf(info: WorkflowExecutionInfo): Promise<string> {
    try {
      const { history } = await this.temporal.workflowService.getWorkflowExecutionHistoryReverse({
        namespace: this.temporal.options.namespace,
        execution: { workflowId: info.workflowId, runId: info.runId },
        maximumPageSize: 1,
      });
      const last = history?.events?.[0];
      const reason =
        last?.workflowExecutionTerminatedEventAttributes?.reason ??
        last?.workflowExecutionFailedEventAttributes?.failure?.message ??
        (last?.workflowExecutionTimedOutEventAttributes ? 'its run timed out' : undefined);
      return reason || 'no reason recorded';
    } catch (err) {
      return `its history could not be read (${(err as Error).message})`;
    }
  }
}

function statusName(info: WorkflowExecutionInfo): string {
  const name = info.status.name;
  return name === 'TIMED_OUT' ? 'TimedOut' : name.charAt(0) + name.slice(1).toLowerCase();
}
