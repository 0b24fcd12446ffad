// A raw manifest's objects: its multi-document YAML becomes a list of Kubernetes objects,
// namespaced objects without a namespace put into the default one, none repeated. The worker's
// render (which labels them as the lifecycle manager's) and klm's direct installs both parse here.
import { parseAllDocuments } from 'yaml';
import { idOf, objectKey } from '../api/object-id';
import type { Reason } from '../api/reasons';
import type { KubeObject } from '../api/shared';

/** Kinds that live outside namespaces, besides the manifest's own cluster-scoped CRDs. */
const CLUSTER_SCOPED = new Set([
  'Namespace',
  'CustomResourceDefinition',
  'ClusterRole',
  'ClusterRoleBinding',
  'PriorityClass',
  'StorageClass',
  'PersistentVolume',
  'ValidatingWebhookConfiguration',
  'MutatingWebhookConfiguration',
  'ValidatingAdmissionPolicy',
  'ValidatingAdmissionPolicyBinding',
  'APIService',
  'IngressClass',
  'RuntimeClass',
  'CSIDriver',
  'Node',
]);

/** A raw manifest that is no list of objects, with the reason the worker reports it by. */
export class RenderError extends Error {
  constructor(
    readonly reason: Extract<Reason, 'MalformedManifest' | 'EmptyManifest'>,
    message: string,
  ) {
    super(message);
    this.name = 'RenderError';
  }
}

/** Whether a document is a list of objects (`kind: List`, or any `…List` with `items`), as kubectl reads one. */
function isList(o: object): o is { kind: string; items: unknown[] } {
  const { kind, items } = o as { kind?: unknown; items?: unknown };
  return typeof kind === 'string' && kind.endsWith('List') && Array.isArray(items);
}

/** A Kubernetes object, or what is missing from one (`where` says which document or item). */
function objectOf(o: unknown, where: string): KubeObject {
  const obj = o as Partial<KubeObject>;
  if (
    typeof o !== 'object' ||
    o === null ||
    Array.isArray(o) ||
    typeof obj.apiVersion !== 'string' ||
    typeof obj.kind !== 'string' ||
    typeof obj.metadata?.name !== 'string'
  ) {
    throw new RenderError(
      'MalformedManifest',
      `${where} is not a Kubernetes object (it needs apiVersion, kind and metadata.name)`,
    );
  }
  return obj as KubeObject;
}

/** A document's objects: itself, or a list's items (lists in lists too), as kubectl expands them. */
function objectsOf(o: unknown, where: string): KubeObject[] {
  if (typeof o === 'object' && o !== null && !Array.isArray(o) && isList(o))
    return o.items.flatMap((item, j) => objectsOf(item, `${where}, item ${j + 1} of its ${o.kind}`));
  return [objectOf(o, where)];
}

/**
 * The objects of a raw manifest: every document a Kubernetes object, or a list of them (`kind:
 * List`, expanded as kubectl does), namespaced ones without a namespace put into
 * `defaultNamespace`, none repeated (in any version of its kind). Labels nothing (the worker's
 * render does, for the lifecycle manager; klm's direct installs label their own way).
 */
export function parseManifest(yamlText: string, defaultNamespace: string): KubeObject[] {
  return placeObjects(manifestObjects(yamlText), defaultNamespace);
}

/** The objects of a raw manifest as its documents hold them (nothing put into a namespace yet). */
export function manifestObjects(yamlText: string): KubeObject[] {
  const docs = parseAllDocuments(yamlText);
  const objects: KubeObject[] = [];
  docs.forEach((doc, i) => {
    if (doc.errors.length)
      throw new RenderError('MalformedManifest', `document ${i + 1} is not valid YAML: ${doc.errors[0]!.message}`);
    const o = doc.toJS() as unknown;
    if (o === null || o === undefined) return;
    objects.push(...objectsOf(o, `document ${i + 1}`));
  });
  if (objects.length === 0)
    throw new RenderError(
      'EmptyManifest',
      'the raw manifest holds no Kubernetes object: the module would install nothing',
    );
  return objects;
}

/** Puts namespaced objects without a namespace into `defaultNamespace` (in place), and refuses one repeated. */
export function placeObjects(objects: KubeObject[], defaultNamespace: string): KubeObject[] {
  const clusterScopedCrdKinds = new Set(
    objects
      .filter(
        (o) => o.kind === 'CustomResourceDefinition' && (o.spec as { scope?: string } | undefined)?.scope === 'Cluster',
      )
      .map((o) => (o.spec as { names?: { kind?: string } }).names?.kind),
  );
  const seen = new Set<string>();
  for (const o of objects) {
    const namespaced = !CLUSTER_SCOPED.has(o.kind) && !clusterScopedCrdKinds.has(o.kind);
    if (namespaced && !o.metadata.namespace) o.metadata.namespace = defaultNamespace;
    if (!namespaced) delete o.metadata.namespace;
    const id = objectKey(idOf(o), true);
    if (seen.has(id))
      throw new RenderError(
        'MalformedManifest',
        `the manifest repeats ${o.kind} ${o.metadata.namespace ? `${o.metadata.namespace}/` : ''}${o.metadata.name}`,
      );
    seen.add(id);
  }
  return objects;
}
