// What a module install's history events are: the events of sampled Kyma workflows by kind (an
// activity and a signal by name, a local activity by the activity it ran; an activity's or a
// workflow task's later events count with the one that scheduled it), so that a change to the
// workflow's shape shows where its events went.
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Client } from '@temporalio/client';
import proto from '@temporalio/proto';

const EventType = proto.temporal.api.enums.v1.EventType;
type HistoryEvent = proto.temporal.api.history.v1.IHistoryEvent;

/** The scheduling event an activity's or workflow task's later event belongs to. */
function scheduledBy(e: HistoryEvent): number | undefined {
  const a =
    e.activityTaskStartedEventAttributes ??
    e.activityTaskCompletedEventAttributes ??
    e.activityTaskFailedEventAttributes ??
    e.activityTaskTimedOutEventAttributes ??
    e.activityTaskCancelRequestedEventAttributes ??
    e.activityTaskCanceledEventAttributes ??
    e.workflowTaskStartedEventAttributes ??
    e.workflowTaskCompletedEventAttributes ??
    e.workflowTaskFailedEventAttributes ??
    e.workflowTaskTimedOutEventAttributes;
  const id = a?.scheduledEventId;
  return id === undefined || id === null ? undefined : Number(id);
}

/** What one event counts as, by itself. */
function ownKind(e: HistoryEvent): string {
  if (e.activityTaskScheduledEventAttributes)
    return `activity ${e.activityTaskScheduledEventAttributes.activityType?.name ?? '?'}`;
  if (e.workflowTaskScheduledEventAttributes) return 'workflow task';
  if (e.workflowExecutionSignaledEventAttributes)
    return `signal ${e.workflowExecutionSignaledEventAttributes.signalName ?? '?'}`;
  const marker = e.markerRecordedEventAttributes;
  if (marker?.markerName === 'core_local_activity') return `local activity ${localActivityName(e) ?? '?'}`;
  if (marker) return `marker ${marker.markerName ?? '?'}`;
  return (EventType[e.eventType ?? 0] ?? 'UNKNOWN').replace(/^EVENT_TYPE_/, '').toLowerCase();
}

/** The activity a local activity's marker names (its `data` payload holds the activity type). */
function localActivityName(e: HistoryEvent): string | undefined {
  const data = e.markerRecordedEventAttributes?.details?.data?.payloads?.[0]?.data;
  if (!data) return undefined;
  try {
    return (JSON.parse(Buffer.from(data).toString('utf8')) as { activity_type?: string }).activity_type;
  } catch {
    return undefined;
  }
}

/** Counts the events of `events` by kind into `counts`. */
export function countKinds(events: HistoryEvent[], counts: Map<string, number>): void {
  const kindOf = new Map<number, string>();
  for (const e of events) {
    const parent = scheduledBy(e);
    const kind = (parent !== undefined ? kindOf.get(parent) : undefined) ?? ownKind(e);
    kindOf.set(Number(e.eventId), kind);
    counts.set(kind, (counts.get(kind) ?? 0) + 1);
  }
}

/** The Kymas whose histories are read: all of `names` up to `max`, else `max` spread evenly over them. */
export function historySample(names: string[], max: number): string[] {
  if (names.length <= max) return [...names];
  return Array.from({ length: max }, (_, i) => names[Math.floor((i * names.length) / max)]!);
}

/**
 * Events per module install by kind, over the workflows `ids` that ran `modules` modules each; most
 * first. With `keepIn`, each history is written there too (`<workflow id>.json`, `/` as `_`), for
 * a reader who wants to see what each event was.
 */
export async function historyBreakdown(
  client: Client,
  ids: string[],
  modules: number,
  keepIn?: string,
): Promise<{ kind: string; perInstall: number }[]> {
  const counts = new Map<string, number>();
  if (keepIn) mkdirSync(keepIn, { recursive: true });
  for (const id of ids) {
    const history = await client.workflow.getHandle(id).fetchHistory();
    if (keepIn) writeFileSync(path.join(keepIn, `${id.replaceAll('/', '_')}.json`), JSON.stringify(history));
    countKinds(history.events ?? [], counts);
  }
  const per = Math.max(1, ids.length * modules);
  return [...counts].map(([kind, n]) => ({ kind, perInstall: n / per })).sort((a, b) => b.perInstall - a.perInstall);
}
