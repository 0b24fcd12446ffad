// klm kyma status: one Kyma as operators look at it: its state and conditions, each module's
// version and state, and its workflow in Temporal: running, or gone and how (as Temporal's
// describe has it): a Kyma whose workflow does not run is reconciled by nobody.
import { Client, Connection, WorkflowNotFoundError } from '@temporalio/client';
import type { Kyma } from '../api/kyma';
import { kymaWorkflowId } from '../api/names';
import type { KubeObject } from '../api/shared';
import type { KlmConfig } from '../infra/config';
import type { KubeClient } from '../k8s/rest-client';
import { readKyma, type KymaRef } from './kyma-modules';
import { NotRunningError, Refused, table } from './output';
import { workflowLink } from './temporal-link';

/** The Kyma's workflow as Temporal describes it: RUNNING, NOT_FOUND, or how it ended (TERMINATED, FAILED, TIMED_OUT, ...) and when. */
export interface WorkflowState {
  status: string;
  closedAt?: string;
}

export interface KymaStatusView {
  kyma: string;
  state: string;
  channel: string;
  conditions: { type: string; status: string; reason: string; message: string }[];
  modules: { name: string; version?: string; channel?: string; state?: string; message?: string }[];
  workflowId: string;
  workflow: WorkflowState;
  temporalUi?: string;
}

/** How long the command waits for Temporal to answer before it says it cannot tell. */
const CONNECT_TIMEOUT = '10s';

/** Asks Temporal for the workflow; a Temporal that cannot be asked is a failure that says where it looked. */
export async function workflowState(workflowId: string, config: Pick<KlmConfig, 'temporal'>): Promise<WorkflowState> {
  let connection: Connection;
  try {
    connection = await Connection.connect({ ...config.temporal.connectionOptions, connectTimeout: CONNECT_TIMEOUT });
  } catch (err) {
    throw new Refused(
      `cannot tell whether workflow ${workflowId} runs: Temporal at ${config.temporal.describe} ` +
        `did not answer (${(err as Error).message.split('\n')[0]}); set TEMPORAL_ADDRESS and ` +
        `TEMPORAL_NAMESPACE as the worker has them`,
    );
  }
  try {
    const d = await new Client({ connection, namespace: config.temporal.namespace }).workflow
      .getHandle(workflowId)
      .describe();
    return { status: d.status.name, ...(d.closeTime ? { closedAt: d.closeTime.toISOString() } : {}) };
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) return { status: 'NOT_FOUND' };
    throw err;
  } finally {
    await connection.close();
  }
}

export async function kymaStatus(
  kube: KubeClient,
  ref: KymaRef,
  config: Pick<KlmConfig, 'temporal'>,
  temporalUi?: string,
): Promise<KymaStatusView> {
  const kyma: Kyma & KubeObject = await readKyma(kube, ref);
  const workflowId = kymaWorkflowId(ref.namespace, ref.name);
  const link = workflowLink(temporalUi, config.temporal.namespace, workflowId);
  return {
    kyma: `${ref.namespace}/${ref.name}`,
    state: kyma.status?.state ?? 'Unknown',
    channel: kyma.spec.channel,
    conditions: (kyma.status?.conditions ?? []).map((c) => ({
      type: c.type,
      status: c.status,
      reason: c.reason,
      message: c.message,
    })),
    modules: (kyma.status?.modules ?? []).map((m) => ({
      name: m.name,
      ...(m.version ? { version: m.version } : {}),
      ...(m.channel ? { channel: m.channel } : {}),
      ...(m.state ? { state: m.state } : {}),
      ...(m.message ? { message: m.message } : {}),
    })),
    workflowId,
    workflow: await workflowState(workflowId, config),
    ...(link ? { temporalUi: link } : {}),
  };
}

/** Why nobody reconciles the Kyma, in one line, when its workflow does not run. */
export function notRunning(v: KymaStatusView): NotRunningError | undefined {
  const w = v.workflow;
  if (w.status === 'RUNNING') return undefined;
  const how =
    w.status === 'NOT_FOUND'
      ? 'Temporal has no such workflow'
      : `it ended ${w.status}${w.closedAt ? ` at ${w.closedAt}` : ''}`;
  return new NotRunningError(
    `the workflow ${v.workflowId} of Kyma ${v.kyma} is not running (${how}): nothing reconciles ` +
      `the Kyma; the bridge starts it again when the Kyma's spec or labels change, or when the ` +
      `bridge restarts`,
  );
}

export function kymaStatusText(v: KymaStatusView): string {
  const w = v.workflow;
  const state = w.status === 'RUNNING' ? 'running' : `NOT RUNNING: ${w.status}${w.closedAt ? ` at ${w.closedAt}` : ''}`;
  const lines = [
    `Kyma ${v.kyma}: ${v.state} (channel ${v.channel})`,
    `workflow: ${v.workflowId} (${state})${v.temporalUi ? `\n  ${v.temporalUi}` : ''}`,
  ];
  if (v.conditions.length)
    lines.push(
      '',
      table(
        ['CONDITION', 'STATUS', 'REASON', 'MESSAGE'],
        v.conditions.map((c) => [c.type, c.status, c.reason, c.message]),
      ),
    );
  lines.push(
    '',
    v.modules.length
      ? table(
          ['MODULE', 'VERSION', 'CHANNEL', 'STATE', 'MESSAGE'],
          v.modules.map((m) => [m.name, m.version ?? '-', m.channel ?? '-', m.state ?? '-', m.message ?? '']),
        )
      : 'no modules',
  );
  return lines.join('\n');
}
