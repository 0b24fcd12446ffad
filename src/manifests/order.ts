// The order a manifest's objects go into a cluster and leave it: CRDs first (the rest may be
// of their kinds), then namespaces, then the rest; deleted the other way round, in tiers (what
// runs and what it runs as last, CRDs at the very end). Pure: unit-tested.
import { objectKey, type ObjectId } from '../api/object-id';
import type { KubeObject } from '../api/shared';

/** A manifest's objects in the order they are applied. */
export interface ApplyOrder {
  crds: KubeObject[];
  namespaces: KubeObject[];
  /** Namespaces the rest is in that the manifest does not define: created before the rest. */
  referenced: string[];
  rest: KubeObject[];
}

/** A Namespace object (of the core group). */
export function isNamespace(o: KubeObject): boolean {
  return o.kind === 'Namespace' && o.apiVersion === 'v1';
}

export function applyOrder(objects: KubeObject[]): ApplyOrder {
  const crds = objects.filter((o) => o.kind === 'CustomResourceDefinition');
  const namespaces = objects.filter(isNamespace);
  const rest = objects.filter((o) => !crds.includes(o) && !namespaces.includes(o));
  const own = new Set(namespaces.map((n) => n.metadata.name));
  const referenced = [...new Set(rest.map((o) => o.metadata.namespace).filter((n): n is string => !!n && !own.has(n)))];
  return { crds, namespaces, referenced, rest };
}

/** Kinds deleted last, in this order; everything else goes first. */
const LAST = [
  ['Deployment', 'StatefulSet', 'DaemonSet', 'ReplicaSet', 'Job', 'CronJob'],
  ['Service'],
  ['ServiceAccount'],
  ['Role', 'RoleBinding', 'ClusterRole', 'ClusterRoleBinding'],
  ['Namespace'],
  ['CustomResourceDefinition'],
];

function rank(o: { kind: string }): number {
  const i = LAST.findIndex((kinds) => kinds.includes(o.kind));
  return i < 0 ? 0 : i + 1;
}

/**
 * The tiers objects are deleted in, each once the one before is done: ordinary objects first;
 * workloads, services, service accounts, RBAC, namespaces and CRDs last. Within a tier the
 * objects listed last come first. Empty tiers are left out.
 */
export function deletionTiers<T extends { kind: string }>(objects: T[]): T[][] {
  const tiers = Array.from({ length: LAST.length + 1 }, (): T[] => []);
  for (const o of [...objects].reverse()) tiers[rank(o)]!.push(o);
  return tiers.filter((t) => t.length > 0);
}

/** What `previous` had and `next` has not: an object `next` has in another version of its kind stays. */
export function pruned<T>(previous: T[], next: T[], id: (o: T) => ObjectId): T[] {
  const keep = new Set(next.map((o) => objectKey(id(o), true)));
  return previous.filter((o) => !keep.has(objectKey(id(o), true)));
}
