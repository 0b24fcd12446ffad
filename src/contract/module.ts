// A module as the Kyma workflow resolves it and installs it.
import type { CustomResourcePolicy } from '../api/kyma';
import type { FetchedModule, RenderedRef } from './artifacts';
import type { Readiness, ReadinessCheck } from './readiness';

/** A module whose ModuleTemplate was found: what is installed. */
export interface ResolvedModule {
  name: string;
  /** The channel it was resolved on; '' for a version pin without a channel. */
  channel: string;
  version: string;
  customResourcePolicy: CustomResourcePolicy;
  template: { name: string; namespace: string; generation: number };
  fqdn?: string;
  /** A kubeconfig Secret names the target cluster. */
  remote?: boolean;
  /** Installed because its ModuleReleaseMeta is mandatory (its Manifest says so by label). */
  mandatory?: true;
  /** The template's spec.moduleName, when it names another module than this one (installed all the same, as upstream; the Kyma says so). */
  templateModuleName?: string;
  /** The template's labels whose values mean nothing (beta: "yes"), each said in a sentence (the Kyma is warned). */
  templateLabelProblems?: string[];
}

/** A maintenance window in epoch milliseconds: [begin, end). */
export interface Window {
  begin: number;
  end: number;
}

/**
 * On a resolved module whose template requires downtime (its Kyma not skipping maintenance
 * windows, a policy configured): the window it may move in now or next (none ahead in the
 * policy: absent), or why the policy cannot be used.
 */
export interface Downtime {
  window?: Window;
  problem?: string;
}

/** The outcome of resolving one module of the spec. */
export type Resolution =
  | { name: string; module: ResolvedModule; failure?: undefined; downtime?: Downtime }
  | { name: string; module?: undefined; failure: Readiness; channel: string; version?: string };

/**
 * The Kyma → one of its modules: what is wanted now, for the Kyma with this uid. A failure
 * means the module could not be resolved any more; what is installed stays, and the module
 * shows the failure.
 */
export type DesiredModule =
  | { uid: string; module: ResolvedModule; failure?: undefined }
  | { uid: string; module?: undefined; failure: Readiness };

/** What a module has installed (carried across continue-as-new). */
export interface Installed {
  version: string;
  templateGeneration: number;
  fetched: FetchedModule;
  rendered: RenderedRef;
  /** System namespaces its manifest ships, left alone (`Namespace kube-system`): the module shows a Warning. */
  leftAlone?: string[];
  /** The cluster it was applied to (`clusterKey`, ../api/cluster-identity.ts), when known. */
  cluster?: string;
}

/** What an install leaves: what it fetched and rendered, the manager's version as applied, and the readiness check it was asked for. */
export interface InstallResult {
  fetched: FetchedModule;
  rendered: RenderedRef;
  /** The manager's resourceVersion as applied (views of it from before are stale). */
  managerVersion?: string;
  check?: ReadinessCheck;
  /** System namespaces the manifest ships, left alone (`Namespace kube-system`). */
  leftAlone?: string[];
  /** The cluster it applied to (`clusterKey`), when it could tell. */
  cluster?: string;
}

/** What stands in the way of a module's removal in its cluster. */
/**
 * What a deletion of a module's objects did. `done` is false while the removal must wait: for CRs
 * of the module's kind (it turned out to be the last installation), or for the objects in
 * `terminating`, deleted but still there (a CRD whose custom resources are being cleaned up).
 */
export interface DeletedObjects {
  deleted: number;
  done: boolean;
  /** Objects found there before the module, left in place with their own labels. */
  left?: string[];
  /** Deleted objects still being deleted, as `kind namespace/name`. */
  terminating?: string[];
}

export interface Blockers {
  /** Custom resources of the module's kind (the default CR not counted when the module owns it). */
  count: number;
  /** The first few, as `kind namespace/name`. */
  first: string[];
  /** Other installations of the same module in the cluster (other Kymas sharing it). */
  sharedWith: number;
}
