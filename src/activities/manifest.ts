// The Manifest of each Kyma × module in the control plane: its one writer (with a memo of what
// this worker wrote last, so that an unchanged spec is not applied again), its deletion, and
// its skip-reconciliation label.
import { MANAGED_BY } from '../api/identity';
import type { InventoryEntry, Manifest, ManifestStatus } from '../api/manifest';
import { manifestName, RESOURCE_KIND_ANNOTATION, STATE_PATHS_ANNOTATION } from '../api/names';
import { idOf, refOf } from '../api/object-id';
import { stateOf } from '../api/reasons';
import { API_VERSION, LABELS, type Condition, type KubeObject } from '../api/shared';
import type { DefaultCrRef } from '../contract/artifacts';
import type { KymaRef } from '../contract/kyma';
import type { ManifestWrite } from '../contract/kyma-writes';
import type { SeenVersions } from '../contract/seen-versions';
import { mergeConditions } from '../decisions/conditions';
import { BoundedMap } from '../infra/bounded-map';
import type { ObjectCache } from '../k8s/object-cache';
import type { KubeClient } from '../k8s/rest-client';
import { inBatches } from '../manifests/batches';
import type { BlobCache } from './blob-cache';
import { loadRendered } from './install/render';

/** How many Manifests a worker remembers its last write of. */
const MANIFESTS_KEPT = 20_000;

interface WrittenManifest {
  specKey: string;
  generation: number;
  conditions?: Condition[];
  /** The rendered list whose inventory the status holds. */
  syncedDigest?: string;
}

/** One module's Manifest, for a Kyma. */
export interface SyncManifestInput extends ManifestWrite {
  kyma: KymaRef;
}

export interface ManifestInput {
  kyma: KymaRef;
  module: string;
}

export interface ManifestPausedInput extends ManifestInput {
  /** The Manifest's version the module was told of: the cache must have caught up with it. */
  seen?: SeenVersions;
}

/**
 * The one writer of Manifests: spec by server-side apply, then status with the inventory. The
 * spec is applied, and the inventory sent, only when they differ from what this worker last
 * wrote; a state change alone is one status patch.
 */
export class ManifestWriter {
  /** What this worker last wrote to each Manifest. */
  private readonly written = new BoundedMap<string, WrittenManifest>(MANIFESTS_KEPT);

  constructor(
    private readonly kcp: KubeClient,
    private readonly cache: BlobCache,
  ) {}

