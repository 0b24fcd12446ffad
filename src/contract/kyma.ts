// The Kyma as workflows see it: a reference, and a small snapshot of what its spec asks for.
import type { ClusterIdentity } from '../api/cluster-identity';
import type { CustomResourcePolicy } from '../api/kyma';
import type { Readiness } from './readiness';
import type { SeenVersions } from './seen-versions';

export interface KymaRef {
  namespace: string;
  name: string;
  /** For target-cluster activities: the Kyma's modules live in a remote cluster (never fall back). */
  remote?: boolean;
}

/** One module of a Kyma: its Kyma and its name. */
export interface ModuleRef {
  kyma: KymaRef;
  module: string;
}

/** One entry of the Kyma's .spec.modules, defaults filled in. */
export interface SpecModule {
  name: string;
  channel?: string;
  version?: string;
  customResourcePolicy: CustomResourcePolicy;
  managed: boolean;
  /** From a mandatory ModuleReleaseMeta, not from the Kyma's spec: not listed in its status. */
  mandatory?: true;
}

/** Which labelled ModuleTemplates a Kyma may use (its `beta` / `internal` labels). */
export interface Visibility {
  beta: boolean;
  internal: boolean;
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
  /** Its beta and internal labels: which labelled ModuleTemplates it may use. */
  visibility: Visibility;
  /** spec.skipMaintenanceWindows: upgrades that require downtime go ahead at once. */
  skipMaintenanceWindows?: boolean;
  /** Upstream's runtime labels (region, plan, ...) that a maintenance policy matches, as set. */
  runtime?: Record<string, string>;
  /**
   * Every mandatory module of the namespace, listed by the Kyma or not (only for a Kyma with a
   * kubeconfig Secret: its runtime's spec, not this one's, tells which it lists).
   */
  mandatoryModules?: SpecModule[];
  /** Why this Kyma cannot be reconciled at all (its name), if it cannot. */
  invalid?: Readiness;
  /** Its labels the lifecycle manager reads whose values mean nothing to it, each said in a sentence. */
  labelProblems?: string[];
  /**
   * The cluster its modules go to (the one its kubeconfig Secret names, else the control plane),
   * when it could be told: unreachable, it is left out.
   */
  cluster?: ClusterIdentity;
  /** The annotation operator.kyma-project.io/old-clusters-cleared: switches up to this number were taken care of. */
  oldClustersCleared?: number;
}

/** The Kyma as a read found it (`snapshot`; null: gone), reading at least versions `seen`. */
export interface KymaRead {
  seen?: SeenVersions;
  snapshot: KymaSnapshot | null;
}
