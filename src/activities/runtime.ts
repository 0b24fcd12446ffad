// The runtime side of a remote Kyma, in its managed cluster: the kyma-system namespace and the
// CRDs its users need, the runtime Kyma (kyma-system/default: created from the control plane,
// then edited by its users; the control plane's changes merged into it), its status, the module
// catalog this Kyma may see, and their removal when the Kyma goes. A kubeconfig that names the
// control-plane cluster itself gets no runtime side; in a cluster shared by several Kymas the
// runtime Kyma belongs to the first one (annotated), the others keep their own spec.
import type { Kyma } from '../api/kyma';
import type { ModuleReleaseMeta } from '../api/modulereleasemeta';
import type { ModuleTemplate } from '../api/moduletemplate';
import { MANAGED_BY } from '../api/identity';
import {
  CONTROL_PLANE_KYMA_ANNOTATION,
  SYNCED_LABEL,
  RUNTIME_CATALOG_NAMESPACE,
  RUNTIME_CRDS,
  RUNTIME_KYMA,
  RUNTIME_SPEC_ANNOTATION,
  SYNC_DIGEST_ANNOTATION,
} from '../api/runtime';
import { API_VERSION, LABELS, type Condition, type KubeObject } from '../api/shared';
import type {
  CatalogSync,
  CleanRuntimeInput,
  RuntimeKymaSync,
  RuntimeSpec,
  SyncRuntimeCatalogInput,
  SyncRuntimeKymaInput,
  WriteRuntimeStatusInput,
} from '../contract/runtime';
import { boundedText, CONDITION_MESSAGE_BYTES } from '../decisions/conditions';
import { catalogKey, runtimeCatalog, type CatalogObject } from '../decisions/runtime-catalog';
import {
  kymaModuleOf,
  mergeControlPlaneChange,
  runtimeSpecOf,
  runtimeStatus,
  sameSpec,
} from '../decisions/runtime-kyma';
import { BoundedMap } from '../infra/bounded-map';
import { applyCrds, loadCrds, type Crd } from '../k8s/crds';
import type { ObjectCache } from '../k8s/object-cache';
import { isNotFound, KubeApiError } from '../k8s/request-errors';
import { type KubeClient } from '../k8s/rest-client';
import type { TargetClusters } from '../k8s/target-cluster';
import { onTarget } from './target';

/** Our copies of the catalog in a runtime (not whatever else we may have labelled there). */
const SYNCED = `${LABELS.managedBy}=${MANAGED_BY},${SYNCED_LABEL}=true`;
/** How long CRDs applied to a runtime are trusted to be there (a full sync applies them again). */
const CRDS_FRESH_MS = 10 * 60_000;
/** How many runtimes a worker remembers the catalog it wrote of. */
const RUNTIMES_KEPT = 20_000;
const CATALOG_KINDS = ['ModuleTemplate', 'ModuleReleaseMeta'] as const;

type RuntimeKyma = Kyma & KubeObject;

/** A failure handler that answers `value` when the kind is not served (its CRD is gone already) and throws anything else. */
function unlessGone<T>(value: T): (err: unknown) => T {
  return (err) => {
    if (isNotFound(err)) return value;
    throw err;
  };
}

