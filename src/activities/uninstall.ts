// Removing what a module installed: pruning what a new version no longer has, finding the
// custom resources that block a module's removal, deleting its default CR, deleting its
// objects in a safe order (src/manifests: ordinary objects first; workloads, services, service
// accounts, RBAC, namespaces and CRDs last), and releasing them (managed: false). A namespaced object is
// touched only while it is still annotated as this Kyma's module's; an object of cluster scope
// (shared by every installation of the module in the cluster) only while no other
// installation of the module is left there. An object the install found already there is never
// deleted: it gets its own labels and annotations back (./install/ownership.ts); system
// namespaces are not touched at all. A removal is done once the CRDs it deleted are gone (the API
// server deletes their custom resources first), so that the module is never reported removed
// while its kind is still served; it waits a little for them, then says which it waits for.
import { MANAGED_BY } from '../api/identity';
import { OWNED_BY_ANNOTATION, ownedBy } from '../api/names';
import { idOf, objectKey } from '../api/object-id';
import { apiVersionOf, LABELS, type KubeObject } from '../api/shared';
import type { DefaultCrRef, RenderedRef } from '../contract/artifacts';
import type { KymaRef } from '../contract/kyma';
import type { Blockers, DeletedObjects } from '../contract/module';
import { isNotFound } from '../k8s/request-errors';
import { type KubeClient } from '../k8s/rest-client';
import type { TargetClusters } from '../k8s/target-cluster';
import { deletionTiers, pruned } from '../manifests/order';
import { describe, forgetShared } from './install/apply';
import { foundMetadata, isSystemNamespace, restorePatch } from './install/ownership';
import { loadRendered, type Rendered } from './install/render';
import type { BlobCache } from './blob-cache';
import { onTarget } from './target';

/** Who a module installation is, and whether other installations of the module share its cluster. */
interface Installation {
  module: string;
  owner: string;
  shared: boolean;
}

/** Whether a live object is this installation's to delete or release. */
function ours(live: KubeObject, i: Installation): boolean {
  const { labels, annotations } = live.metadata;
  if (labels?.[LABELS.managedBy] !== MANAGED_BY) return false;
  if (live.metadata.namespace) return annotations?.[OWNED_BY_ANNOTATION] === i.owner;
  const owner = annotations?.[OWNED_BY_ANNOTATION];
  return !i.shared && labels[LABELS.moduleName] === i.module && (owner === undefined || owner === i.owner);
}

/**
 * How many other installations of the module (other Kymas' modules) live in the cluster, told
 * by the module's manager workload (or its first namespaced object) labelled with the module
 * and owned by another Kyma: released ones (managed: false, no managed-by label) count too,
 * since they still run on the shared objects.
 */
async function othersOf(
  client: KubeClient,
  objects: KubeObject[],
  rendered: RenderedRef,
  module: string,
  owner: string,
): Promise<number> {
  const m = rendered.manager;
  const marker = m ? { apiVersion: apiVersionOf(m), kind: m.kind } : objects.find((o) => o.metadata.namespace);
  if (!marker) return 0;
  try {
    const { items } = await client.list(marker.apiVersion, marker.kind, {
      labelSelector: `${LABELS.moduleName}=${module}`,
    });
    return new Set(items.map((o) => o.metadata.annotations?.[OWNED_BY_ANNOTATION]).filter((o) => o && o !== owner))
      .size;
  } catch (err) {
    if (isNotFound(err)) return 0; // the kind is not served (any more): nobody has it
    throw err;
  }
}

async function installationOf(
  client: KubeClient,
  objects: KubeObject[],
  rendered: RenderedRef,
  ref: KymaRef,
  module: string,
): Promise<Installation> {
  const owner = ownedBy(ref.namespace, ref.name, module);
  return { module, owner, shared: (await othersOf(client, objects, rendered, module, owner)) > 0 };
}

/** The CRs of a kind in all namespaces (none when the kind is not served). */
async function crsOf(client: KubeClient, cr: DefaultCrRef): Promise<KubeObject[]> {
  try {
    return (await client.list(cr.apiVersion, cr.kind)).items;
  } catch (err) {
    if (isNotFound(err)) return []; // the CRD is gone: nothing can block
    throw err;
  }
}

/**
 * What a deletion did: how many objects it deleted, which it left in place (found there: given
 * their own labels back), and the CRDs it deleted or found being deleted.
 */
interface Deletion {
  deleted: number;
  left: string[];
  crds: KubeObject[];
}

/** How long a deletion waits for the CRDs it deleted to be gone before it says it waits for them. */
const CRDS_GONE_WAIT_MS = 10_000;
const CRDS_GONE_POLL_MS = 500;

const isCrd = (o: KubeObject) => o.kind === 'CustomResourceDefinition';

