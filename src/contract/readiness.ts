// What a module's observation or failure comes to: a typed reason (its state follows from the
// reason, see src/api/reasons.ts) and a message a person can act on.
import type { ModuleStatus } from '../api/kyma';
import type { Reason } from '../api/reasons';

export interface Readiness {
  reason: Reason;
  message: string;
}

/** What a module workflow tells its Kyma workflow: its entry of the Kyma's .status.modules. */
export interface ModuleReport {
  status: ModuleStatus;
  reason: Reason;
}
