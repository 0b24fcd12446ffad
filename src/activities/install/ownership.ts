// Ownership: whether the lifecycle manager created an object a module's manifest ships, or found
// it already there (a user's namespace, another tool's object). Before its first apply, an
// object found there is annotated with the labels and annotations it has (FOUND_ANNOTATION,
// written only if the object is still as read), so the fact lives on the object itself and
// survives any worker restart or workflow history. Such an object is never deleted: on removal
// it gets its own labels and annotations back. System namespaces are neither applied nor deleted.
import { MANAGED_BY } from '../../api/identity';
import { FOUND_ANNOTATION, OWNED_BY_ANNOTATION, ownedBy } from '../../api/names';
import { LABELS, type KubeObject } from '../../api/shared';
import type { RenderParams } from '../../contract/artifacts';
import type { KubeClient } from '../../k8s/rest-client';
import { isNamespace } from '../../manifests/order';

type Identity = Pick<RenderParams, 'kymaNamespace' | 'kymaName' | 'module'>;

/** The cluster's own namespaces: never labelled, never deleted. */
const SYSTEM_NAMESPACES = new Set(['kube-system', 'kube-public', 'kube-node-lease', 'default']);
/** The runtime's namespace: a system namespace, unless the lifecycle manager created it. */
const RUNTIME_NAMESPACE = 'kyma-system';

/** The labels the lifecycle manager puts on what it applies (besides the manifest's own). */
const PRODUCT_LABELS = [LABELS.managedBy, LABELS.kymaName, LABELS.moduleName];

/** What an object found in the cluster had of its own. */
export interface FoundMetadata {
  labels: Record<string, string>;
  annotations: Record<string, string>;
}

/** The labels and annotations an object had when a module's install found it; undefined for one the lifecycle manager created. */
export function foundMetadata(live: KubeObject): FoundMetadata | undefined {
  const raw = live.metadata.annotations?.[FOUND_ANNOTATION];
  if (raw === undefined) return undefined;
  try {
    const own = JSON.parse(raw) as Partial<FoundMetadata> | null;
    return { labels: own?.labels ?? {}, annotations: own?.annotations ?? {} };
  } catch {
    // A record someone broke: still found there (never deleted), its own labels unknown.
    return { labels: {}, annotations: {} };
  }
}

/**
 * Whether the lifecycle manager made a live object: it carries the managed-by label, or (released
 * with managed: false, which drops only that label) this installation's identity.
 */
function madeByUs(live: KubeObject, who: Identity): boolean {
  const { labels, annotations } = live.metadata;
  if (labels?.[LABELS.managedBy] === MANAGED_BY) return true;
  const owner = annotations?.[OWNED_BY_ANNOTATION];
  if (owner !== undefined) return owner === ownedBy(who.kymaNamespace, who.kymaName, who.module);
  return !live.metadata.namespace && labels?.[LABELS.moduleName] === who.module;
}

/**
 * Whether a Namespace a manifest ships is a system namespace, given what the cluster has of it
 * (`live`): kube-system, kube-public, kube-node-lease and default always; kyma-system when it
 * exists and the lifecycle manager did not create it.
 */
export function isSystemNamespace(o: KubeObject, live: KubeObject | undefined): boolean {
  if (!isNamespace(o)) return false;
  if (SYSTEM_NAMESPACES.has(o.metadata.name)) return true;
  if (o.metadata.name !== RUNTIME_NAMESPACE || !live) return false;
  return live.metadata.labels?.[LABELS.managedBy] !== MANAGED_BY || foundMetadata(live) !== undefined;
}

/** isSystemNamespace, reading the namespace only where its name does not settle it (kyma-system). */
export async function shipsSystemNamespace(client: KubeClient, o: KubeObject): Promise<boolean> {
  if (!isNamespace(o)) return false;
  if (SYSTEM_NAMESPACES.has(o.metadata.name)) return true;
  if (o.metadata.name !== RUNTIME_NAMESPACE) return false;
  return isSystemNamespace(o, await client.get('v1', 'Namespace', o.metadata.name));
}

/**
 * Before the first apply of an object: one found there, made by someone else, gets a record of
 * its own labels and annotations. The write carries the resourceVersion read, so the record is
 * exactly what the object had (a change in between is a conflict, and the install is retried); a
 * record already there stays: it says what the object had when first found. Whether the cluster
 * had the object.
 */
export async function noteFound(client: KubeClient, o: KubeObject, who: Identity): Promise<boolean> {
  const live = await client.get(o.apiVersion, o.kind, o.metadata.name, o.metadata.namespace);
  if (!live) return false;
  if (foundMetadata(live) || madeByUs(live, who)) return true;
  const own: FoundMetadata = { labels: live.metadata.labels ?? {}, annotations: live.metadata.annotations ?? {} };
  await client.mergePatch(o.apiVersion, o.kind, o.metadata.name, o.metadata.namespace, {
    metadata: {
      resourceVersion: live.metadata.resourceVersion,
      annotations: { [FOUND_ANNOTATION]: JSON.stringify(own) },
    },
  });
  return true;
}

/** A JSON merge patch of an object's metadata: null deletes a key. */
export interface RestorePatch {
  labels: Record<string, string | null>;
  annotations: Record<string, string | null>;
}

/**
 * The merge patch that gives an object found there its own labels and annotations back: every
 * key the lifecycle manager applied (`applied`'s, and its own labels) gets the value the object
 * had, or goes; one of its own that is gone meanwhile comes back; the record goes. Keys that
 * people changed since, and the lifecycle manager never set, stay as they are.
 */
export function restorePatch(live: KubeObject, found: FoundMetadata, applied: KubeObject): RestorePatch {
  const back = (
    now: Record<string, string> | undefined,
    own: Record<string, string>,
    ours: string[],
  ): Record<string, string | null> => {
    const patch: Record<string, string | null> = {};
    for (const k of ours) if (now?.[k] !== own[k]) patch[k] = own[k] ?? null;
    for (const [k, v] of Object.entries(own)) if (now?.[k] === undefined) patch[k] = v;
    return patch;
  };
  const labels = back(live.metadata.labels, found.labels, [
    ...Object.keys(applied.metadata.labels ?? {}),
    ...PRODUCT_LABELS,
  ]);
  const annotations = back(live.metadata.annotations, found.annotations, [
    ...Object.keys(applied.metadata.annotations ?? {}),
    OWNED_BY_ANNOTATION,
  ]);
  return { labels, annotations: { ...annotations, [FOUND_ANNOTATION]: null } };
}
