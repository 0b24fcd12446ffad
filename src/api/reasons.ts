// Every reason a module or Kyma status can carry, and the one table that maps a reason to
// upstream's state. Activities throw failures typed with these reasons; readiness evaluation
// and the workflows' decisions produce them; the status writers write them. The table of
// docs/operator/states-and-reasons.md is checked against this table (test/unit/reasons.test.ts).
import type { State } from './shared';

export const REASONS = {
  // Ready
  Ready: {
    state: 'Ready',
    means: 'the manager is available and the module CR reports Ready (or the module has no CR)',
  },
  // Processing
  Installing: { state: 'Processing', means: 'the module is being installed' },
  Upgrading: { state: 'Processing', means: 'a higher version is being applied' },
  Paused: {
    state: 'Processing',
    means:
      'the Manifest carries skip-reconciliation=true: the module waits and keeps its last status (never published)',
  },
  ManagerMissing: { state: 'Processing', means: 'the manager workload does not exist (it is re-applied at once)' },
  ManagerNotAvailable: {
    state: 'Processing',
    means:
      'the manager workload is rolling out: its current spec does not run on every replica yet (old replicas that still serve do not count)',
  },
  ResourceMissing: { state: 'Processing', means: 'the default CR does not exist (it is re-created at once)' },
  ResourceNotReady: { state: 'Processing', means: 'the module CR reports no state yet' },
  ResourceProcessing: { state: 'Processing', means: 'the module CR reports Processing' },
  // Warning
  ResourceWarning: { state: 'Warning', means: 'the module CR reports Warning' },
  DowngradeRefused: {
    state: 'Warning',
    means: 'the desired version is lower than the installed one; the installed one stays',
  },
  SystemNamespaceSkipped: {
    state: 'Warning',
    means:
      'the manifest ships a system namespace (kube-system, kube-public, kube-node-lease, default, or a kyma-system ' +
      'the lifecycle manager did not create): it is left as it is, the rest is installed',
  },
  DeletionBlocked: {
    state: 'Warning',
    means:
      "custom resources of the module's kind exist (the message names them); the removal waits until they are deleted (upstream's Manifest shows Warning too)",
  },
  ModulesLeftOnOldCluster: {
    state: 'Warning',
    means:
      "the Kyma's kubeconfig Secret named another cluster before: the modules were installed on the new one, and " +
      'what stayed on the old one is named in the condition TargetCluster (nothing is removed there) until ' +
      'the annotation operator.kyma-project.io/old-clusters-cleared clears it',
  },
  // Deleting
  ResourceDeleting: { state: 'Deleting', means: 'the module CR reports Deleting' },
  WaitingForResource: {
    state: 'Deleting',
    means:
      'the default CR is being deleted and waits for its finalizers, or a CRD the removal deleted ' +
      'is still being deleted (the message names it; looked at again every 30 s)',
  },
  DeletingObjects: { state: 'Deleting', means: "the module's objects are being deleted" },
  Removing: { state: 'Deleting', means: 'the module left the spec; its removal begins' },
  // Unmanaged
  Unmanaged: { state: 'Unmanaged', means: 'managed: false: the module keeps running without lifecycle management' },
  // Error: the Kyma or the module spec
  InvalidKymaName: { state: 'Error', means: 'the Kyma name is longer than a label value may be (63 characters)' },
  InvalidModuleName: { state: 'Error', means: 'the module name is not a valid label value and Manifest name part' },
  ModuleLimitExceeded: {
    state: 'Error',
    means:
      'the Kyma lists more modules than one Kyma may have (KLM_MAX_MODULES_PER_KYMA, 1,000 by default); nothing of it changes until it lists fewer',
  },
  ModuleNotFound: { state: 'Error', means: 'no ModuleReleaseMeta of that name in the Kyma namespace' },
  ChannelNotFound: { state: 'Error', means: 'the ModuleReleaseMeta assigns no version to the channel' },
  InvalidVersion: { state: 'Error', means: 'the version is not a semantic version' },
  TemplateNotFound: { state: 'Error', means: 'no ModuleTemplate <module>-<version> (never there, or deleted)' },
  TemplateVersionMismatch: { state: 'Error', means: 'the ModuleTemplate describes another version than its name says' },
  ModuleNotVisible: {
    state: 'Error',
    means:
      'the ModuleTemplate is labelled beta or internal and the Kyma lacks that label; an installed module is removed',
  },
  // Error: the module's artifacts
  OcmComponentNameMissing: {
    state: 'Error',
    means:
      'the ModuleTemplate has an empty descriptor ({}) and no ModuleReleaseMeta of the module names its spec.ocmComponentName',
  },
  OciRegistryNotConfigured: {
    state: 'Error',
    means:
      'the ModuleTemplate has an empty descriptor ({}) and the worker has no registry to find the component in (KLM_OCI_REGISTRY_HOST)',
  },
  MalformedDescriptor: { state: 'Error', means: 'the OCM component descriptor or spec.data cannot be used' },
  MalformedLayer: { state: 'Error', means: 'the raw-manifest layer is neither YAML nor a tar with one YAML file' },
  MalformedManifest: {
    state: 'Error',
    means:
      'the raw manifest is not Kubernetes objects (YAML documents, or a `kind: List` of them, which is expanded as kubectl does)',
  },
  EmptyManifest: { state: 'Error', means: 'the raw manifest holds no Kubernetes object' },
  DigestMismatch: { state: 'Error', means: 'registry content does not hash to its digest; nothing is applied' },
  InvalidDigest: { state: 'Error', means: 'a digest in the descriptor is not a sha256 digest' },
  BlobNotFound: { state: 'Error', means: 'the registry does not have the layer or descriptor' },
  RegistryError: { state: 'Error', means: 'the registry answered with an error' },
  RegistryUnavailable: { state: 'Error', means: 'the registry could not be reached' },
  RegistryCredentialsRefused: {
    state: 'Error',
    means: 'the registry refused the credentials (or anonymous access); the message names the Secret they come from',
  },
  // Error: the target cluster
  InvalidKubeconfig: { state: 'Error', means: "the Kyma's kubeconfig Secret holds no usable kubeconfig, or is gone" },
  TargetClusterUnreachable: {
    state: 'Error',
    means:
      "the target cluster could not be reached; while the Kyma's runtime cannot be synced for it, each module's entry says so too (with what it last reported)",
  },
  TargetCredentialsRefused: {
    state: 'Error',
    means:
      "the target cluster refused the kubeconfig's credentials (HTTP 401, or 403 on API " +
      'discovery), whichever step met it; the message names the Secret to renew them in, and ' +
      'when a client certificate expired (or is not valid yet)',
  },
  ApplyRejected: {
    state: 'Error',
    means:
      'the target API server refused an object of the module (for a 403, the message names the permission missing)',
  },
  KindNotServed: { state: 'Error', means: 'an object of the module has a kind the target cluster does not serve' },
  DefaultCrKindNotServed: {
    state: 'Error',
    means: "the default CR's kind is not served after the module's CRDs were applied",
  },
  CrdNotEstablished: { state: 'Error', means: "the module's CRDs did not become Established in time" },
  ManagerNotAvailableTimeout: {
    state: 'Error',
    means: 'the manager stayed unavailable (or missing) longer than the timeout (recovers by itself)',
  },
  ManagerRolloutStalled: {
    state: 'Error',
    means:
      "the manager Deployment's rollout exceeded its progress deadline (its Progressing condition " +
      "says ProgressDeadlineExceeded); the message is the condition's",
  },
  ManagerPodsFailing: {
    state: 'Error',
    means:
      "the manager's rollout cannot complete: a pod of it cannot be scheduled, crash-loops or " +
      'cannot pull its image; the message names the pod and its reason (recovers by itself)',
  },
  ResourceError: { state: 'Error', means: 'the module CR reports Error' },
  InvalidCustomStateCheck: {
    state: 'Error',
    means:
      "the ModuleTemplate's customStateCheck maps no value to Ready or to Error, or its jsonPath finds no string in the module CR",
  },
  MaintenancePolicyInvalid: {
    state: 'Error',
    means:
      'an upgrade requires downtime and the maintenance-window policy (KLM_MAINTENANCE_POLICY) cannot be used; the installed version stays',
  },
  ResolutionFailed: { state: 'Error', means: 'the ModuleReleaseMeta or ModuleTemplate could not be read' },
  Failed: { state: 'Error', means: 'an unexpected failure; the message tells which step' },
} as const satisfies Record<string, { state: Exclude<State, ''>; means: string }>;

export type Reason = keyof typeof REASONS;
export type ReasonState = (typeof REASONS)[Reason]['state'];

export function isReason(value: unknown): value is Reason {
  return typeof value === 'string' && Object.hasOwn(REASONS, value);
}

/** The state a reason stands for: the one place where errors and observations become states. */
export function stateOf(reason: Reason): ReasonState {
  return REASONS[reason].state;
}

/** A failure's type as a reason: typed failures keep theirs; anything else is Failed. */
export function reasonOf(type: string | undefined | null): Reason {
  return isReason(type) ? type : 'Failed';
}
