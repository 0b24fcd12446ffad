// Render: the layer's multi-document YAML becomes a list of objects, each labelled with
// managed-by, kyma-name and module-name and annotated with its owner, namespaced objects
// without a namespace put into the default one. The result is stored in the cache by digest;
// any worker can re-create it from the layer reference and the same parameters.
import { ApplicationFailure } from '@temporalio/activity';
import { parseAllDocuments } from 'yaml';
import { OWNED_BY_ANNOTATION, ownedBy } from '../api/names';
import { LABELS, type ObjectRef } from '../api/shared';
import type { KubeObject } from '../k8s/rest-client';
import { extractSingleYaml } from '../oci/tar';
import type { LayerRef, RenderedRef, RenderParams } from '../workflows/types';
import type { BlobCache } from './blob-cache';
import { ensureLayer, toFailure } from './fetch';

export const MANAGED_BY = 'klm-temporal';

/** Kinds that live outside namespaces, besides the layer's own cluster-scoped CRDs. */
const CLUSTER_SCOPED = new Set([
  'Namespace', 'CustomResourceDefinition', 'ClusterRole', 'ClusterRoleBinding', 'PriorityClass', 'StorageClass',
  'PersistentVolume', 'ValidatingWebhookConfiguration', 'MutatingWebhookConfiguration', 'ValidatingAdmissionPolicy',
  'ValidatingAdmissionPolicyBinding', 'APIService', 'IngressClass', 'RuntimeClass', 'CSIDriver', 'Node',
]);

export class RenderError extends Error {}

function groupOf(apiVersion: string): string {
  return apiVersion.includes('/') ? apiVersion.split('/')[0]! : '';
}

export function renderObjects(yamlText: string, p: RenderParams): KubeObject[] {
  const docs = parseAllDocuments(yamlText);
  const objects: KubeObject[] = [];
  docs.forEach((doc, i) => {
    if (doc.errors.length) throw new RenderError(`document ${i + 1} is not valid YAML: ${doc.errors[0]!.message}`);
    const o = doc.toJS() as unknown;
    if (o === null || o === undefined) return;
    const obj = o as Partial<KubeObject>;
    if (typeof o !== 'object' || Array.isArray(o) || typeof obj.apiVersion !== 'string' || typeof obj.kind !== 'string' || typeof obj.metadata?.name !== 'string') {
      throw new RenderError(`document ${i + 1} is not a Kubernetes object (it needs apiVersion, kind and metadata.name)`);
    }
    objects.push(obj as KubeObject);
  });
  const clusterScopedCrdKinds = new Set(
    objects.filter((o) => o.kind === 'CustomResourceDefinition' && (o.spec as { scope?: string } | undefined)?.scope === 'Cluster')
      .map((o) => (o.spec as { names?: { kind?: string } }).names?.kind),
  );
  const seen = new Set<string>();
  for (const o of objects) {
    const namespaced = !CLUSTER_SCOPED.has(o.kind) && !clusterScopedCrdKinds.has(o.kind);
    if (namespaced && !o.metadata.namespace) o.metadata.namespace = p.defaultNamespace;
    if (!namespaced) delete o.metadata.namespace;
    const id = `${groupOf(o.apiVersion)}/${o.kind}/${o.metadata.namespace ?? ''}/${o.metadata.name}`;
    if (seen.has(id)) throw new RenderError(`the manifest repeats ${o.kind} ${o.metadata.namespace ? `${o.metadata.namespace}/` : ''}${o.metadata.name}`);
    seen.add(id);
    const meta = o.metadata as { labels?: Record<string, string>; annotations?: Record<string, string> };
    meta.labels = { ...meta.labels, [LABELS.managedBy]: MANAGED_BY, [LABELS.kymaName]: p.kymaName, [LABELS.moduleName]: p.module };
    meta.annotations = { ...meta.annotations, [OWNED_BY_ANNOTATION]: ownedBy(p.kymaNamespace, p.kymaName, p.module) };
  }
  return objects;
}

function managerOf(objects: KubeObject[], declared?: ObjectRef): ObjectRef | undefined {
  if (declared) return declared;
  const w = objects.find((o) => o.apiVersion === 'apps/v1' && (o.kind === 'Deployment' || o.kind === 'StatefulSet'));
  return w && { group: 'apps', version: 'v1', kind: w.kind, name: w.metadata.name, namespace: w.metadata.namespace };
}

async function render(cache: BlobCache, layer: LayerRef, params: RenderParams): Promise<{ ref: RenderedRef; objects: KubeObject[] }> {
  const blob = await ensureLayer(cache, layer);
  const objects = renderObjects(extractSingleYaml(blob, `layer ${layer.digest}`), params);
  const digest = await cache.put(Buffer.from(JSON.stringify(objects)));
  return {
    ref: {
      layer,
      params,
      digest,
      objects: objects.length,
      crds: objects.filter((o) => o.kind === 'CustomResourceDefinition').map((o) => o.metadata.name),
      manager: managerOf(objects, params.manager),
    },
    objects,
  };
}

/** The rendered objects of a reference, from the cache or rendered again on this worker. */
export async function loadRendered(cache: BlobCache, ref: RenderedRef): Promise<KubeObject[]> {
  const cached = await cache.get(ref.digest);
  if (cached) return JSON.parse(cached.toString('utf8')) as KubeObject[];
  const again = await render(cache, ref.layer, ref.params);
  if (again.ref.digest !== ref.digest) throw new Error(`re-rendering layer ${ref.layer.digest} gave ${again.ref.digest}, expected ${ref.digest}`);
  return again.objects;
}

export function renderActivities(cache: BlobCache) {
  return {
    async renderLayer(layer: LayerRef, params: RenderParams): Promise<RenderedRef> {
      try {
        return (await render(cache, layer, params)).ref;
      } catch (err) {
        if (err instanceof RenderError) throw ApplicationFailure.nonRetryable(`rendering layer ${layer.digest}: ${err.message}`, 'MalformedManifest');
        throw toFailure(err, `rendering layer ${layer.digest}`);
      }
    },
  };
}
