// What a module's observation or failure comes to: a typed reason (its state follows from the
// reason, see src/api/reasons.ts) and a message a person can act on; and the views of target
// objects a readiness check reads (told by the bridge's watch, or read by the check itself).
import type { ModuleStatus } from '../api/kyma';
import type { Reason } from '../api/reasons';

/**
 * A target-cluster object as the bridge's watch saw it, reduced to what readiness reads
 * (`readinessView`), so that a check need not read it again: `view` null when it was deleted.
 */
export interface ObservedObject {
  /** The object's `objectKey` (src/api/object-id.ts). */
  key: string;
  resourceVersion: string;
  view: Record<string, unknown> | null;
}

export interface Readiness {
  reason: Reason;
  message: string;
}

/**
 * A readiness check's answer, with the objects it read from the cluster (not those the watch had
 * told of): later checks use these views until the watch tells of a newer one.
 */
export interface ReadinessCheck extends Readiness {
  read?: ObservedObject[];
}

/** What a module tells its Kyma: its entry of the Kyma's .status.modules. */
export interface ModuleReport {
  status: ModuleStatus;
  reason: Reason;
}
