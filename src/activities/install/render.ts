// Render: the layer's multi-document YAML becomes a list of objects, namespaced objects without
// a namespace put into the default one, every object labelled as ours. The result is stored in
// the cache by digest; any worker can re-create it from the layer reference and the parameters.
import { parseAllDocuments } from 'yaml';
import { MANAGED_BY } from '../../api/identity';
import { OWNED_BY_ANNOTATION, ownedBy } from '../../api/names';
import type { Reason } from '../../api/reasons';
import { LABELS, type KubeObject, type ObjectRef } from '../../api/shared';
import type { LayerRef, RenderedRef, RenderParams } from '../../contract/artifacts';
import { extractSingleYaml } from '../../oci/tar';
import type { BlobCache } from '../blob-cache';
import { permanent } from '../failure';
import { artifactFailure, ensureLayer } from './fetch';

/** Kinds that live outside namespaces, besides the layer's own cluster-scoped CRDs. */
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

export class RenderError extends Error {
  constructor(
    readonly reason: Extract<Reason, 'MalformedManifest' | 'EmptyManifest'>,
    message: string,
  ) {
    super(message);
    this.name = 'RenderError';
  }
}

/** An object's identity in a cluster: group, kind, namespace and name. */
export function objectKey(o: KubeObject): string {
  const group = o.apiVersion.includes('/') ? o.apiVersion.split('/')[0]! : '';
  return `${group}/${o.kind}/${o.metadata.namespace ?? ''}/${o.metadata.name}`;
}

/**
 * Labels an object as ours. A namespaced object belongs to one Kyma's module (kyma-name label,
 * owned-by annotation); an object of cluster scope (CRDs, cluster roles) is shared by every
 * installation of the module in its cluster, so it carries only the module: Kymas that share a
 * cluster then apply the very same object, and nothing flips between them.
 */
export function identify(o: KubeObject, p: Pick<RenderParams, 'kymaNamespace' | 'kymaName' | 'module'>): void {
  const meta = o.metadata;
  const { [LABELS.kymaName]: _kyma, ...labels } = meta.labels ?? {};
  const { [OWNED_BY_ANNOTATION]: _owner, ...annotations } = meta.annotations ?? {};
  if (meta.namespace) {
    meta.labels = {
      ...labels,
      [LABELS.managedBy]: MANAGED_BY,
      [LABELS.kymaName]: p.kymaName,
      [LABELS.moduleName]: p.module,
    };
    meta.annotations = { ...annotations, [OWNED_BY_ANNOTATION]: ownedBy(p.kymaNamespace, p.kymaName, p.module) };
  } else {
    meta.labels = { ...labels, [LABELS.managedBy]: MANAGED_BY, [LABELS.moduleName]: p.module };
    if (Object.keys(annotations).length) meta.annotations = annotations;
    else delete meta.annotations;
  }
}

/**
 * The objects of a raw manifest: every document a Kubernetes object, namespaced ones without a
 * namespace put into `defaultNamespace`, none repeated. Labels nothing (renderObjects does, for
 * the lifecycle manager; klm's direct installs label their own way).
 */
export function parseManifest(yamlText: string, defaultNamespace: string): KubeObject[] {
  const docs = parseAllDocuments(yamlText);
  const objects: KubeObject[] = [];
  docs.forEach((doc, i) => {
    if (doc.errors.length)
      throw new RenderError('MalformedManifest', `document ${i + 1} is not valid YAML: ${doc.errors[0]!.message}`);
    const o = doc.toJS() as unknown;
    if (o === null || o === undefined) return;
    const obj = o as Partial<KubeObject>;
    if (
      typeof o !== 'object' ||
      Array.isArray(o) ||
      typeof obj.apiVersion !== 'string' ||
      typeof obj.kind !== 'string' ||
      typeof obj.metadata?.name !== 'string'
    ) {
      throw new RenderError(
        'MalformedManifest',
        `document ${i + 1} is not a Kubernetes object (it needs apiVersion, kind and metadata.name)`,
      );
    }
    objects.push(obj as KubeObject);
  });
  if (objects.length === 0)
    throw new RenderError(
      'EmptyManifest',
      'the raw manifest holds no Kubernetes object: the module would install nothing',
    );
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
    const id = objectKey(o);
    if (seen.has(id))
      throw new RenderError(
        'MalformedManifest',
        `the manifest repeats ${o.kind} ${o.metadata.namespace ? `${o.metadata.namespace}/` : ''}${o.metadata.name}`,
      );
    seen.add(id);
  }
  return objects;
}

