// Fetch: from the ModuleTemplate's OCM descriptor (inline, or pulled from the registry) to
// the raw-manifest layer, pulled over the OCI Distribution API, verified by sha256 and kept
// in the worker's content-addressed cache. Returns only where the layer is and its digest.
import { heartbeat } from '@temporalio/activity';
import type { ModuleTemplate } from '../../api/moduletemplate';
import { isReason } from '../../api/reasons';
import { API_VERSION, type KubeObject } from '../../api/shared';
import type { DefaultCrRef, FetchedModule, LayerRef } from '../../contract/artifacts';
import type { ResolvedModule } from '../../contract/module';
import { BoundedMap } from '../../infra/bounded-map';
import type { KubeClient } from '../../k8s/rest-client';
import { componentLocation, DescriptorError, hasResources, pullDescriptor, rawManifestResource } from '../../oci/ocm';
import { OciError } from '../../oci/registry-client';
import { LayerFormatError, readLayer } from '../../oci/tar';
import type { BlobCache } from '../blob-cache';
import { permanent, retryAfter, transient } from '../failure';

/** Typed failures for what the registry and the artifacts can go wrong with; the rest is retried. */
export function artifactFailure(err: unknown, what: string): Error {
  if (err instanceof OciError && isReason(err.reason)) {
    const retryable = err.reason === 'RegistryUnavailable' || err.reason === 'RegistryError';
    if (retryable && err.retryAfterMs !== undefined) return retryAfter(err.reason, `${what}: ${err.message}`, err.retryAfterMs);
    return retryable ? transient(err.reason, `${what}: ${err.message}`) : permanent(err.reason, `${what}: ${err.message}`);
  }
  if (err instanceof DescriptorError) return permanent('MalformedDescriptor', `${what}: ${err.message}`);
  if (err instanceof LayerFormatError) return permanent('MalformedLayer', `${what}: ${err.message}`);
  return err instanceof Error ? err : new Error(String(err));
}

export async function ensureLayer(cache: BlobCache, layer: LayerRef): Promise<Buffer> {
  const cached = await cache.get(layer.digest);
  if (cached) return cached;
  const blob = await cache.registries.client(layer.registry).pullBlob(layer.repository, layer.digest);
  await cache.put(blob);
  return blob;
}

/** How many templates' raw-manifest resources a worker remembers. */
const RESOURCES_KEPT = 1000;

/** What a fetch found, for the rest of the install in this activity (not for history). */
export interface Fetched {
  fetched: FetchedModule;
  template: ModuleTemplate;
  /** The raw manifest: the layer's YAML text. */
  manifest: string;
}

export class ModuleFetcher {
  /**
   * The raw-manifest resource a template's component descriptor names, per template uid and
   * generation: a template that changes gets a new generation, so the descriptor is pulled from
   * the registry once per template version, not once per Kyma.
   */
  private readonly resources = new BoundedMap<string, ReturnType<typeof rawManifestResource>>(RESOURCES_KEPT);

  constructor(private readonly kcp: KubeClient, private readonly cache: BlobCache) {}

  async fetch(module: ResolvedModule, defaultNamespace: string): Promise<Fetched> {
    const { name, namespace } = module.template;
    const where = `ModuleTemplate ${namespace}/${name}`;
    const template = await this.kcp.get<ModuleTemplate & KubeObject>(API_VERSION, 'ModuleTemplate', name, namespace);
    if (!template) throw permanent('TemplateNotFound', `${where} no longer exists`);
    try {
      const loc = componentLocation(template.spec.descriptor, where);
      const client = this.cache.registries.client(loc.registry);
      const known = `${template.metadata.uid}/${template.metadata.generation}`;
      let res = this.resources.get(known);
      if (!res) {
        heartbeat();
        const descriptor = hasResources(template.spec.descriptor) ? template.spec.descriptor : await pullDescriptor(client, loc);
        heartbeat();
        res = rawManifestResource(descriptor, loc, where);
        this.resources.set(known, res);
      }
      const layerClient = res.registry === loc.registry ? client : this.cache.registries.client(res.registry);
      const cached = await this.cache.get(res.digest);
      const blob = cached ?? (await layerClient.pullBlob(res.repository, res.digest, () => heartbeat()));
      // Refuse a malformed layer here, before anything is applied (and before it is kept).
      const { text, format } = readLayer(blob, `raw-manifest layer ${res.digest} of ${where}`);
      if (!cached) await this.cache.put(blob);
      return {
        fetched: {
          layer: { registry: res.registry, repository: res.repository, digest: res.digest, size: blob.length, format },
          ...(template.spec.manager ? { manager: template.spec.manager } : {}),
          ...defaultCrOf(template, where, defaultNamespace),
        },
        template,
        manifest: text,
      };
    } catch (err) {
      throw artifactFailure(err, `fetching the layer of ${where}`);
    }
  }
}

/** The default CR named by the template's spec.data, if it has one. */
function defaultCrOf(template: ModuleTemplate, where: string, defaultNamespace: string): { defaultCr?: DefaultCrRef } {
  const data = template.spec.data as { apiVersion?: unknown; kind?: unknown; metadata?: { name?: unknown; namespace?: unknown } } | undefined;
  if (!data) return {};
  const { apiVersion, kind } = data;
  const name = data.metadata?.name;
  const ns = data.metadata?.namespace;
  if (typeof apiVersion !== 'string' || typeof kind !== 'string' || typeof name !== 'string') {
    throw new DescriptorError(`${where}: spec.data is not a Kubernetes object (it needs apiVersion, kind and metadata.name)`);
  }
  return { defaultCr: { apiVersion, kind, name, namespace: typeof ns === 'string' ? ns : defaultNamespace } };
}
