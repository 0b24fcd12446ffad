// What of a target object its module acts on. The bridge pokes a workflow only when
// this changes, so the many status writes of a rollout wake it once or twice, not ten times.
import type { KubeObject } from '../api/shared';
import { valueAt } from '../decisions/readiness';
import { isWorkload, workloadRollout } from '../decisions/workload';

/**
 * The readiness-relevant view of a manager workload or a module CR: for workloads whether
 * their rollout is complete, under way or stalled, for CRs their state and message and the `paths` a ModuleTemplate's
 * customStateCheck reads (such as status.health; other status fields, counters, timestamps and
 * conditions do not wake anybody); for both spec generation, deletion and finalizers (a removal
 * waits on those).
 */
export function readinessFingerprint(o: KubeObject, paths: Iterable<string> = []): string {
  const meta = o.metadata;
  const common = [meta.generation, meta.deletionTimestamp, meta.finalizers];
  if (isWorkload(o.kind)) {
    // How far a rollout got in between is no news: each step would cost its module a
    // signal and a task. That it completed, stalled or started again is.
    return JSON.stringify([...common, workloadRollout(o).phase]);
  }
  const status = (o as { status?: { state?: unknown; message?: unknown } }).status;
  return JSON.stringify([...common, status?.state, status?.message, ...[...paths].map((p) => valueAt(o, p))]);
}

/** A fresh object with no status yet: created by its module, which knows already. */
export function withoutStatus(o: KubeObject): boolean {
  const status = (o as { status?: Record<string, unknown> }).status;
  return !status || Object.keys(status).length === 0;
}
