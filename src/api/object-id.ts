// An object's identity in a cluster, and its key: the one type and the one key function that
// the worker, the bridge and the command line name target objects with. Upstream's API spells a
// reference by group and version (`ObjectRef`, as in spec.manager); the two convert.
import { apiVersionOf, type KubeObject, type ObjectRef } from './shared';

/** An object in a cluster: apiVersion, kind, name, and namespace unless it is of cluster scope. */
export interface ObjectId {
  apiVersion: string;
  kind: string;
  name: string;
  namespace?: string;
}

/** The identity of an object. */
export function idOf(o: KubeObject): ObjectId {
  return {
    apiVersion: o.apiVersion,
    kind: o.kind,
    name: o.metadata.name,
    ...(o.metadata.namespace ? { namespace: o.metadata.namespace } : {}),
  };
}

/** The identity of a reference in upstream's spelling (group and version). */
export function idOfRef(ref: ObjectRef): ObjectId {
  return {
    apiVersion: apiVersionOf(ref),
    kind: ref.kind,
    name: ref.name,
    ...(ref.namespace ? { namespace: ref.namespace } : {}),
  };
}

/** The group of an apiVersion: '' for the core group. */
export function groupOf(apiVersion: string): string {
  return apiVersion.includes('/') ? apiVersion.split('/')[0]! : '';
}

/** An identity in upstream's spelling (group and version). */
export function refOf(id: ObjectId): ObjectRef {
  const version = id.apiVersion.includes('/') ? id.apiVersion.split('/')[1]! : id.apiVersion;
  return {
    group: groupOf(id.apiVersion),
    version,
    kind: id.kind,
    name: id.name,
    ...(id.namespace ? { namespace: id.namespace } : {}),
  };
}

/**
 * The key of an object: `<apiVersion>/<kind>/<namespace>/<name>`. Signals, readiness checks and
 * module state name objects by it (workflow histories carry it: keep the format). An object the
 * API server serves in several versions is one object: `anyVersion` keys it by its group instead
 * (`<group>/<kind>/<namespace>/<name>`), so that a manifest that moves a kind to another version
 * repeats, keeps, and does not prune it.
 */
export function objectKey(o: ObjectId, anyVersion = false): string {
  const api = anyVersion ? groupOf(o.apiVersion) : o.apiVersion;
  return `${api}/${o.kind}/${o.namespace ?? ''}/${o.name}`;
}