/** The objects of a raw manifest, each labelled as the lifecycle manager's (identify). */
export function renderObjects(yamlText: string, p: RenderParams): KubeObject[] {
  const objects = parseManifest(yamlText, p.defaultNamespace);
  for (const o of objects) identify(o, p);
  return objects;
}

/**
 * The manager workload: the template's spec.manager (a Deployment or StatefulSet, so namespaced:
 * one that names no namespace is where the manifest's objects without one went), else the
 * manifest's first Deployment or StatefulSet.
 */
export function managerOf(
  objects: KubeObject[],
  declared: ObjectRef | undefined,
  defaultNamespace: string,
): ObjectRef | undefined {
  if (declared) return declared.namespace ? declared : { ...declared, namespace: defaultNamespace };
  const w = objects.find((o) => o.apiVersion === 'apps/v1' && (o.kind === 'Deployment' || o.kind === 'StatefulSet'));
  return (
    w && {
      group: 'apps',
      version: 'v1',
      kind: w.kind,
      name: w.metadata.name,
      ...(w.metadata.namespace ? { namespace: w.metadata.namespace } : {}),
    }
  );
}

/** Rendered objects and the reference to them that workflows keep. */
export interface Rendered {
  ref: RenderedRef;
  objects: KubeObject[];
}

/** Renders a layer's raw manifest and keeps the result in the cache under its digest. */
async function render(cache: BlobCache, layer: LayerRef, manifest: string, params: RenderParams): Promise<Rendered> {
  const objects = renderObjects(manifest, params);
  const digest = await cache.put(Buffer.from(JSON.stringify(objects)));
  const manager = managerOf(objects, params.manager, params.defaultNamespace);
  return {
    ref: {
      layer,
      params,
      digest,
      objects: objects.length,
      crds: objects.filter((o) => o.kind === 'CustomResourceDefinition').map((o) => o.metadata.name),
      ...(manager ? { manager } : {}),
    },
    objects,
  };
}

/** The rendered objects of a reference, from the cache or rendered again on this worker. */
export async function loadRendered(cache: BlobCache, ref: RenderedRef): Promise<KubeObject[]> {
  const cached = await cache.get(ref.digest);
  if (cached) return JSON.parse(cached.toString('utf8')) as KubeObject[];
  const again = await render(
    cache,
    ref.layer,
    extractSingleYaml(await ensureLayer(cache, ref.layer), `layer ${ref.layer.digest}`),
    ref.params,
  );
  if (again.ref.digest !== ref.digest)
    throw new Error(`re-rendering layer ${ref.layer.digest} gave ${again.ref.digest}, expected ${ref.digest}`);
  return again.objects;
}

/** Renders a fetched layer; a layer that is no list of objects is a typed, permanent failure. */
export async function renderLayer(
  cache: BlobCache,
  layer: LayerRef,
  manifest: string,
  params: RenderParams,
  where: string,
): Promise<Rendered> {
  try {
    return await render(cache, layer, manifest, params);
  } catch (err) {
    if (err instanceof RenderError)
      throw permanent(err.reason, `rendering the raw manifest of ${where}: ${err.message}`);
    throw artifactFailure(err, `rendering the raw manifest of ${where}`);
  }
}
