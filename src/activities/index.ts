// All activities, built over the worker's shared dependencies, by concern: the Kyma, its
// Manifests and Events in the control plane; installing, checking and removing modules in
// target clusters.
import type { ActivityInterceptorsFactory } from '@temporalio/worker';
import { API_VERSION } from '../api/shared';
import { ObjectCache } from '../k8s/object-cache';
import type { KubeClient } from '../k8s/rest-client';
import { TargetClusters } from '../k8s/target-cluster';
import type { Registries } from '../oci/registries';
import type { OcmRegistry } from '../oci/ocm';
import { BlobCache } from './blob-cache';
import { eventActivities } from './events';
import { installActivities } from './install/install';
import { installBatchActivities } from './install/install-batch';
import { kymaActivities } from './kyma';
import { kymaWritesActivities } from './kyma-writes';
import type { PolicyRef } from './maintenance';
import { manifestActivities, ManifestWriter } from './manifest';
import { moduleActionActivities } from './module-actions';
import { promotionDiffActivities } from './promotion-diff';
import { readinessActivities } from './readiness';
import { rolloutActivities } from './rollout';
import { runtimeActivities, runtimeStatusWriter } from './runtime';
import { uninstallActivities } from './uninstall';
import type { ReconcileSettings } from '../contract/settings';
import { workerActivities } from './worker';

export interface ActivityDeps {
  /** The control-plane cluster (Kymas, ModuleTemplates, Manifests, kubeconfig Secrets). */
  kcp: KubeClient;
  /** The worker's cache of the control-plane kinds activities read (`controlPlaneCache`), started. */
  cache: ObjectCache;
  /** Directory of the content-addressed blob cache. */
  cacheDir: string;
  /** Target-cluster clients (one per worker, with its Secret watch); a fresh one by default. */
  targets?: TargetClusters;
  /** How registries are reached (CA, insecure hosts, credentials): the worker's, from its configuration. */
  registries: Registries;
  /**
   * The OCI registry that holds the modules' OCM components (upstream's --oci-registry-host and
   * --modules-repository-subpath): templates with `descriptor: {}` are found there. Unset:
   * such templates fail with OciRegistryNotConfigured.
   */
  ociRegistry?: OcmRegistry;
  /** The ConfigMap holding the maintenance-window policy (KLM_MAINTENANCE_POLICY); none: upgrades are never held. */
  maintenancePolicy?: PolicyRef;
  /** The reconcile settings Kyma workflows read at the start of each run. */
  settings: ReconcileSettings;
  /** The build id of the current version of the worker's deployment (asked of Temporal). */
  currentVersion: () => Promise<string | undefined>;
  /** The worker's activity interceptors: each attempt of a module's install in a batch passes through them too. */
  observers?: ActivityInterceptorsFactory[];
}

/** The worker's cache of what activities read in the control plane (kubeconfig Secrets are TargetClusters'). */
export function controlPlaneCache(kcp: KubeClient, onError?: (err: unknown) => void): ObjectCache {
  return new ObjectCache(
    kcp,
    ['Kyma', 'ModuleTemplate', 'ModuleReleaseMeta', 'Manifest'].map((kind) => ({ apiVersion: API_VERSION, kind })),
    undefined,
    onError,
  );
}

export function createActivities(deps: ActivityDeps) {
  const cache = new BlobCache(deps.cacheDir, deps.registries);
  const targets = deps.targets ?? new TargetClusters(deps.kcp);
  const writer = new ManifestWriter(deps.kcp, cache);
  const manifests = manifestActivities(deps.kcp, deps.cache, writer);
  const readiness = readinessActivities(targets, (input) => manifests.manifestPaused(input));
  const kyma = kymaActivities(deps.kcp, deps.cache, targets, deps.maintenancePolicy);
  const events = eventActivities(deps.kcp);
  const runtime = runtimeActivities(deps.kcp, deps.cache, targets);
  const installer = installActivities(deps.cache, targets, cache, (i) => readiness.checkReadiness(i), deps.ociRegistry);
  return {
    ...workerActivities(deps.settings, deps.currentVersion, (input) => kyma.loadKyma(input)),
    ...kyma,
    ...events,
    ...kymaWritesActivities({
      manifests: writer,
      writeKymaStatus: (input) => kyma.writeKymaStatus(input),
      recordKymaEvent: (input) => events.recordKymaEvent(input),
      writeRuntimeStatus: runtimeStatusWriter(targets),
    }),
    ...manifests,
    ...installBatchActivities(
      {
        installModule: (input) => installer.installModule(input),
        syncRuntimeCatalog: (input) => runtime.syncRuntimeCatalog(input),
      },
      deps.observers,
    ),
    ...readiness,
    ...uninstallActivities(targets, cache),
    ...rolloutActivities(deps.kcp, deps.cache),
    ...promotionDiffActivities(deps.cache, cache, deps.ociRegistry),
    ...runtime,
    ...moduleActionActivities({
      checkReadiness: (input) => readiness.checkReadiness(input),
      manifestPaused: (input) => manifests.manifestPaused(input),
      deleteManifest: (input) => manifests.deleteManifest(input),
    }),
  };
}

export type Activities = ReturnType<typeof createActivities>;