export function runtimeActivities(kcp: KubeClient, cache: ObjectCache, targets: TargetClusters) {
  /** Per client: whether it reaches the control-plane cluster itself (the uid of kube-system tells). */
  const selfCheck = new WeakMap<KubeClient, Promise<boolean>>();
  /** Per client: our CRDs' bootstrap there, under way (`at` unset) or done at `at`. */
  const crdsApplied = new WeakMap<KubeClient, { at?: number; done: Promise<void> }>();
  /**
   * Per control-plane Kyma (`ns/name/uid`): the digest of each catalog copy this worker wrote
   * into its runtime, as of sync number `after`, through `client`.
   */
  const written = new BoundedMap<string, { after: number; client: KubeClient; copies: Map<string, string> }>(
    RUNTIMES_KEPT,
  );
  let crds: Promise<Crd[]> | undefined;

  async function clusterId(client: KubeClient): Promise<string | undefined> {
    return (await client.get('v1', 'Namespace', 'kube-system'))?.metadata.uid;
  }

  function isControlPlane(client: KubeClient): Promise<boolean> {
    if (client === kcp) return Promise.resolve(true);
    let p = selfCheck.get(client);
    if (!p) {
      p = Promise.all([clusterId(kcp), clusterId(client)]).then(([a, b]) => a !== undefined && a === b);
      p.catch(() => selfCheck.delete(client));
      selfCheck.set(client, p);
    }
    return p;
  }

  /**
   * The kyma-system namespace and our CRDs, Established. A CRD we create is labelled ours (the
   * clean-up may remove it); one the runtime had before stays the runtime's (kept at our version,
   * never removed).
   */
  async function bootstrap(client: KubeClient, fresh = false): Promise<void> {
    const last = crdsApplied.get(client);
    // One bootstrap per cluster at a time: the Kymas that share it wait for the one under way.
    if (last && (last.at === undefined || (!fresh && Date.now() - last.at < CRDS_FRESH_MS))) return await last.done;
    const entry: { at?: number; done: Promise<void> } = { done: applyRuntimeCrds(client) };
    crdsApplied.set(client, entry);
    try {
      await entry.done;
      entry.at = Date.now();
    } catch (err) {
      if (crdsApplied.get(client) === entry) crdsApplied.delete(client);
      throw err;
    }
  }

  async function applyRuntimeCrds(client: KubeClient): Promise<void> {
    await client.apply({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: RUNTIME_KYMA.namespace } });
    crds ??= loadCrds().then((all) => all.filter((c) => (RUNTIME_CRDS as readonly string[]).includes(c.metadata.name)));
    crds.catch(() => (crds = undefined));
    const wanted = await Promise.all(
      (await crds).map(async (crd) => {
        const live = await client.get<Crd>(crd.apiVersion, crd.kind, crd.metadata.name);
        const ours = !live || live.metadata.labels?.[LABELS.managedBy] === MANAGED_BY;
        return ours
          ? {
              ...crd,
              metadata: { ...crd.metadata, labels: { ...crd.metadata.labels, [LABELS.managedBy]: MANAGED_BY } },
            }
          : crd;
      }),
    );
    await applyCrds(client, wanted);
  }

  /** Whether the runtime has an object of its own (not our copy) under a copy's name. */
  async function isTheirs(client: KubeClient, o: CatalogObject): Promise<boolean> {
    const live = await client.get(o.apiVersion, o.kind, o.metadata.name, RUNTIME_CATALOG_NAMESPACE);
    return live !== undefined && live.metadata.labels?.[SYNCED_LABEL] !== 'true';
  }

  /**
   * Runs `run`; when the runtime answers 404 (our namespace or CRDs went: a clean-up by another
   * worker, the runtime's users), forgets the bootstrap and runs it once more (`again`).
   */
  async function rebootstrappedOnce<T>(client: KubeClient, run: (again: boolean) => Promise<T>): Promise<T> {
    try {
      return await run(false);
    } catch (err) {
      if (!isNotFound(err)) throw err;
      crdsApplied.delete(client);
      return await run(true);
    }
  }

  const getRuntimeKyma = (client: KubeClient) =>
    client.get<RuntimeKyma>(API_VERSION, 'Kyma', RUNTIME_KYMA.name, RUNTIME_KYMA.namespace);
  const ownerOf = (k: RuntimeKyma) => k.metadata.annotations?.[CONTROL_PLANE_KYMA_ANNOTATION];

  /** The runtime's spec on the control-plane Kyma (RUNTIME_SPEC_ANNOTATION), written when it differs. */
  async function recordRuntimeSpec({ kyma, uid }: SyncRuntimeKymaInput, spec: RuntimeSpec | undefined): Promise<void> {
    const cp = await cache.get<Kyma & KubeObject>(API_VERSION, 'Kyma', kyma.name, kyma.namespace);
    if (!cp || cp.metadata.uid !== uid) return;
    const want = spec ? JSON.stringify({ channel: spec.channel, modules: spec.modules.map(kymaModuleOf) }) : undefined;
    if (cp.metadata.annotations?.[RUNTIME_SPEC_ANNOTATION] === want) return;
    await kcp.mergePatch(API_VERSION, 'Kyma', kyma.name, kyma.namespace, {
      metadata: { annotations: { [RUNTIME_SPEC_ANNOTATION]: want ?? null } },
    });
  }

  return {
    /**
     * Makes sure the runtime Kyma exists and carries what changed in the control-plane Kyma
     * since the last sync; returns its spec (the modules its users want).
     */
    async syncRuntimeKyma(input: SyncRuntimeKymaInput): Promise<RuntimeKymaSync> {
      const { kyma, controlPlane, before, known } = input;
      const me = `${kyma.namespace}/${kyma.name}`;
      const result = await onTarget(targets, { ...kyma, remote: true }, async (client): Promise<RuntimeKymaSync> => {
        if (await isControlPlane(client)) return { kind: 'controlPlane' };
        return await rebootstrappedOnce(client, async () => {
          await bootstrap(client);
          return await ensureRuntimeKyma(client);
        });
      });
      await recordRuntimeSpec(input, result.kind === 'synced' ? result.spec : undefined);
      return result;

      async function ensureRuntimeKyma(client: KubeClient): Promise<RuntimeKymaSync> {
        for (let attempt = 0; ; attempt++) {
          const live = await getRuntimeKyma(client);
          if (!live) {
            // New, or deleted by its users: back with what it asked for last (nothing is lost).
            const spec =
              known && before
                ? mergeControlPlaneChange(
                    { channel: known.channel, modules: known.modules.map(kymaModuleOf) },
                    before,
                    controlPlane,
                  )
                : { channel: controlPlane.channel, modules: controlPlane.modules.map(kymaModuleOf) };
            try {
              await client.create<RuntimeKyma>({
                apiVersion: API_VERSION,
                kind: 'Kyma',
                metadata: {
                  name: RUNTIME_KYMA.name,
                  namespace: RUNTIME_KYMA.namespace,
                  labels: { [LABELS.managedBy]: MANAGED_BY },
                  annotations: { [CONTROL_PLANE_KYMA_ANNOTATION]: me },
                },
                spec,
              });
            } catch (err) {
              if (err instanceof KubeApiError && err.status === 409 && attempt < 3) continue;
              throw err;
            }
            return { kind: 'synced', spec: runtimeSpecOf(spec), created: true };
          }
          const owner = ownerOf(live);
          if (owner !== undefined && owner !== me) return { kind: 'taken', owner };
          const liveSpec = live.spec ?? { channel: controlPlane.channel };
          const spec = before ? mergeControlPlaneChange(liveSpec, before, controlPlane) : liveSpec;
          if (owner === me && sameSpec(spec, liveSpec))
            return { kind: 'synced', spec: runtimeSpecOf(liveSpec), created: false };
          try {
            // Guarded by the version read: a user's edit meanwhile is read again, never overwritten.
            await client.mergePatch(API_VERSION, 'Kyma', RUNTIME_KYMA.name, RUNTIME_KYMA.namespace, {
              metadata: {
                resourceVersion: live.metadata.resourceVersion,
                annotations: { [CONTROL_PLANE_KYMA_ANNOTATION]: me },
              },
              spec: { channel: spec.channel, modules: spec.modules ?? [] },
            });
          } catch (err) {
            if (err instanceof KubeApiError && err.status === 409 && attempt < 3) continue;
            throw err;
          }
          return { kind: 'synced', spec: runtimeSpecOf(spec), created: false };
        }
      }
    },

    /** The control plane's view of the Kyma, written to the runtime Kyma's status. */
    async writeRuntimeStatus({ kyma, status }: WriteRuntimeStatusInput): Promise<void> {
      const now = new Date().toISOString();
      const conditions: Condition[] = (status.conditions ?? []).map((c) => ({
        ...c,
        message: boundedText(c.message, CONDITION_MESSAGE_BYTES),
        lastTransitionTime: now,
      }));
      const shown = runtimeStatus(status, RUNTIME_CATALOG_NAMESPACE);
      await onTarget(targets, { ...kyma, remote: true }, async (client) => {
        try {
          await client.mergePatch(
            API_VERSION,
            'Kyma',
            RUNTIME_KYMA.name,
            RUNTIME_KYMA.namespace,
            {
              status: {
                ...shown,
                conditions,
                lastOperation: shown.lastOperation && { ...shown.lastOperation, lastUpdateTime: now },
              },
            },
            'status',
          );
        } catch (err) {
          // Gone (deleted by its users): the next sync brings it back, with this status after it.
          if (!isNotFound(err)) throw err;
        }
      });
    },

    /**
     * The catalog this Kyma may see, in its runtime: copies written only where their digest
     * differs from what the runtime holds, copies it may no longer see removed. `full` reads
     * what the runtime holds (and applies the CRDs again); otherwise this worker's memo of what
     * it wrote stands in for it.
     */
    async syncRuntimeCatalog({ kyma, uid, visibility, full, after }: SyncRuntimeCatalogInput): Promise<CatalogSync> {
      const [templates, metas] = await Promise.all([
        cache.list<ModuleTemplate & KubeObject>(API_VERSION, 'ModuleTemplate', kyma.namespace),
        cache.list<ModuleReleaseMeta & KubeObject>(API_VERSION, 'ModuleReleaseMeta', kyma.namespace),
      ]);
      const desired = runtimeCatalog(templates, metas, visibility, RUNTIME_CATALOG_NAMESPACE);
      const memoKey = `${kyma.namespace}/${kyma.name}/${uid}`;
      return await onTarget(targets, { ...kyma, remote: true }, async (client) => {
        if (await isControlPlane(client)) return { applied: 0, deleted: 0, foreign: 0 };
        const sync = async (read: boolean): Promise<CatalogSync> => {
          // The memo stands for the runtime only if this worker made the last sync, into this cluster.
          const memo = written.get(memoKey);
          let have = !read && memo?.after === after && memo.client === client ? memo.copies : undefined;
          const fromMemo = have !== undefined;
          /** Objects of the runtime's own under a name a copy would take. */
          const theirs = new Set<string>();
          if (!have) {
            await bootstrap(client, read && full);
            have = new Map();
            for (const kind of CATALOG_KINDS) {
              const { items } = await client.list<CatalogObject>(API_VERSION, kind, {
                namespace: RUNTIME_CATALOG_NAMESPACE,
              });
              for (const o of items) {
                if (o.metadata.labels?.[SYNCED_LABEL] === 'true')
                  have.set(catalogKey(o), o.metadata.annotations?.[SYNC_DIGEST_ANNOTATION] ?? '');
                else theirs.add(catalogKey(o));
              }
            }
          }
          written.delete(memoKey);
          const copies = new Map<string, string>();
          let applied = 0;
          let foreign = 0;
          for (const o of desired) {
            const key = catalogKey(o);
            const d = o.metadata.annotations?.[SYNC_DIGEST_ANNOTATION] ?? '';
            if (have.get(key) === d) {
              copies.set(key, d);
              continue;
            }
            // The runtime's own object under that name is never taken over (one the memo does not know is looked at).
            if (theirs.has(key) || (fromMemo && !have.has(key) && (await isTheirs(client, o)))) {
              foreign++;
              continue;
            }
            await client.apply(o);
            applied++;
            copies.set(key, d);
          }
          let deleted = 0;
          for (const key of have.keys()) {
            if (copies.has(key)) continue;
            const [kind, name] = key.split('/') as [string, string];
            if (await client.delete(API_VERSION, kind, name, RUNTIME_CATALOG_NAMESPACE)) deleted++;
          }
          written.set(memoKey, { after: after + 1, client, copies });
          return { applied, deleted, foreign };
        };
        // Made again, the runtime is read in full.
        return await rebootstrappedOnce(client, (again) => sync(again || full));
      });
    },

    /**
     * The Kyma is going: its runtime Kyma, the synced catalog, then each of our CRDs that no
     * object of the runtime's own still needs. Nothing of the runtime's own is touched; a
     * runtime Kyma of another control-plane Kyma is left to that one.
     */
    async cleanRuntime({ kyma, uid }: CleanRuntimeInput): Promise<void> {
      written.delete(`${kyma.namespace}/${kyma.name}/${uid}`);
      await onTarget(targets, { ...kyma, remote: true }, async (client) => {
        if (await isControlPlane(client)) return;
        const live = await getRuntimeKyma(client).catch(unlessGone(undefined));
        if (live && ownerOf(live) !== `${kyma.namespace}/${kyma.name}`) return;
        if (live) await client.delete(API_VERSION, 'Kyma', RUNTIME_KYMA.name, RUNTIME_KYMA.namespace);
        for (const kind of CATALOG_KINDS) {
          const { items } = await client
            .list<CatalogObject>(API_VERSION, kind, { namespace: RUNTIME_CATALOG_NAMESPACE, labelSelector: SYNCED })
            .catch(unlessGone({ items: [] as CatalogObject[] }));
          for (const o of items) await client.delete(API_VERSION, kind, o.metadata.name, RUNTIME_CATALOG_NAMESPACE);
        }
        for (const name of RUNTIME_CRDS) {
          const crd = await client.get<Crd>('apiextensions.k8s.io/v1', 'CustomResourceDefinition', name);
          if (crd?.metadata.labels?.[LABELS.managedBy] !== MANAGED_BY) continue;
          const kind = crd.spec.names.kind;
          // Only an answer counts: a list that failed must never look like "none left" (deleting a CRD deletes its objects).
          const left = await client.listPage(API_VERSION, kind, { limit: 1 }).catch(unlessGone({ items: [] }));
          if (left.items.length === 0) await client.delete('apiextensions.k8s.io/v1', 'CustomResourceDefinition', name);
        }
        crdsApplied.delete(client);
      });
    },
  };
}
