// The Kyma in the control plane: reading it, resolving its modules, its finalizer, and the one
// writer of its status.
import type { ClusterIdentity } from '../api/cluster-identity';
import type { Kyma, KymaStatusInput } from '../api/kyma';
import type { ModuleReleaseMeta } from '../api/modulereleasemeta';
import type { ModuleTemplate } from '../api/moduletemplate';
import { OLD_CLUSTERS_CLEARED_ANNOTATION } from '../api/names';
import {
  API_VERSION,
  effectiveChannel,
  KYMA_FINALIZER,
  LABELS,
  MANDATORY_CHANNEL,
  RUNTIME_LABELS,
  type Condition,
  type KubeObject,
} from '../api/shared';
import type { KymaRef, KymaSnapshot, SpecModule } from '../contract/kyma';
import type { Resolution } from '../contract/module';
import type { SeenVersions } from '../contract/seen-versions';
import { mergeConditions } from '../decisions/conditions';
import { finalizerDue } from '../decisions/kyma-reconciled';
import { kymaLabelProblems } from '../decisions/label-values';
import { kymaNameProblem } from '../decisions/names';
import { specModules } from '../decisions/runtime-kyma';
import { resolveModule, type ModuleCatalog } from '../decisions/resolution';
import { kymaVisibility } from '../decisions/visibility';
import { BoundedMap } from '../infra/bounded-map';
import type { ObjectCache } from '../k8s/object-cache';
import { isNotFound, KubeApiError } from '../k8s/request-errors';
import { type KubeClient } from '../k8s/rest-client';
import type { TargetClusters } from '../k8s/target-cluster';
import { transient } from './failure';
import { withDowntime, type PolicyRef } from './maintenance';
import { within } from '../infra/deadline';

export interface KymaInput {
  kyma: KymaRef;
  /** What the workflow was told of since its last read: the cache must have caught up with it. */
  seen?: SeenVersions;
}

export interface LoadKymaInput extends KymaInput {
  /** The modules one Kyma may have (KLM_MAX_MODULES_PER_KYMA): a Kyma with more gets no finalizer. */
  maxModules: number;
}

export interface KymaUidInput extends KymaInput {
  /** The Kyma the workflow works for: a re-created Kyma (another uid) is left alone. */
  uid: string;
}

export interface ResolveModulesInput extends KymaInput {
  snapshot: KymaSnapshot;
}

export interface WriteKymaStatusInput extends KymaUidInput {
  status: KymaStatusInput;
  /**
   * When the workflow decided this write (its time, ms): its lastOperation's lastUpdateTime, and
   * the fence against a write that comes too late (see STALE_WRITE_MS). Unset: the worker's clock,
   * no fence (runs begun before the fence).
   */
  at?: number;
}

/**
 * A status write whose time is older than the status there by more than this is stale: a local
 * activity of a workflow task that timed out (10 s) and went on running while the task's retry
 * wrote a newer status. Shorter than the task timeout, longer than clocks differ between workers
 * (whose clocks stamped statuses before the fence) and Temporal.
 */
export const STALE_WRITE_MS = 5_000;

/** Whether a status decided at `at` is older than what `current` shows by more than STALE_WRITE_MS. */
export function staleStatusWrite(current: Kyma | undefined, at: number | undefined): boolean {
  const shown = Date.parse(current?.status?.lastOperation?.lastUpdateTime ?? '');
  return at !== undefined && Number.isFinite(shown) && shown > at + STALE_WRITE_MS;
}

/** Upstream's runtime labels of the Kyma that are set, by the policy's field names. */
function runtimeOf(labels: Record<string, string> = {}): Record<string, string> {
  return Object.fromEntries(
    Object.entries(RUNTIME_LABELS).flatMap(([field, label]) => (labels[label] ? [[field, labels[label]]] : [])),
  );
}

/** How long a load waits to learn which cluster a Kyma's Secret names. */
const IDENTITY_WAIT_MS = 2_000;

/** The annotation's switch number, when it is one. */
function clearedUpTo(value: string | undefined): number | undefined {
  return value !== undefined && /^\d{1,9}$/.test(value.trim()) ? Number(value.trim()) : undefined;
}

