// Types shared by the operator.kyma-project.io/v1beta2 kinds, with upstream field names.
export const GROUP = 'operator.kyma-project.io';
export const VERSION = 'v1beta2';
export const API_VERSION = `${GROUP}/${VERSION}`;

/** Upstream's state names; '' is what a fresh object carries before its first reconcile. */
export const STATES = ['Processing', 'Deleting', 'Ready', 'Error', 'Warning', 'Unmanaged'] as const;
export type State = (typeof STATES)[number] | '';

export const DEFAULT_CHANNEL = 'regular';

/** The channel a module of a Kyma follows: its own, else the Kyma's, else the default (upstream's rule). */
export function effectiveChannel(moduleChannel: string | undefined, kymaChannel: string | undefined): string {
  return moduleChannel || kymaChannel || DEFAULT_CHANNEL;
}

export const LABELS = {
  managedBy: `${GROUP}/managed-by`,
  kymaName: `${GROUP}/kyma-name`,
  moduleName: `${GROUP}/module-name`,
  skipReconciliation: `${GROUP}/skip-reconciliation`,
  /** On a Kyma: its place in rollouts (a number, lower first; 100 when absent). An extension of this implementation. */
  rolloutPriority: `${GROUP}/rollout-priority`,
  /** On a ModuleTemplate: served only to Kymas that carry the same label "true" (upstream's visibility). */
  beta: `${GROUP}/beta`,
  internal: `${GROUP}/internal`,
  /** On a Manifest: the module is mandatory (installed on every Kyma, not listed in its status), as upstream. */
  mandatoryModule: `${GROUP}/mandatory-module`,
} as const;

/** Upstream's runtime labels on a Kyma, which a maintenance policy's rules match. */
export const RUNTIME_LABELS = {
  globalAccountID: 'kyma-project.io/global-account-id',
  region: 'kyma-project.io/region',
  platformRegion: 'kyma-project.io/platform-region',
  plan: 'kyma-project.io/broker-plan-name',
} as const;

/** On a Kyma: its runtime's instance id, upstream's `instance_id` label of the Kyma and module state metrics. */
export const INSTANCE_ID_LABEL = 'kyma-project.io/instance-id';

/** On a Kyma: its runtime's domain; the first DNS label is upstream's `shoot` label of the state metrics. */
export const SKR_DOMAIN_ANNOTATION = 'skr-domain';

/** A label that enables something, as upstream reads it ("true", any case). */
export function labelEnabled(labels: Record<string, string> | undefined, key: string): boolean {
  return labels?.[key]?.toLowerCase() === 'true';
}

/** The ConfigMap, in the Kymas' namespace, that holds each channel's rollout policy (key: channel, else `default`). */
export const ROLLOUT_POLICY_CONFIGMAP = 'klm-rollout-policy';

export const KYMA_FINALIZER = `${GROUP}/Kyma`;

/** On a mandatory ModuleReleaseMeta: its deletion waits until the module is removed from every Kyma. */
export const MANDATORY_FINALIZER = `${GROUP}/mandatory-module`;

/**
 * The channel a mandatory module (one a Kyma has from a ModuleReleaseMeta's .spec.mandatory,
 * not from its spec) follows: its rollout is `rollout/<ns>/<module>/mandatory`, its policy the
 * `mandatory` key of the rollout-policy ConfigMap (else `default`).
 */
export const MANDATORY_CHANNEL = 'mandatory';

export interface ObjectMeta {
  name: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  finalizers?: string[];
  ownerReferences?: OwnerReference[];
  managedFields?: { manager: string; operation?: string }[];
}

export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
  blockOwnerDeletion?: boolean;
}

/** Any Kubernetes object, sent and received as plain JSON: typed metadata, the rest as it comes. */
export interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata: ObjectMeta;
  [k: string]: unknown;
}

export interface LastOperation {
  operation: string;
  lastUpdateTime?: string;
}

export interface Condition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  reason: string;
  message: string;
  observedGeneration?: number;
  lastTransitionTime: string;
}

/** A condition as a status writer receives it; the writer stamps times and generation. */
export type ConditionInput = Omit<Condition, 'lastTransitionTime' | 'observedGeneration'>;

/** A reference to an object by kind and name, as in upstream's TrackingObject. */
export interface TrackingObject {
  apiVersion?: string;
  kind?: string;
  metadata?: { name?: string; namespace?: string; generation?: number };
}

/**
 * A reference in upstream's spelling, group and version apart (ModuleTemplate and Manifest
 * spec.manager). The code names objects by `ObjectId` (object-id.ts: `idOfRef`, `refOf`).
 */
export interface ObjectRef {
  group: string;
  version: string;
  kind: string;
  name: string;
  namespace?: string;
}

/** The apiVersion of a reference: `group/version`, or `version` for the core group. */
export function apiVersionOf(ref: Pick<ObjectRef, 'group' | 'version'>): string {
  return ref.group ? `${ref.group}/${ref.version}` : ref.version;
}

/**
 * Whether resourceVersion `a` is at least `b`. Versions are opaque to clients, but the API
 * server's are etcd revisions (decimal numbers, growing); anything else compares as not
 * reached, so that callers read from the API server instead.
 */
export function resourceVersionReached(a: string, b: string): boolean {
  if (!/^\d+$/.test(a) || !/^\d+$/.test(b)) return false;
  return a.length !== b.length ? a.length > b.length : a >= b;
}
