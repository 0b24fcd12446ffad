// What a Kyma's workflow history says of one of its modules: the modules run inside the Kyma's
// workflow, so its activities are told apart by their input.
import type { Klm } from './klm';
import { kymaWorkflowId } from './klm';
import { moduleOfInput } from '../../src/workers/activity-failures';

interface Payload {
  data?: Uint8Array | null;
}

/** The first argument of an activity, decoded from its JSON payload. */
function firstArgument(payloads: Payload[] | null | undefined): Record<string, unknown> | undefined {
  const data = payloads?.[0]?.data;
  if (!data) return undefined;
  return JSON.parse(Buffer.from(data).toString('utf8')) as Record<string, unknown>;
}

/** How often the Kyma's workflow (this run) scheduled activity `type` for `module`. */
export async function activitiesFor(klm: Klm, kyma: string, module: string, type: string): Promise<number> {
  const history = await klm.client.workflow.getHandle(kymaWorkflowId(klm.namespace, kyma)).fetchHistory();
  return (history.events ?? []).filter((e) => {
    const a = e.activityTaskScheduledEventAttributes;
    return a?.activityType?.name === type && moduleOfInput([firstArgument(a.input?.payloads)]) === module;
  }).length;
}

/** How often the Kyma's workflow (this run) scheduled an install of `module` (in an `installModules` with the Kyma's other installs that started with it). */
export async function installsFor(klm: Klm, kyma: string, module: string): Promise<number> {
  const history = await klm.client.workflow.getHandle(kymaWorkflowId(klm.namespace, kyma)).fetchHistory();
  return (history.events ?? []).filter((e) => {
    const a = e.activityTaskScheduledEventAttributes;
    if (a?.activityType?.name !== 'installModules') return false;
    const installs = (firstArgument(a.input?.payloads)?.installs ?? []) as unknown[];
    return installs.some((i) => moduleOfInput([i]) === module);
  }).length;
}
