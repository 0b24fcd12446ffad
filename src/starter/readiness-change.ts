// What of a target object its module workflow acts on. The bridge pokes a workflow only when
// this changes, so the many status writes of a rollout wake it once or twice, not ten times.
import type { KubeObject } from '../api/shared';
import { workloadAvailable } from '../decisions/workload';

/**
 * The readiness-relevant view of a manager workload or a module CR: for workloads whether
 * they are available, for CRs their reported state and message; for both spec generation,
 * deletion and finalizers (a removal waits on those).
 */
export function readinessFingerprint(o: KubeObject): string {
  const meta = o.metadata;
  const common = [meta.generation, meta.deletionTimestamp, meta.finalizers];
  if (o.kind === 'Deployment' || o.kind === 'StatefulSet') {
    const { ok, detail } = workloadAvailable(o);
    return JSON.stringify([...common, ok, detail]);
  }
  const status = (o as { status?: { state?: string; message?: string } }).status;
  return JSON.stringify([...common, status?.state, status?.message]);
}

/** A fresh object with no status yet: created by its module workflow, which knows already. */
export function withoutStatus(o: KubeObject): boolean {
  const status = (o as { status?: Record<string, unknown> }).status;
  return !status || Object.keys(status).length === 0;
}