/** Those of the CRDs still there after up to `waitMs`, as `kind name`. */
async function stillThere(client: KubeClient, crds: KubeObject[], waitMs = CRDS_GONE_WAIT_MS): Promise<string[]> {
  const until = Date.now() + waitMs;
  let left = crds;
  for (;;) {
    const live = await Promise.all(
      left.map((o) => client.get(o.apiVersion, o.kind, o.metadata.name).catch(notFoundAsUndefined)),
    );
    left = left.filter((_, i) => live[i] !== undefined);
    if (left.length === 0 || Date.now() >= until) return left.map(describe);
    await new Promise((r) => setTimeout(r, CRDS_GONE_POLL_MS));
  }
}

function notFoundAsUndefined(err: unknown): undefined {
  if (isNotFound(err)) return undefined; // gone, or its kind no longer served
  throw err;
}

/** Deletes objects tier by tier in the safe order; one found there is given back its own labels instead. */
async function deleteInOrder(client: KubeClient, objects: KubeObject[], i: Installation): Promise<Deletion> {
  const done: Deletion = { deleted: 0, left: [], crds: [] };
  for (const tier of deletionTiers(objects)) {
    await Promise.all(
      tier.map(async (o) => {
        const live = await client
          .get(o.apiVersion, o.kind, o.metadata.name, o.metadata.namespace)
          .catch(notFoundAsUndefined);
        if (!live || isSystemNamespace(o, live) || !ours(live, i)) return;
        if (live.metadata.deletionTimestamp) {
          // Deleted before (an earlier attempt): still going.
          if (isCrd(o)) done.crds.push(o);
          return;
        }
        const found = foundMetadata(live);
        if (found) {
          await client.mergePatch(o.apiVersion, o.kind, o.metadata.name, o.metadata.namespace, {
            metadata: restorePatch(live, found, o),
          });
          done.left.push(describe(o));
          return;
        }
        if (!(await client.delete(o.apiVersion, o.kind, o.metadata.name, o.metadata.namespace))) return;
        done.deleted++;
        if (isCrd(o)) done.crds.push(o);
      }),
    );
  }
  // Cluster-scoped objects may be among them: the next install applies them again.
  if (done.deleted || done.left.length) forgetShared(client);
  return done;
}

