// What of a target object its module workflow acts on. The bridge pokes a workflow only when
// this changes, so the many status writes of a rollout wake it once or twice, not ten times.
import type { KubeObject } from '../api/shared';
import { workloadAvailable } from '../decisions/workload';

/**
 * The readiness-relevant view of a manager workload or a module CR: for workloads whether
 * they are available, for CRs the string fields of their status (state and message, and any
 * field a ModuleTemplate's customStateCheck may read, such as status.health; not conditions,
 * counters or timestamps); for both spec generation, deletion and finalizers (a removal waits
 * on those).
 */
export function readinessFingerprint(o: KubeObject): string {
  const meta = o.metadata;
  const common = [meta.generation, meta.deletionTimestamp, meta.finalizers];
  if (o.kind === 'Deployment' || o.kind === 'StatefulSet') {
    const { ok, detail } = workloadAvailable(o);
    return JSON.stringify([...common, ok, detail]);
  }
  const status = (o as { status?: unknown }).status;
  return JSON.stringify([...common, stringFields(status)]);
}

/** `path=value` of every string leaf, conditions and timestamps left out, in a stable order. */
function stringFields(v: unknown, path = '', out: string[] = []): string[] {
  if (typeof v === 'string') out.push(`${path}=${v}`);
  else if (v && typeof v === 'object' && !Array.isArray(v)) {
    for (const key of Object.keys(v).sort()) {
      if (key === 'conditions' || /Time(stamp)?$/.test(key)) continue;
      stringFields((v as Record<string, unknown>)[key], path ? `${path}.${key}` : key, out);
    }
  }
  return out;
}

/** A fresh object with no status yet: created by its module workflow, which knows already. */
export function withoutStatus(o: KubeObject): boolean {
  const status = (o as { status?: Record<string, unknown> }).status;
  return !status || Object.keys(status).length === 0;
}
