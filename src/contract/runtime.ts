// What the Kyma workflow and the runtime activities exchange: the runtime Kyma's spec as the
// workflow needs it (names, channels and policies only), and what a sync found.
import type { KymaRef, SpecModule, Visibility } from './kyma';
import type { KymaStatusInput } from '../api/kyma';
import type { Readiness } from './readiness';

/** The part of a Kyma's spec that its users edit in the runtime. */
export interface RuntimeSpec {
  channel: string;
  modules: SpecModule[];
}

export interface SyncRuntimeKymaInput {
  kyma: KymaRef;
  uid: string;
  /** The control-plane Kyma's spec now (mandatory modules excluded). */
  controlPlane: RuntimeSpec;
  /** The control-plane spec as of the last sync: what changed since goes to the runtime Kyma. */
  before?: RuntimeSpec;
  /** The runtime Kyma's spec as last read: a runtime Kyma deleted by hand comes back with it. */
  known?: RuntimeSpec;
}

export type RuntimeKymaSync =
  /** The runtime Kyma's spec, after the control plane's changes went into it. */
  | { kind: 'synced'; spec: RuntimeSpec; created: boolean }
  /** The kubeconfig names the control-plane cluster itself: it gets no runtime side. */
  | { kind: 'controlPlane' }
  /** The runtime Kyma belongs to another control-plane Kyma (a shared cluster): this one keeps its own spec. */
  | { kind: 'taken'; owner: string };

export interface WriteRuntimeStatusInput {
  kyma: KymaRef;
  status: KymaStatusInput;
}

/**
 * How a step in a runtime (the runtime Kyma's sync, the catalog sync, the clean-up) is tried
 * again: three attempts, 1 s doubling up to 10 s; then the Kyma shows the failure.
 */
export const RUNTIME_STEP_RETRY = {
  initialInterval: 1_000,
  backoffCoefficient: 2,
  maximumInterval: 10_000,
  maximumAttempts: 3,
} as const;

export interface SyncRuntimeCatalogInput {
  kyma: KymaRef;
  uid: string;
  visibility: Visibility;
  /** Read what the runtime holds instead of trusting what this worker wrote last (drift, first sync). */
  full: boolean;
  /**
   * How many catalog syncs of this Kyma succeeded before this one: a worker trusts its memo of
   * what it wrote only if it made the last of them (another worker may have written since).
   */
  after: number;
}

/** How many catalog objects a sync wrote and removed (names stay out of history). */
export interface CatalogSync {
  applied: number;
  deleted: number;
  /** Copies not written: the runtime has an object of its own under that name. */
  foreign: number;
}

export interface CleanRuntimeInput {
  kyma: KymaRef;
  uid: string;
}

/**
 * The runtime side of a remote Kyma: whose runtime Kyma its modules follow (`synced`: its own;
 * `controlPlane`: the kubeconfig names the control plane; `taken`: another Kyma's), the
 * control-plane spec as last merged into it (`before`), the runtime's spec as last read
 * (`known`), what went wrong last, and what of its catalog is to be synced.
 */
export interface RuntimeSide {
  mode?: RuntimeKymaSync['kind'];
  before?: RuntimeSpec;
  known?: RuntimeSpec;
  problem?: Readiness;
  /** The catalog is to be synced: `full` reads what the runtime holds, `changed` trusts the worker's memo. */
  catalog?: 'full' | 'changed';
  /** The visibility the catalog was last synced for. */
  catalogVisibility?: string;
  /** How many catalog syncs succeeded (a worker's memo of what it wrote counts only for the last). */
  catalogSyncs?: number;
  /** The last catalog sync failed: the next load syncs it in full. */
  catalogFailed?: true;
  /** The owner a `taken` runtime Kyma was told of (once). */
  toldTaken?: string;
  cleanup?: 'failed' | 'done';
}