  async sync({ kyma, uid, module, readiness, rendered, resource, resourceKind }: SyncManifestInput): Promise<void> {
    const { kcp, cache, written } = this;
    const name = manifestName(kyma.name, module.name);
    const key = `${kyma.namespace}/${name}`;
    const now = new Date().toISOString();
    const desired: Manifest & KubeObject = {
      apiVersion: API_VERSION,
      kind: 'Manifest',
      metadata: {
        name,
        namespace: kyma.namespace,
        labels: {
          [LABELS.kymaName]: kyma.name,
          [LABELS.moduleName]: module.name,
          [LABELS.managedBy]: MANAGED_BY,
          ...(module.mandatory ? { [LABELS.mandatoryModule]: 'true' } : {}),
        },
        // The bridge routes events on CRs of this kind (blockers of removal, too) by it, and
        // follows the fields a customStateCheck reads besides state and message.
        ...(resourceKind ? { annotations: { [RESOURCE_KIND_ANNOTATION]: resourceKind, ...statePaths(resource) } } : {}),
        ownerReferences: [
          { apiVersion: API_VERSION, kind: 'Kyma', name: kyma.name, uid, controller: true, blockOwnerDeletion: false },
        ],
      },
      spec: {
        remote: false,
        version: module.version,
        customResourcePolicy: module.customResourcePolicy,
        install: {
          name: 'raw-manifest',
          source: {
            name: module.fqdn ?? module.name,
            template: module.template.name,
            layer: rendered?.layer.digest ?? '',
          },
        },
        ...(rendered?.manager ? { manager: rendered.manager } : {}),
        // The default CR this module manages (the bridge watches its kind).
        resource: resource
          ? {
              apiVersion: resource.apiVersion,
              kind: resource.kind,
              metadata: { name: resource.name, ...(resource.namespace ? { namespace: resource.namespace } : {}) },
            }
          : null,
      },
    };
    const specKey = JSON.stringify(desired);
    let last = written.get(key);
    if (last?.specKey !== specKey) {
      const applied: Manifest = await kcp.apply<Manifest & KubeObject>(desired);
      last = { specKey, generation: applied.metadata.generation ?? 0, conditions: applied.status?.conditions };
    }
    const state = stateOf(readiness.reason);
    const condition = {
      type: 'Installation',
      status: state === 'Ready' ? 'True' : 'False',
      reason: readiness.reason,
      message: readiness.message,
    } as const;
    const conditions = mergeConditions(last.conditions, [condition], last.generation, now);
    const status: ManifestStatus = {
      state,
      lastOperation: { operation: readiness.message, lastUpdateTime: now },
      conditions,
    };
    if (rendered && rendered.digest !== last.syncedDigest) {
      status.synced = (await loadRendered(cache, rendered)).map((o): InventoryEntry => ({
        ...refOf(idOf(o)),
        namespace: o.metadata.namespace ?? '',
      }));
    }
    try {
      await kcp.mergePatch(API_VERSION, 'Manifest', name, kyma.namespace, { status }, 'status');
    } catch (err) {
      // Gone or changed behind our back: the next write starts from the API server again.
      written.delete(key);
      throw err;
    }
    written.set(key, { ...last, conditions, syncedDigest: rendered?.digest ?? last.syncedDigest });
  }

  /** The Manifest is deleted: the next write starts from the API server. */
  forget(kyma: KymaRef, module: string): void {
    this.written.delete(`${kyma.namespace}/${manifestName(kyma.name, module)}`);
  }
}

export function manifestActivities(kcp: KubeClient, cache: ObjectCache, writer: ManifestWriter) {
  return {
    async deleteManifest({ kyma, module }: ManifestInput): Promise<void> {
      writer.forget(kyma, module);
      await kcp.delete(API_VERSION, 'Manifest', manifestName(kyma.name, module), kyma.namespace);
    },

    /** The Manifests of several modules of a Kyma (whose cluster cannot be reached any more), a batch at a time. */
    async deleteManifests({ kyma, modules }: { kyma: KymaRef; modules: string[] }): Promise<void> {
      await inBatches(modules, async (module) => {
        writer.forget(kyma, module);
        await kcp.delete(API_VERSION, 'Manifest', manifestName(kyma.name, module), kyma.namespace);
      });
    },

    /** Whether the module's Manifest carries skip-reconciliation=true (its workflow then waits). */
    async manifestPaused({ kyma, module, seen }: ManifestPausedInput): Promise<boolean> {
      const name = manifestName(kyma.name, module);
      // The cache decides, once it has seen the version a signal told of (if any): a Manifest it
      // does not hold is one this module's first report is writing, unpaused (a user's label
      // comes with a signal). Only a cache that does not catch up in time sends a GET.
      const m = seen?.Manifest
        ? await cache.getAt(API_VERSION, 'Manifest', name, kyma.namespace, seen.Manifest)
        : cache.peek(API_VERSION, 'Manifest', name, kyma.namespace);
      return m?.metadata.labels?.[LABELS.skipReconciliation] === 'true';
    },
  };
}

/** The STATE_PATHS_ANNOTATION of a managed CR whose template has a customStateCheck. */
function statePaths(resource: DefaultCrRef | undefined): Record<string, string> {
  const paths = [...new Set((resource?.customStateCheck ?? []).map((c) => c.jsonPath))];
  return paths.length ? { [STATE_PATHS_ANNOTATION]: paths.join(',') } : {};
}
