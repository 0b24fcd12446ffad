// klm kyma status: one Kyma as operators look at it: its state and conditions, each module's
// version and state, and its workflow in Temporal.
import type { Kyma } from '../api/kyma';
import { kymaWorkflowId } from '../api/names';
import type { KubeObject } from '../api/shared';
import type { KubeClient } from '../k8s/rest-client';
import { readKyma, type KymaRef } from './kyma-modules';
import { table } from './output';
import { workflowLink } from './temporal-link';

export interface KymaStatusView {
  kyma: string;
  state: string;
  channel: string;
  conditions: { type: string; status: string; reason: string; message: string }[];
  modules: { name: string; version?: string; channel?: string; state?: string; message?: string }[];
  workflowId: string;
  temporalUi?: string;
}

export async function kymaStatus(kube: KubeClient, ref: KymaRef, temporalUi?: string, temporalNamespace?: string): Promise<KymaStatusView> {
  const kyma: Kyma & KubeObject = await readKyma(kube, ref);
  const workflowId = kymaWorkflowId(ref.namespace, ref.name);
  const link = workflowLink(temporalUi, temporalNamespace, workflowId);
  return {
    kyma: `${ref.namespace}/${ref.name}`,
    state: kyma.status?.state ?? 'Unknown',
    channel: kyma.spec.channel,
    conditions: (kyma.status?.conditions ?? []).map((c) => ({ type: c.type, status: c.status, reason: c.reason, message: c.message })),
    modules: (kyma.status?.modules ?? []).map((m) => ({ name: m.name, ...(m.version ? { version: m.version } : {}), ...(m.channel ? { channel: m.channel } : {}), ...(m.state ? { state: m.state } : {}), ...(m.message ? { message: m.message } : {}) })),
    workflowId,
    ...(link ? { temporalUi: link } : {}),
  };
}

export function kymaStatusText(v: KymaStatusView): string {
  const lines = [`Kyma ${v.kyma}: ${v.state} (channel ${v.channel})`, `workflow: ${v.workflowId}${v.temporalUi ? `\n  ${v.temporalUi}` : ''}`];
  if (v.conditions.length) lines.push('', table(['CONDITION', 'STATUS', 'REASON', 'MESSAGE'], v.conditions.map((c) => [c.type, c.status, c.reason, c.message])));
  lines.push('', v.modules.length ? table(['MODULE', 'VERSION', 'CHANNEL', 'STATE', 'MESSAGE'], v.modules.map((m) => [m.name, m.version ?? '-', m.channel ?? '-', m.state ?? '-', m.message ?? ''])) : 'no modules');
  return lines.join('\n');
}
