// Render: the layer's multi-document YAML becomes a list of objects (src/manifests parses it),
// every object labelled as ours. The result is stored in
// the cache by digest; any worker can re-create it from the layer reference and the parameters.
import { MANAGED_BY } from '../../api/identity';
import { OWNED_BY_ANNOTATION, ownedBy } from '../../api/names';
import { LABELS, type KubeObject } from '../../api/shared';
import type { LayerRef, RenderedRef, RenderParams } from '../../contract/artifacts';
import { managerOf } from '../../manifests/manager';
import { parseManifest, placeObjects, RenderError } from '../../manifests/parse';
import { extractSingleYaml } from '../../oci/tar';
import type { BlobCache } from '../blob-cache';
import { permanent } from '../failure';
import { artifactFailure, ensureLayer } from './fetch';
import { ParsedLayers } from './parsed-layers';

const parsedLayers = new ParsedLayers();

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

/** The objects of a raw manifest, each labelled as the lifecycle manager's (identify). */
export function renderObjects(yamlText: string, p: RenderParams): KubeObject[] {
  return labelled(parseManifest(yamlText, p.defaultNamespace), p);
}

/** The objects of layer `digest` (its raw manifest `manifest`, parsed once per worker), each labelled as ours. */
export function layerObjects(digest: string, manifest: string, p: RenderParams): KubeObject[] {
  return labelled(placeObjects(parsedLayers.objects(digest, manifest), p.defaultNamespace), p);
}

function labelled(objects: KubeObject[], p: RenderParams): KubeObject[] {
  for (const o of objects) identify(o, p);
  return objects;
}

/** Rendered objects and the reference to them that workflows keep. */
export interface Rendered {
  ref: RenderedRef;
  objects: KubeObject[];
}

/** Renders a layer's raw manifest and keeps the result in the cache under its digest. */
async function render(cache: BlobCache, layer: LayerRef, manifest: string, params: RenderParams): Promise<Rendered> {
  const objects = layerObjects(layer.digest, manifest, params);
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
