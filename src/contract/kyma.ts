// The Kyma as workflows see it: a reference, and a small snapshot of what its spec asks for.
import type { CustomResourcePolicy } from '../api/kyma';
import type { Readiness } from './readiness';

export interface KymaRef {
  namespace: string;
  name: string;
  /** For target-cluster activities: the Kyma's modules live in a remote cluster (never fall back). */
  remote?: boolean;
}

/** One entry of the Kyma's .spec.modules, defaults filled in. */
export interface SpecModule {
  name: string;
  channel?: string;
  version?: string;
  customResourcePolicy: CustomResourcePolicy;
  managed: boolean;
}

export interface KymaSnapshot {
  uid: string;
  generation: number;
  channel: string;
  modules: SpecModule[];
  deleting: boolean;
  /** Whether the Kyma carries our finalizer. */
  finalized: boolean;
  /** The skip-reconciliation label is set: the workflow waits for a change. */
  paused: boolean;
  /** A kubeconfig Secret names the target cluster (else it is the control plane). */
  remote: boolean;
  /** Why this Kyma cannot be reconciled at all (its name), if it cannot. */
  invalid?: Readiness;
}
