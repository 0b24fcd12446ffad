// Control-plane activities: read the Kyma, resolve its modules to ModuleTemplates, and the
// two status writers (Kyma and Manifest).
import { ApplicationFailure } from '@temporalio/activity';
import { satisfies, valid } from 'semver';
import type { Kyma, KymaStatusInput, ModuleStatus } from '../api/kyma';
import type { InventoryEntry, Manifest, ManifestStatus } from '../api/manifest';
import type { ModuleReleaseMeta } from '../api/modulereleasemeta';
import type { ModuleTemplate } from '../api/moduletemplate';
import { API_VERSION, DEFAULT_CHANNEL, KYMA_FINALIZER, LABELS, type Condition, type ConditionInput, type State } from '../api/shared';
import { isNotFound, type KubeClient, type KubeObject } from '../k8s/rest-client';
import type { TargetClusters } from '../k8s/target-cluster';
import type { DefaultCrRef, KymaRef, KymaSnapshot, Readiness, RenderedRef, Resolution, ResolvedModule } from '../workflows/types';
import { recordKymaState, recordModuleState } from '../workers/metrics';
import { BoundedMap } from './bounded-map';
import type { BlobCache } from './blob-cache';
import { loadRendered, MANAGED_BY } from './render';
import { manifestName, RESOURCE_KIND_ANNOTATION } from '../api/names';

/** How many Manifests a worker remembers its last write of. */
const MANIFESTS_KEPT = 20_000;

interface WrittenManifest {
  specKey: string;
  generation: number;
  conditions?: Condition[];
  /** The rendered list whose inventory the status holds. */
  syncedDigest?: string;
}

