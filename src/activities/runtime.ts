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
import type { Crd } from '../k8s/crds';
import type { ObjectCache } from '../k8s/object-cache';
import { isNotFound, KubeApiError } from '../k8s/request-errors';
import { type KubeClient } from '../k8s/rest-client';
import type { TargetClusters } from '../k8s/target-cluster';
import { RuntimeBootstrap } from './runtime-bootstrap';
import { onTarget } from './target';

/** Our copies of the catalog in a runtime (not whatever else we may have labelled there). */
const SYNCED = `${LABELS.managedBy}=${MANAGED_BY},${SYNCED_LABEL}=true`;
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

const getRuntimeKyma = (client: KubeClient) =>
  client.get<RuntimeKyma>(API_VERSION, 'Kyma', RUNTIME_KYMA.name, RUNTIME_KYMA.namespace);
const ownerOf = (k: RuntimeKyma) => k.metadata.annotations?.[CONTROL_PLANE_KYMA_ANNOTATION];

/**
 * Makes sure the runtime Kyma exists and carries what changed in the control-plane Kyma since
 * the last sync (`me`: the control-plane Kyma, `ns/name`); returns its spec.
 */
async function ensureRuntimeKyma(
  client: KubeClient,
  { controlPlane, before, known }: SyncRuntimeKymaInput,
  me: string,
): Promise<RuntimeKymaSync> {
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

/** The control plane's view of the Kyma (`status`), patched onto the runtime Kyma's status. */
async function patchRuntimeStatus(client: KubeClient, status: WriteRuntimeStatusInput['status']): Promise<void> {
  const now = new Date().toISOString();
  const conditions: Condition[] = (status.conditions ?? []).map((c) => ({
    ...c,
    message: boundedText(c.message, CONDITION_MESSAGE_BYTES),
    lastTransitionTime: now,
  }));
  const shown = runtimeStatus(status, RUNTIME_CATALOG_NAMESPACE);
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
}

/** Whether the runtime has an object of its own (not our copy) under a copy's name. */
async function isTheirs(client: KubeClient, o: CatalogObject): Promise<boolean> {
  const live = await client.get(o.apiVersion, o.kind, o.metadata.name, RUNTIME_CATALOG_NAMESPACE);
  return live !== undefined && live.metadata.labels?.[SYNCED_LABEL] !== 'true';
}

/** What the runtime holds of the catalog: our copies (key → digest), and the keys of objects of its own under a name a copy would take. */
async function readRuntimeCatalog(client: KubeClient): Promise<{ have: Map<string, string>; theirs: Set<string> }> {
  const have = new Map<string, string>();
  const theirs = new Set<string>();
  for (const kind of CATALOG_KINDS) {
    const { items } = await client.list<CatalogObject>(API_VERSION, kind, { namespace: RUNTIME_CATALOG_NAMESPACE });
    for (const o of items) {
      if (o.metadata.labels?.[SYNCED_LABEL] === 'true')
        have.set(catalogKey(o), o.metadata.annotations?.[SYNC_DIGEST_ANNOTATION] ?? '');
      else theirs.add(catalogKey(o));
    }
  }
  return { have, theirs };
}

/** What the runtime holds of the catalog, as read or as the memo tells (`fromMemo`: objects of its own are not known then). */
interface RuntimeCatalog {
  have: Map<string, string>;
  theirs: Set<string>;
  fromMemo: boolean;
}

/** Writes each desired copy whose digest differs from what the runtime holds; `copies`: the runtime's copies after it. */
async function writeCopies(
  client: KubeClient,
  desired: CatalogObject[],
  { have, theirs, fromMemo }: RuntimeCatalog,
): Promise<{ copies: Map<string, string>; applied: number; foreign: number }> {
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
  return { copies, applied, foreign };
}

/** Deletes the copies the runtime holds that are no longer wanted; how many went. */
async function deleteUnwanted(
  client: KubeClient,
  have: Map<string, string>,
  copies: Map<string, string>,
): Promise<number> {
  let deleted = 0;
  for (const key of have.keys()) {
    if (copies.has(key)) continue;
    const [kind, name] = key.split('/') as [string, string];
    if (await client.delete(API_VERSION, kind, name, RUNTIME_CATALOG_NAMESPACE)) deleted++;
  }
  return deleted;
}

/**
 * The runtime side of a Kyma that is going: its runtime Kyma, the synced catalog, then each of
 * our CRDs that no object of the runtime's own still needs. Nothing of the runtime's own is
 * touched; a runtime Kyma of another control-plane Kyma (not `me`) is left to that one.
 */
async function removeRuntimeSide(client: KubeClient, me: string): Promise<'removed' | 'not ours'> {
  const live = await getRuntimeKyma(client).catch(unlessGone(undefined));
  if (live && ownerOf(live) !== me) return 'not ours';
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
  return 'removed';
}

/** Per control-plane Kyma (`ns/name/uid`): the digest of each catalog copy this worker wrote into its runtime, as of sync number `after`, through `client`. */
type CatalogMemo = BoundedMap<string, { after: number; client: KubeClient; copies: Map<string, string> }>;

/**
 * One sync of the catalog into the runtime: `read` reads what the runtime holds (with `full`,
 * the CRDs are applied again); otherwise this worker's memo of what it wrote stands in for it,
 * if this worker made the last sync (`after`), into this cluster.
 */
async function syncCatalog(
  setup: RuntimeBootstrap,
  client: KubeClient,
  written: CatalogMemo,
  {
    memoKey,
    desired,
    after,
    read,
    full,
  }: { memoKey: string; desired: CatalogObject[]; after: number; read: boolean; full: boolean },
): Promise<CatalogSync> {
  const memo = written.get(memoKey);
  const remembered = !read && memo?.after === after && memo.client === client ? memo.copies : undefined;
  let runtime: RuntimeCatalog;
  if (remembered) runtime = { have: remembered, theirs: new Set(), fromMemo: true };
  else {
    await setup.bootstrap(client, read && full);
    runtime = { ...(await readRuntimeCatalog(client)), fromMemo: false };
  }
  written.delete(memoKey);
  const { copies, applied, foreign } = await writeCopies(client, desired, runtime);
  const deleted = await deleteUnwanted(client, runtime.have, copies);
  written.set(memoKey, { after: after + 1, client, copies });
  return { applied, deleted, foreign };
}

/** Writes the control plane's view of the Kyma to its runtime Kyma's status (with the Kyma's other writes: ./kyma-writes.ts). */
export function runtimeStatusWriter(targets: TargetClusters) {
  return async ({ kyma, status }: WriteRuntimeStatusInput): Promise<void> =>
    await onTarget(targets, { ...kyma, remote: true }, (client) => patchRuntimeStatus(client, status));
}

export function runtimeActivities(kcp: KubeClient, cache: ObjectCache, targets: TargetClusters) {
  const setup = new RuntimeBootstrap(kcp);
  const written: CatalogMemo = new BoundedMap(RUNTIMES_KEPT);

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
      const { kyma } = input;
      const me = `${kyma.namespace}/${kyma.name}`;
      const result = await onTarget(targets, { ...kyma, remote: true }, async (client): Promise<RuntimeKymaSync> => {
        if (await setup.isControlPlane(client)) return { kind: 'controlPlane' };
        return await setup.rebootstrappedOnce(client, async () => {
          await setup.bootstrap(client);
          return await ensureRuntimeKyma(client, input, me);
        });
      });
      await recordRuntimeSpec(input, result.kind === 'synced' ? result.spec : undefined);
      return result;
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
        if (await setup.isControlPlane(client)) return { applied: 0, deleted: 0, foreign: 0 };
        // Made again, the runtime is read in full.
        return await setup.rebootstrappedOnce(client, (again) =>
          syncCatalog(setup, client, written, { memoKey, desired, after, read: again || full, full }),
        );
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
        if (await setup.isControlPlane(client)) return;
        if ((await removeRuntimeSide(client, `${kyma.namespace}/${kyma.name}`)) === 'removed') setup.forget(client);
      });
    },
  };
}