/** How many Kymas a worker remembers the conditions it last wrote of. */
const KYMAS_KEPT = 20_000;

/** The Kyma's namespace as resolution sees it: its ModuleReleaseMetas and ModuleTemplates, from the cache. */
function catalogOf(cache: ObjectCache, namespace: string, seen: SeenVersions = {}): ModuleCatalog {
  return {
    namespace,
    releaseMeta: async (name) =>
      await cache.get<ModuleReleaseMeta & KubeObject>(
        API_VERSION,
        'ModuleReleaseMeta',
        name,
        namespace,
        seen.ModuleReleaseMeta,
      ),
    template: async (name) =>
      await cache.get<ModuleTemplate & KubeObject>(API_VERSION, 'ModuleTemplate', name, namespace, seen.ModuleTemplate),
  };
}

/**
 * The mandatory modules of the namespace a Kyma does not list itself: those whose
 * ModuleReleaseMeta has .spec.mandatory and is not being deleted (its deletion removes them).
 */
async function mandatoryModules(
  cache: ObjectCache,
  namespace: string,
  listed: Set<string>,
  seen?: string,
): Promise<SpecModule[]> {
  const metas = await cache.list<ModuleReleaseMeta & KubeObject>(API_VERSION, 'ModuleReleaseMeta', namespace, seen);
  return metas
    .filter((m) => m.spec.mandatory?.version && !m.metadata.deletionTimestamp && !listed.has(m.metadata.name))
    .map((m) => ({
      name: m.metadata.name,
      channel: MANDATORY_CHANNEL,
      customResourcePolicy: 'CreateAndDelete' as const,
      managed: true,
      mandatory: true as const,
    }))
    .sort((a, b) => a.name.localeCompare(b.name));
}

async function readKyma(cache: ObjectCache, ref: KymaRef, atLeast?: string): Promise<(Kyma & KubeObject) | undefined> {
  return await cache.get<Kyma & KubeObject>(API_VERSION, 'Kyma', ref.name, ref.namespace, atLeast);
}

/**
 * Adds or drops our finalizer, guarded by the resourceVersion it read: a stale read is read again.
 * Whether the Kyma of `uid` has it (`present`) or lacks it now, as this worker made it; a Kyma
 * gone, re-created or (for `present`) being deleted is left alone: false.
 */
async function setFinalizer(
  kcp: KubeClient,
  cache: ObjectCache,
  ref: KymaRef,
  uid: string,
  present: boolean,
): Promise<boolean> {
  for (let fresh = false; ; fresh = true) {
    const kyma = fresh
      ? await kcp.get<Kyma & KubeObject>(API_VERSION, 'Kyma', ref.name, ref.namespace)
      : await readKyma(cache, ref);
    if (!kyma || kyma.metadata.uid !== uid || (present && kyma.metadata.deletionTimestamp)) return false;
    const finalizers = kyma.metadata.finalizers ?? [];
    if (finalizers.includes(KYMA_FINALIZER) === present) return true;
    const next = present ? [...finalizers, KYMA_FINALIZER] : finalizers.filter((f) => f !== KYMA_FINALIZER);
    try {
      await kcp.mergePatch(API_VERSION, 'Kyma', ref.name, ref.namespace, {
        metadata: { finalizers: next, resourceVersion: kyma.metadata.resourceVersion },
      });
      return true;
    } catch (err) {
      if (fresh || !(err instanceof KubeApiError && err.status === 409)) throw err;
    }
  }
}

/**
 * Which cluster the Kyma's modules go to: the one its Secret names, else the control plane.
 * Unknown (undefined) when it cannot be told within IDENTITY_WAIT_MS (a cluster that does not
 * answer, a Secret without a usable kubeconfig): the read goes on, and a later load takes it.
 */
async function clusterOf(
  targets: TargetClusters,
  ref: KymaRef,
  secret: KubeObject | undefined,
): Promise<ClusterIdentity | undefined> {
  const identity = targets.clientOf(ref.namespace, ref.name, secret).then((c) => targets.identityOf(c));
  return await within(identity, IDENTITY_WAIT_MS).catch(() => undefined);
}