/** The objects of several renderings, each once (the first's copy where they overlap). */
function union(...lists: KubeObject[][]): KubeObject[] {
  const seen = new Set<string>();
  return lists.flat().filter((o) => {
    const key = objectKey(idOf(o), true);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/** Deletes what the previous version had and the new one has not. */
export async function pruneObjects(
  client: KubeClient,
  cache: BlobCache,
  ref: KymaRef,
  module: string,
  previous: RenderedRef,
  next: Rendered,
): Promise<number> {
  const gone = pruned(await loadRendered(cache, previous), next.objects, idOf);
  if (gone.length === 0) return 0;
  return (await deleteInOrder(client, gone, await installationOf(client, next.objects, next.ref, ref, module))).deleted;
}

export interface ModuleObjectsInput {
  kyma: KymaRef;
  module: string;
  rendered: RenderedRef;
}

export interface DeleteObjectsInput extends ModuleObjectsInput {
  /** The module's CR kind: while CRs of it exist, the objects shared with other installations stay. */
  cr?: DefaultCrRef;
  /** What a failed install of another version rendered: its objects may be there in part, and go too. */
  also?: RenderedRef;
}

export interface ReleaseInput extends ModuleObjectsInput {
  /** The default CR the module manages, released with its objects. */
  cr?: DefaultCrRef;
}

export interface FindBlockersInput extends ModuleObjectsInput {
  cr: DefaultCrRef;
  /** The default CR is the module's own (CreateAndDelete): it does not block. */
  exceptDefault: boolean;
}

export interface DeleteDefaultCrInput {
  kyma: KymaRef;
  module: string;
  cr: DefaultCrRef;
  /** Other installations share the cluster: a default CR of cluster scope is theirs too. */
  keepClusterScoped: boolean;
}

/**
 * Deletes the module's objects. When other installations shared the cluster, only the
 * namespaced ones go; then, should no other be left (they were removed at the same time),
 * the shared ones go too, unless CRs of the module's kind remain: then `done` is false and
 * the removal waits for them. It is not done either while CRDs it deleted are still there.
 */
async function deleteObjects(
  client: KubeClient,
  cache: BlobCache,
  { kyma, module, rendered, cr, also }: DeleteObjectsInput,
): Promise<DeletedObjects> {
  const objects = union(await loadRendered(cache, rendered), also ? await loadRendered(cache, also) : []);
  const result = async (d: Deletion, done: boolean): Promise<DeletedObjects> => {
    const terminating = await stillThere(client, d.crds);
    return {
      deleted: d.deleted,
      done: done && terminating.length === 0,
      ...(d.left.length ? { left: d.left } : {}),
      ...(terminating.length ? { terminating } : {}),
    };
  };
  const before = await installationOf(client, objects, rendered, kyma, module);
  const first = await deleteInOrder(
    client,
    before.shared ? objects.filter((o) => o.metadata.namespace) : objects,
    before,
  );
  if (!before.shared) return await result(first, true);
  const now = await installationOf(client, objects, rendered, kyma, module);
  if (now.shared) return await result(first, true);
  if (cr && (await crsOf(client, cr)).length > 0) return await result(first, false);
  const second = await deleteInOrder(
    client,
    objects.filter((o) => !o.metadata.namespace),
    now,
  );
  return await result(
    {
      deleted: first.deleted + second.deleted,
      left: [...first.left, ...second.left],
      crds: [...first.crds, ...second.crds],
    },
    true,
  );
}

/** Unmanage: drops the managed-by label from the module's objects (and default CR); they keep running. */
async function releaseObjects(
  client: KubeClient,
  cache: BlobCache,
  { kyma, module, rendered, cr }: ReleaseInput,
): Promise<number> {
  const installed = await loadRendered(cache, rendered);
  const i = await installationOf(client, installed, rendered, kyma, module);
  const objects: KubeObject[] = [...installed];
  if (cr)
    objects.push({
      apiVersion: cr.apiVersion,
      kind: cr.kind,
      metadata: { name: cr.name, ...(cr.namespace ? { namespace: cr.namespace } : {}) },
    });
  let released = 0;
  await Promise.all(
    objects.map(async (o) => {
      // A kind no longer served has nothing left to release; anything else is a failure.
      const live = await client
        .get(o.apiVersion, o.kind, o.metadata.name, o.metadata.namespace)
        .catch(notFoundAsUndefined);
      if (!live || !ours(live, i)) return;
      await client.mergePatch(o.apiVersion, o.kind, o.metadata.name, o.metadata.namespace, {
        metadata: { labels: { [LABELS.managedBy]: null } },
      });
      released++;
    }),
  );
  // Managed again, the shared ones must be labelled again too.
  if (released) forgetShared(client);
  return released;
}

/** Deletes the default CR; returns its remaining finalizers, or null once it is gone. */
async function deleteDefault(
  client: KubeClient,
  { kyma, module, cr, keepClusterScoped }: DeleteDefaultCrInput,
): Promise<string[] | null> {
  try {
    const before = await client.get(cr.apiVersion, cr.kind, cr.name, cr.namespace);
    // Another Kyma's module created it, or, of cluster scope, other installations use it too: not ours to delete.
    const owner = before?.metadata.annotations?.[OWNED_BY_ANNOTATION];
    if (
      !before ||
      (owner && owner !== ownedBy(kyma.namespace, kyma.name, module)) ||
      (keepClusterScoped && !before.metadata.namespace)
    )
      return null;
    await client.delete(cr.apiVersion, cr.kind, cr.name, cr.namespace);
    const live = await client.get(cr.apiVersion, cr.kind, cr.name, cr.namespace);
    return live ? (live.metadata.finalizers ?? []) : null;
  } catch (err) {
    if (isNotFound(err)) return null;
    throw err;
  }
}

export function uninstallActivities(targets: TargetClusters, cache: BlobCache) {
  return {
    /** Deletes the module's objects, the shared ones once no other installation is left (deleteObjects). */
    async deleteModuleObjects(input: DeleteObjectsInput): Promise<DeletedObjects> {
      return await onTarget(targets, input.kyma, (client) => deleteObjects(client, cache, input));
    },

    /** Unmanage: drops the managed-by label from the module's objects (and default CR); they keep running. */
    async releaseModuleObjects(input: ReleaseInput): Promise<number> {
      return await onTarget(targets, input.kyma, (client) => releaseObjects(client, cache, input));
    },

    /** Custom resources of the module's kind, in all namespaces, that block its removal. */
    async findBlockingResources({ kyma, module, rendered, cr, exceptDefault }: FindBlockersInput): Promise<Blockers> {
      return await onTarget(targets, kyma, async (client) => {
        const objects = await loadRendered(cache, rendered);
        const sharedWith = await othersOf(
          client,
          objects,
          rendered,
          module,
          ownedBy(kyma.namespace, kyma.name, module),
        );
        const items = await crsOf(client, cr);
        // A cluster-scoped default CR has no namespace, whatever its reference says.
        const isDefault = (o: KubeObject) =>
          o.metadata.name === cr.name && (!o.metadata.namespace || o.metadata.namespace === cr.namespace);
        const blocking = items.filter((o) => !(exceptDefault && isDefault(o)));
        return { count: blocking.length, first: blocking.slice(0, 5).map(describe), sharedWith };
      });
    },

    /** Deletes the default CR; returns its remaining finalizers, or null once it is gone. */
    async deleteDefaultCr(input: DeleteDefaultCrInput): Promise<string[] | null> {
      return await onTarget(targets, input.kyma, (client) => deleteDefault(client, input));
    },
  };
}
