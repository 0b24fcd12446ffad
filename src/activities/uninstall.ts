// Removing what a module installed: pruning what a new version no longer has, finding the
// custom resources that block a module's removal, deleting its default CR, and deleting its
// objects in a safe order (ordinary objects first; workloads, services, service accounts,
// RBAC, namespaces and CRDs last). Only objects still annotated as this module's are deleted.
import { OWNED_BY_ANNOTATION, ownedBy } from '../api/names';
import { LABELS } from '../api/shared';
import { isNotFound, type KubeClient, type KubeObject } from '../k8s/rest-client';
import type { TargetClusters } from '../k8s/target-cluster';
import type { DefaultCrRef, KymaRef, RenderedRef } from '../workflows/types';
import type { BlobCache } from './blob-cache';
import { loadRendered } from './render';
import { targetClient } from './target';

/** Kinds deleted last, in this order; everything else goes first. */
const LAST = [
  ['Deployment', 'StatefulSet', 'DaemonSet', 'ReplicaSet', 'Job', 'CronJob'],
  ['Service'],
  ['ServiceAccount'],
  ['Role', 'RoleBinding', 'ClusterRole', 'ClusterRoleBinding'],
  ['Namespace'],
  ['CustomResourceDefinition'],
];

function rank(o: KubeObject): number {
  const i = LAST.findIndex((kinds) => kinds.includes(o.kind));
  return i < 0 ? 0 : i + 1;
}

function key(o: KubeObject): string {
  const group = o.apiVersion.includes('/') ? o.apiVersion.split('/')[0] : '';
  return `${group}/${o.kind}/${o.metadata.namespace ?? ''}/${o.metadata.name}`;
}

/** Deletes objects tier by tier in the safe order; returns how many it deleted. */
async function deleteInOrder(client: KubeClient, objects: KubeObject[], owner: string): Promise<number> {
  let deleted = 0;
  for (let tier = 0; tier <= LAST.length; tier++) {
    await Promise.all(objects.filter((o) => rank(o) === tier).map(async (o) => {
      const live = await client.get(o.apiVersion, o.kind, o.metadata.name, o.metadata.namespace).catch((err: unknown) => {
        if (isNotFound(err)) return undefined; // kind no longer served
        throw err;
      });
      const annotations = (live?.metadata as { annotations?: Record<string, string> } | undefined)?.annotations;
      // Someone else has applied it since (another Kyma on a shared cluster): not ours to delete.
      if (!live || annotations?.[OWNED_BY_ANNOTATION] !== owner) return;
      if (await client.delete(o.apiVersion, o.kind, o.metadata.name, o.metadata.namespace)) deleted++;
    }));
  }
  return deleted;
}

export interface Blockers {
  count: number;
  /** The first few, as kind namespace/name. */
  first: string[];
}

export function deleteActivities(targets: TargetClusters, cache: BlobCache) {
  return {
    /** Deletes what the previous version had and the new one has not. */
    async pruneObjects(ref: KymaRef, module: string, previous: RenderedRef, next: RenderedRef): Promise<number> {
      const client = await targetClient(targets, ref);
      const keep = new Set((await loadRendered(cache, next)).map(key));
      const gone = (await loadRendered(cache, previous)).filter((o) => !keep.has(key(o)));
      return await deleteInOrder(client, gone, ownedBy(ref.namespace, ref.name, module));
    },

    async deleteModuleObjects(ref: KymaRef, module: string, rendered: RenderedRef): Promise<number> {
      const client = await targetClient(targets, ref);
      return await deleteInOrder(client, await loadRendered(cache, rendered), ownedBy(ref.namespace, ref.name, module));
    },

    /** Unmanage: drops the managed-by label from the module's objects (and default CR); they keep running. */
    async releaseModuleObjects(ref: KymaRef, module: string, rendered: RenderedRef, cr: DefaultCrRef | null): Promise<number> {
      const client = await targetClient(targets, ref);
      const owner = ownedBy(ref.namespace, ref.name, module);
      const objects: { apiVersion: string; kind: string; metadata: { name: string; namespace?: string } }[] = [...(await loadRendered(cache, rendered))];
      if (cr) objects.push({ apiVersion: cr.apiVersion, kind: cr.kind, metadata: { name: cr.name, namespace: cr.namespace } });
      let released = 0;
      await Promise.all(objects.map(async (o) => {
        const live = await client.get(o.apiVersion, o.kind, o.metadata.name, o.metadata.namespace).catch(() => undefined);
        const meta = live?.metadata as { annotations?: Record<string, string>; labels?: Record<string, string> } | undefined;
        if (!meta || meta.annotations?.[OWNED_BY_ANNOTATION] !== owner || !meta.labels?.[LABELS.managedBy]) return;
        await client.mergePatch(o.apiVersion, o.kind, o.metadata.name, o.metadata.namespace, { metadata: { labels: { [LABELS.managedBy]: null } } });
        released++;
      }));
      return released;
    },

    /** Custom resources of the module's kind, in all namespaces, that block its removal. */
    async findBlockingResources(ref: KymaRef, cr: DefaultCrRef, exceptDefault: boolean): Promise<Blockers> {
      const client = await targetClient(targets, ref);
      let items: KubeObject[];
      try {
        items = (await client.list(cr.apiVersion, cr.kind)).items;
      } catch (err) {
        if (isNotFound(err)) return { count: 0, first: [] }; // the CRD is gone: nothing can block
        throw err;
      }
      // A cluster-scoped default CR has no namespace, whatever its reference says.
      const isDefault = (o: KubeObject) => o.metadata.name === cr.name && (!o.metadata.namespace || o.metadata.namespace === cr.namespace);
      const blocking = items.filter((o) => !(exceptDefault && isDefault(o)));
      const first = blocking.slice(0, 5).map((o) => `${o.kind} ${o.metadata.namespace ? `${o.metadata.namespace}/` : ''}${o.metadata.name}`);
      return { count: blocking.length, first };
    },

    /** Deletes the default CR; returns its remaining finalizers, or null once it is gone. */
    async deleteDefaultCr(ref: KymaRef, cr: DefaultCrRef): Promise<string[] | null> {
      const client = await targetClient(targets, ref);
      try {
        await client.delete(cr.apiVersion, cr.kind, cr.name, cr.namespace);
        const live = await client.get(cr.apiVersion, cr.kind, cr.name, cr.namespace);
        return live ? ((live.metadata as { finalizers?: string[] }).finalizers ?? []) : null;
      } catch (err) {
        if (isNotFound(err)) return null;
        throw err;
      }
    },
  };
}