export function kcpActivities(kcp: KubeClient, cache: BlobCache, targets: TargetClusters) {
  /** What this worker last wrote to each Manifest (it is the one writer; see syncManifest). */
  const written = new BoundedMap<string, WrittenManifest>(MANIFESTS_KEPT);
  async function readKyma(ref: KymaRef): Promise<Kyma | undefined> {
    return await kcp.get<Kyma & KubeObject>(API_VERSION, 'Kyma', ref.name, ref.namespace);
  }

  return {
    /** The Kyma's spec as the workflow needs it, or null when it no longer exists. */
    async loadKyma(ref: KymaRef): Promise<KymaSnapshot | null> {
      const kyma = await readKyma(ref);
      if (!kyma) return null;
      return {
        uid: kyma.metadata.uid ?? '',
        generation: kyma.metadata.generation ?? 0,
        channel: kyma.spec.channel,
        deleting: Boolean(kyma.metadata.deletionTimestamp),
        finalized: (kyma.metadata.finalizers ?? []).includes(KYMA_FINALIZER),
        paused: kyma.metadata.labels?.[LABELS.skipReconciliation] === 'true',
        // Looked up afresh: deletion must see a Secret that has just gone.
        remote: (await targets.secretOf(ref.namespace, ref.name, 0)) !== undefined,
        modules: (kyma.spec.modules ?? []).map((m) => ({
          name: m.name,
          channel: m.channel,
          version: m.version,
          customResourcePolicy: m.customResourcePolicy ?? 'CreateAndDelete',
          managed: m.managed ?? true,
        })),
      };
    },

    /**
     * For each module: the channel (module's, else the Kyma's, else regular), the version
     * (a pin, else the ModuleReleaseMeta's for that channel) and the ModuleTemplate
     * `<module>-<version>`. A failure becomes that module's status; the others go on.
     */
    async resolveModules(ref: KymaRef, snapshot: KymaSnapshot): Promise<Resolution[]> {
      const resolved = await Promise.all(snapshot.modules.map((m) => resolveOne(kcp, ref.namespace, snapshot.channel, m)));
      return snapshot.remote ? resolved.map((r) => (r.ok ? { ok: true, module: { ...r.module, remote: true } } : r)) : resolved;
    },

    /** Adds the Kyma finalizer (so that deletion waits for the modules' removal). */
    async addKymaFinalizer(ref: KymaRef, uid: string): Promise<void> {
      const kyma = await readKyma(ref);
      if (!kyma || kyma.metadata.uid !== uid || kyma.metadata.deletionTimestamp) return;
      const finalizers = kyma.metadata.finalizers ?? [];
      if (finalizers.includes(KYMA_FINALIZER)) return;
      await kcp.mergePatch(API_VERSION, 'Kyma', ref.name, ref.namespace, { metadata: { finalizers: [...finalizers, KYMA_FINALIZER], resourceVersion: kyma.metadata.resourceVersion } });
    },

    /** Drops the Kyma finalizer: the last step of a Kyma's deletion. */
    async removeKymaFinalizer(ref: KymaRef, uid: string): Promise<void> {
      const kyma = await readKyma(ref);
      if (!kyma || kyma.metadata.uid !== uid) return;
      const finalizers = kyma.metadata.finalizers ?? [];
      if (!finalizers.includes(KYMA_FINALIZER)) return;
      await kcp.mergePatch(API_VERSION, 'Kyma', ref.name, ref.namespace, { metadata: { finalizers: finalizers.filter((f) => f !== KYMA_FINALIZER), resourceVersion: kyma.metadata.resourceVersion } });
    },

    /** A Kubernetes Event on the Kyma, for each lifecycle step. */
    async recordKymaEvent(ref: KymaRef, uid: string, type: 'Normal' | 'Warning', reason: string, message: string): Promise<void> {
      const now = new Date().toISOString();
      await kcp.create({
        apiVersion: 'v1',
        kind: 'Event',
        metadata: { name: `${ref.name}.${Date.now().toString(16)}${Math.random().toString(16).slice(2, 8)}`, namespace: ref.namespace },
        involvedObject: { apiVersion: API_VERSION, kind: 'Kyma', name: ref.name, namespace: ref.namespace, uid },
        type,
        reason,
        message: message.slice(0, 1024),
        source: { component: MANAGED_BY },
        firstTimestamp: now,
        lastTimestamp: now,
        count: 1,
      });
    },

    async deleteManifest(ref: KymaRef, module: string): Promise<void> {
      written.delete(`${ref.namespace}/${manifestName(ref.name, module)}`);
      await kcp.delete(API_VERSION, 'Manifest', manifestName(ref.name, module), ref.namespace);
    },

    /** The one writer of Kyma status. Skips the write when the Kyma was re-created (uid). */
    async writeKymaStatus(ref: KymaRef, uid: string, status: KymaStatusInput): Promise<void> {
      const kyma = await readKyma(ref);
      if (!kyma || kyma.metadata.uid !== uid) return;
      const now = new Date().toISOString();
      const conditions = mergeConditions(kyma.status?.conditions, status.conditions ?? [], kyma.metadata.generation ?? 0, now);
      await kcp.mergePatch(API_VERSION, 'Kyma', ref.name, ref.namespace, {
        status: { ...status, conditions, lastOperation: status.lastOperation && { ...status.lastOperation, lastUpdateTime: now } },
      }, 'status');
      recordKymaState(ref.namespace, ref.name, status.state ?? '');
    },

    /**
     * The one writer of Manifests: spec by server-side apply, then status with the inventory.
     * The spec is applied, and the inventory sent, only when they differ from what this worker
     * last wrote; a state change alone is one status patch.
     */
    async syncManifest(ref: KymaRef, uid: string, module: ResolvedModule, result: Readiness, rendered: RenderedRef | null, resource: DefaultCrRef | null, resourceKind: string | null): Promise<void> {
      const name = manifestName(ref.name, module.name);
      const key = `${ref.namespace}/${name}`;
      const now = new Date().toISOString();
      const desired: Manifest & KubeObject = {
        apiVersion: API_VERSION,
        kind: 'Manifest',
        metadata: {
          name,
          namespace: ref.namespace,
          labels: { [LABELS.kymaName]: ref.name, [LABELS.moduleName]: module.name, [LABELS.managedBy]: MANAGED_BY },
          // The bridge routes events on CRs of this kind (blockers of removal, too) by it.
          ...(resourceKind ? { annotations: { [RESOURCE_KIND_ANNOTATION]: resourceKind } } : {}),
          ownerReferences: [{ apiVersion: API_VERSION, kind: 'Kyma', name: ref.name, uid, controller: true, blockOwnerDeletion: false }],
        },
        spec: {
          remote: false,
          version: module.version,
          customResourcePolicy: module.customResourcePolicy,
          install: { name: 'raw-manifest', source: { name: module.fqdn ?? module.name, template: module.template.name, layer: rendered?.layer.digest ?? '' } },
          ...(rendered?.manager ? { manager: rendered.manager } : {}),
          // The default CR this module manages (the bridge watches its kind).
          resource: resource && { apiVersion: resource.apiVersion, kind: resource.kind, metadata: { name: resource.name, ...(resource.namespace ? { namespace: resource.namespace } : {}) } },
        },
      };
      const specKey = JSON.stringify(desired);
      let last = written.get(key);
      if (last?.specKey !== specKey) {
        const applied: Manifest = await kcp.apply<Manifest & KubeObject>(desired);
        last = { specKey, generation: applied.metadata.generation ?? 0, conditions: applied.status?.conditions };
      }
      const condition = { type: 'Installation', status: result.state === 'Ready' ? 'True' : 'False', reason: result.reason, message: result.message } as const;
      const conditions = mergeConditions(last.conditions, [condition], last.generation, now);
      const status: ManifestStatus = { state: result.state, lastOperation: { operation: result.message, lastUpdateTime: now }, conditions };
      if (rendered && rendered.digest !== last.syncedDigest) {
        status.synced = (await loadRendered(cache, rendered)).map((o): InventoryEntry => {
          const [group, version] = o.apiVersion.includes('/') ? o.apiVersion.split('/') : ['', o.apiVersion];
          return { group: group!, version: version!, kind: o.kind, name: o.metadata.name, namespace: o.metadata.namespace ?? '' };
        });
      }
      try {
        await kcp.mergePatch(API_VERSION, 'Manifest', name, ref.namespace, { status }, 'status');
      } catch (err) {
        // Gone or changed behind our back: the next write starts from the API server again.
        written.delete(key);
        throw err;
      }
      written.set(key, { ...last, conditions, syncedDigest: rendered?.digest ?? last.syncedDigest });
      recordModuleState(ref.namespace, ref.name, module.name, result.state);
    },
  };
}

