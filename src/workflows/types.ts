// What workflows and activities exchange. Small by rule: names, versions, digests and
// references only; manifests, descriptors and secrets never enter workflow history.
import type { CustomResourcePolicy, ModuleStatus } from '../api/kyma';
import type { ObjectRef, State } from '../api/shared';

export interface KymaRef {
  namespace: string;
  name: string;
  /** For target-cluster activities: the Kyma's modules live in a remote cluster (never fall back). */
  remote?: boolean;
}

export interface ReconcileSettings {
  /** The slow timer that re-checks and re-applies to catch drift and missed events. */
  driftIntervalMs: number;
  /** How long a module's CRDs may take to become Established. */
  crdEstablishedTimeoutMs: number;
  /** How long a module's manager may stay unavailable before the module goes Error (it keeps recovering). */
  managerAvailableTimeoutMs?: number;
  /** First delay before a failed install is tried again (it doubles, up to the drift interval). */
  installRetryMs?: number;
  /** Namespace for namespaced objects that name none; "{kyma}" becomes the Kyma's name. */
  defaultNamespace: string;
  /** Continue-as-new once history has this many events (0: only when Temporal suggests it). */
  maxHistoryEvents: number;
}

export const DEFAULT_SETTINGS: ReconcileSettings = {
  driftIntervalMs: 10 * 60_000,
  crdEstablishedTimeoutMs: 2 * 60_000,
  managerAvailableTimeoutMs: 5 * 60_000,
  installRetryMs: 30_000,
  defaultNamespace: 'kyma-system',
  maxHistoryEvents: 0,
};

/**
 * Workflow task timeout of Kyma and module workflows. Their tasks run local activities (API
 * reads and writes); under load those take seconds, and a task that outlives the default 10 s
 * is timed out and run again with all its local activities: work thrown away when it is least
 * affordable. A lost worker's task is retried after this long.
 */
export const WORKFLOW_TASK_TIMEOUT = '30 seconds';

export interface KymaSnapshot {
  uid: string;
  generation: number;
  channel: string;
  modules: { name: string; channel?: string; version?: string; customResourcePolicy: CustomResourcePolicy; managed: boolean }[];
  deleting: boolean;
  /** Whether the Kyma carries our finalizer (absent in histories recorded before it existed). */
  finalized?: boolean;
  /** The skip-reconciliation label is set: the workflow waits for a signal. */
  paused?: boolean;
  /** A kubeconfig Secret names the target cluster (else it is the control plane). */
  remote?: boolean;
}

/** A module whose ModuleTemplate was found: what the module workflow installs. */
export interface ResolvedModule {
  name: string;
  channel: string;
  version: string;
  customResourcePolicy: CustomResourcePolicy;
  template: { name: string; namespace: string; generation: number };
  fqdn?: string;
  /** A kubeconfig Secret names the target cluster. */
  remote?: boolean;
}

export type Resolution = { ok: true; module: ResolvedModule } | { ok: false; status: ModuleStatus };

/** Where a module's layer lives: enough to fetch it again on any worker. */
export interface LayerRef {
  registry: string;
  repository: string;
  digest: string;
  size: number;
  /** 'yaml' for a plain YAML blob, 'tar' for an archive with one YAML file. */
  format: 'yaml' | 'tar';
}

export interface RenderParams {
  kymaNamespace: string;
  kymaName: string;
  module: string;
  defaultNamespace: string;
  /** From ModuleTemplate .spec.manager; else the first Deployment or StatefulSet. */
  manager?: ObjectRef;
}

/** What fetch found: the layer, and from the ModuleTemplate the manager and default CR. */
export interface FetchedModule {
  layer: LayerRef;
  manager?: ObjectRef;
  defaultCr?: DefaultCrRef;
}

export interface RenderedRef {
  layer: LayerRef;
  params: RenderParams;
  /** sha256 of the rendered object list, as stored in the worker's cache. */
  digest: string;
  objects: number;
  crds: string[];
  manager?: ObjectRef;
}

export interface ApplyResult {
  applied: number;
}

export interface DefaultCrRef {
  apiVersion: string;
  kind: string;
  name: string;
  namespace?: string;
}

export interface Readiness {
  state: Exclude<State, ''>;
  reason: string;
  message: string;
}

/** What a module workflow tells its Kyma workflow. */
export interface ModuleReport {
  status: ModuleStatus;
  reason: string;
}