/** The Kyma's spec as the workflow needs it, or null when it no longer exists. */
async function loadSnapshot(
  cache: ObjectCache,
  targets: TargetClusters,
  ref: KymaRef,
  seen: SeenVersions | undefined,
): Promise<KymaSnapshot | null> {
  const kyma = await readKyma(cache, ref, seen?.Kyma);
  if (!kyma) return null;
  const invalid = kymaNameProblem(ref.name);
  const labelProblems = kymaLabelProblems(kyma.metadata.labels);
  const deleting = Boolean(kyma.metadata.deletionTimestamp);
  // A Secret the watch does not hold (yet) is looked up; deletion looks afresh, as it must
  // see a Secret that has just gone. A name that cannot be a label value cannot label a
  // Secret either.
  const secret = invalid
    ? undefined
    : await targets.secretOf(ref.namespace, ref.name, deleting ? 0 : undefined, seen?.Secret);
  const remote = secret !== undefined;
  const cluster = invalid ? undefined : await clusterOf(targets, ref, secret);
  const cleared = clearedUpTo(kyma.metadata.annotations?.[OLD_CLUSTERS_CLEARED_ANNOTATION]);
  const listed = new Set((kyma.spec.modules ?? []).map((m) => m.name));
  const mandatory = deleting ? [] : await mandatoryModules(cache, ref.namespace, new Set(), seen?.ModuleReleaseMeta);
  return {
    uid: kyma.metadata.uid ?? '',
    generation: kyma.metadata.generation ?? 0,
    channel: kyma.spec.channel,
    deleting,
    finalized: (kyma.metadata.finalizers ?? []).includes(KYMA_FINALIZER),
    paused: kyma.metadata.labels?.[LABELS.skipReconciliation] === 'true',
    skipMaintenanceWindows: kyma.spec.skipMaintenanceWindows === true,
    runtime: runtimeOf(kyma.metadata.labels),
    visibility: kymaVisibility(kyma),
    remote,
    modules: [...specModules(kyma.spec.modules), ...mandatory.filter((m) => !listed.has(m.name))],
    ...(remote ? { mandatoryModules: mandatory } : {}),
    ...(invalid ? { invalid } : {}),
    ...(labelProblems.length ? { labelProblems } : {}),
    ...(cluster ? { cluster } : {}),
    ...(cleared !== undefined ? { oldClustersCleared: cleared } : {}),
  };
}

/** Resolves one module of the spec; one that cannot be resolved gets its reason. */
async function resolveOne(m: SpecModule, snapshot: KymaSnapshot, catalog: ModuleCatalog): Promise<Resolution> {
  try {
    const r = await resolveModule(m, snapshot.channel, catalog, snapshot.visibility);
    return r.module && snapshot.remote ? { ...r, module: { ...r.module, remote: true } } : r;
  } catch (err) {
    if (isNotFound(err))
      return {
        name: m.name,
        channel: effectiveChannel(m.channel, snapshot.channel),
        failure: { reason: 'ResolutionFailed', message: `module "${m.name}": ${(err as Error).message}` },
      };
    throw transient('ResolutionFailed', `resolving module "${m.name}": ${(err as Error).message}`);
  }
}

/**
 * The one writer of Kyma status: one patch, no read before it (the cache tells the uid and
 * generation, this worker's memo the conditions it wrote last). Skips the write when the Kyma
 * was re-created (uid); a Kyma deleted meanwhile is no error. With `at`, the patch is guarded
 * by the resourceVersion it read (a conflict reads the Kyma afresh), and a write older than
 * the status there (STALE_WRITE_MS) is not made: a late write of a timed-out workflow task
 * would otherwise put back a status the workflow has moved past, for good.
 */
class KymaStatusWriter {
  /** The conditions this worker last wrote per Kyma uid: the cache may not show them yet. */
  private readonly writtenConditions = new BoundedMap<string, Condition[]>(KYMAS_KEPT);
  /** The resourceVersion this worker's last status write per Kyma uid left: a fenced write reads at least that (no conflict with itself). */
  private readonly writtenVersions = new BoundedMap<string, string>(KYMAS_KEPT);

