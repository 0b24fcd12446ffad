// What of a target object its module acts on. The bridge pokes a workflow only when
// this changes, so the many status writes of a rollout wake it once or twice, not ten times.
import type { KubeObject } from '../api/shared';
import type { InformerEventType } from '../k8s/informer';
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

/**
 * What a module's default CR reports, as far as the bridge saw it: its `.status.state` (null:
 * none yet, or not seen, or deleted); undefined where the CR does not decide the module's
 * readiness that way (a module without a CR, or one a customStateCheck reads).
 */
export type CrState = string | null | undefined;

/** The CR states under which a module is Processing whatever its manager's rollout does. */
const PROCESSING_EITHER_WAY: readonly (string | null)[] = [null, 'Processing'];

/**
 * Whether news of a module's manager workload can wait for the module's next news: the
 * workload is there and not stalled, and the module's default CR (`cr`) reports no state or
 * Processing. The module is Processing before and after it (src/decisions/readiness.ts: Ready
 * wants both the rollout complete and the CR Ready; a rollout under way or done, with such a
 * CR, is Processing), so the check it would cost changes a message at most. It goes along with
 * the next news that cannot wait (the CR's state, typically, which its manager reports once it
 * runs), or on its own after a while.
 */
export function workloadNewsCanWait(type: InformerEventType, o: KubeObject, cr: CrState): boolean {
  if (type === 'DELETED' || o.metadata.deletionTimestamp || !isWorkload(o.kind) || !crLetsWait(cr)) return false;
  return workloadRollout(o).phase !== 'stalled';
}

/**
 * Whether news of a module's default CR can wait for the module's next news, its module being
 * Processing (`moduleProcessing`): the CR is there, not being deleted, and reports no state or
 * Processing (`now`). The module stays Processing (src/decisions/readiness.ts: a manager's
 * rollout decides before the CR, and such a CR is Processing), so only its message would change;
 * typically its manager reports Ready a moment later.
 */
export function crNewsCanWait(type: InformerEventType, o: KubeObject, now: CrState): boolean {
  return type !== 'DELETED' && !o.metadata.deletionTimestamp && crLetsWait(now);
}

/**
 * Whether a module is Processing as its workflow last wrote it: the state of its Manifest's status
 * (`manifestState`; none yet: its first install is under way). News may wait only then: in any
 * other state (Ready, Error, Warning, Deleting) it may be the news that changes it.
 */
export function moduleProcessing(manifestState: string | undefined): boolean {
  return crLetsWait(manifestState ?? null);
}

/** Whether a module whose default CR reports `cr` is Processing whatever its manager's rollout does (no state, or Processing). */
export function crLetsWait(cr: CrState): boolean {
  return cr !== undefined && PROCESSING_EITHER_WAY.includes(cr);
}