function mergeConditions(old: Condition[] | undefined, next: ConditionInput[], generation: number, now: string): Condition[] {
  return next.map((c) => {
    const prev = old?.find((o) => o.type === c.type);
    const lastTransitionTime = prev && prev.status === c.status ? prev.lastTransitionTime : now;
    return { ...c, observedGeneration: generation, lastTransitionTime };
  });
}

function failed(name: string, channel: string, state: State, message: string, version?: string): Resolution {
  const status: ModuleStatus = { name, channel, state, message };
  if (version) status.version = version;
  return { ok: false, status };
}

async function resolveOne(kcp: KubeClient, namespace: string, kymaChannel: string, m: KymaSnapshot['modules'][number]): Promise<Resolution> {
  const channel = m.channel || kymaChannel || DEFAULT_CHANNEL;
  try {
    let version = m.version;
    if (!version) {
      const meta = (await kcp.get<ModuleReleaseMeta & KubeObject>(API_VERSION, 'ModuleReleaseMeta', m.name, namespace)) as ModuleReleaseMeta | undefined;
      if (!meta) return failed(m.name, channel, 'Error', `module "${m.name}" is unknown: no ModuleReleaseMeta "${m.name}" in namespace "${namespace}"`);
      version = meta.spec.mandatory?.version ?? meta.spec.channels?.find((c) => c.channel === channel)?.version;
      if (!version) {
        const known = (meta.spec.channels ?? []).map((c) => c.channel).join(', ') || 'none';
        return failed(m.name, channel, 'Error', `module "${m.name}" has no version for channel "${channel}" in ModuleReleaseMeta ${namespace}/${m.name} (channels: ${known})`);
      }
    }
    if (!valid(version)) return failed(m.name, channel, 'Error', `module "${m.name}": "${version}" is not a semantic version`);
    const templateName = `${m.name}-${version}`;
    const template = (await kcp.get<ModuleTemplate & KubeObject>(API_VERSION, 'ModuleTemplate', templateName, namespace)) as ModuleTemplate | undefined;
    if (!template) {
      const why = m.version ? `pinned version ${version}` : `version ${version} of channel "${channel}"`;
      return failed(m.name, channel, 'Warning', `module "${m.name}": no ModuleTemplate "${templateName}" in namespace "${namespace}" for ${why}`, version);
    }
    if (template.spec.version && !satisfies(template.spec.version, `=${version}`)) {
      return failed(m.name, channel, 'Error', `ModuleTemplate ${namespace}/${templateName} describes version ${template.spec.version}, not ${version}`, version);
    }
    const descriptor = template.spec.descriptor as { component?: { name?: string } } | undefined;
    return {
      ok: true,
      module: {
        name: m.name,
        channel: m.version ? (m.channel ?? '') : channel,
        version,
        customResourcePolicy: m.customResourcePolicy,
        template: { name: templateName, namespace, generation: template.metadata.generation ?? 0 },
        fqdn: descriptor?.component?.name,
      },
    };
  } catch (err) {
    if (isNotFound(err)) return failed(m.name, channel, 'Error', `module "${m.name}": ${(err as Error).message}`);
    throw ApplicationFailure.retryable(`resolving module "${m.name}": ${(err as Error).message}`, 'ResolutionFailed');
  }
}
