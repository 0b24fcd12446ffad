// What a Kyma's workflow history says of one of its modules: the modules run inside the Kyma's
// workflow, so its activities are told apart by their input.
import type { Klm } from './klm';
import { kymaWorkflowId } from './klm';

interface Payload {
  data?: Uint8Array | null;
}

/** The first argument of an activity, decoded from its JSON payload. */
function firstArgument(payloads: Payload[] | null | undefined): Record<string, unknown> | undefined {
  const data = payloads?.[0]?.data;
  if (!data) return undefined;
  return JSON.parse(Buffer.from(data).toString('utf8')) as Record<string, unknown>;
}

/** The module an activity's input names (`module: 'greeter'` or `module: { name: 'greeter' }`). */
function moduleOf(input: Record<string, unknown> | undefined): string | undefined {
  const m = input?.module;
  if (typeof m === 'string') return m;
  if (m && typeof m === 'object' && typeof (m as { name?: unknown }).name === 'string') return (m as { name: string }).name;
  return undefined;
}

/** How often the Kyma's workflow (this run) scheduled activity `type` for `module`. */
export async function activitiesFor(klm: Klm, kyma: string, module: string, type: string): Promise<number> {
  const history = await klm.client.workflow.getHandle(kymaWorkflowId(klm.namespace, kyma)).fetchHistory();
  return (history.events ?? []).filter((e) => {
    const a = e.activityTaskScheduledEventAttributes;
    return a?.activityType?.name === type && moduleOf(firstArgument(a.input?.payloads)) === module;
  }).length;
}