  constructor(
    private readonly kcp: KubeClient,
    private readonly cache: ObjectCache,
  ) {}

  async write({ kyma: ref, uid, status, at }: WriteKymaStatusInput): Promise<void> {
    const { kcp, writtenConditions, writtenVersions } = this;
    for (let fresh = false; ; fresh = true) {
      const kyma = fresh
        ? await kcp.get<Kyma & KubeObject>(API_VERSION, 'Kyma', ref.name, ref.namespace)
        : await readKyma(this.cache, ref, at !== undefined ? writtenVersions.get(uid) : undefined);
      if (!kyma || kyma.metadata.uid !== uid || staleStatusWrite(kyma, at)) return;
      const now = new Date(at ?? Date.now()).toISOString();
      const before = writtenConditions.get(uid) ?? kyma.status?.conditions;
      const conditions = mergeConditions(before, status.conditions ?? [], kyma.metadata.generation ?? 0, now);
      try {
        // (A uid in the patch would guard nothing: the status subresource ignores metadata
        // but the resourceVersion. A Kyma re-created in the moment since the cache saw the old
        // one gets this status until its own workflow writes, as it did when a read came first.)
        const written = await kcp.mergePatch(
          API_VERSION,
          'Kyma',
          ref.name,
          ref.namespace,
          {
            ...(at !== undefined ? { metadata: { resourceVersion: kyma.metadata.resourceVersion } } : {}),
            status: {
              ...status,
              conditions,
              lastOperation: status.lastOperation && { ...status.lastOperation, lastUpdateTime: now },
            },
          },
          'status',
        );
        if (written.metadata.resourceVersion) writtenVersions.set(uid, written.metadata.resourceVersion);
      } catch (err) {
        writtenConditions.delete(uid);
        writtenVersions.delete(uid);
        if (isNotFound(err)) return;
        if (!fresh && err instanceof KubeApiError && err.status === 409) continue;
        throw err;
      }
      writtenConditions.set(uid, conditions);
      return;
    }
  }
}

/** `maintenancePolicy`: the ConfigMap of the maintenance-window policy (KLM_MAINTENANCE_POLICY), if any. */
export function kymaActivities(
  kcp: KubeClient,
  cache: ObjectCache,
  targets: TargetClusters,
  maintenancePolicy?: PolicyRef,
) {
  const statusWriter = new KymaStatusWriter(kcp, cache);
  return {
    /**
     * The Kyma's spec as the workflow needs it, or null when it no longer exists; a Kyma this
     * product reconciles gets our finalizer first (`finalizerDue`), so that its deletion waits
     * for its modules' removal.
     */
    async loadKyma({ kyma, seen, maxModules }: LoadKymaInput): Promise<KymaSnapshot | null> {
      const snapshot = await loadSnapshot(cache, targets, kyma, seen);
      if (!snapshot || !finalizerDue(snapshot, maxModules)) return snapshot;
      return { ...snapshot, finalized: await setFinalizer(kcp, cache, kyma, snapshot.uid, true) };
    },

    /** Resolves every module of the spec; a module that cannot be resolved gets its reason, the others go on. */
    async resolveModules({ kyma, snapshot, seen }: ResolveModulesInput): Promise<Resolution[]> {
      const catalog = catalogOf(cache, kyma.namespace, seen);
      const resolutions = await Promise.all(snapshot.modules.map((m) => resolveOne(m, snapshot, catalog)));
      return await withDowntime(kcp, cache, maintenancePolicy, snapshot, resolutions);
    },

    /** Drops the Kyma finalizer: the last step of a Kyma's deletion. */
    async removeKymaFinalizer({ kyma, uid }: KymaUidInput): Promise<void> {
      await setFinalizer(kcp, cache, kyma, uid, false);
    },

    /** The one writer of Kyma status (KymaStatusWriter). */
    async writeKymaStatus(input: WriteKymaStatusInput): Promise<void> {
      await statusWriter.write(input);
    },
  };
}
