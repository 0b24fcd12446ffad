// Fetch: from the ModuleTemplate's OCM descriptor (inline, or pulled from the registry) to
// the raw-manifest layer, pulled over the OCI Distribution API, verified by sha256 and kept
// in the worker's content-addressed cache. Returns only where the layer is and its digest.
import { ApplicationFailure, heartbeat } from '@temporalio/activity';
import type { ModuleTemplate } from '../api/moduletemplate';
import { API_VERSION } from '../api/shared';
import type { KubeClient, KubeObject } from '../k8s/rest-client';
import { componentLocation, DescriptorError, hasResources, pullDescriptor, rawManifestResource } from '../oci/ocm';
import { OciError, OciRegistryClient } from '../oci/registry-client';
import { LayerFormatError, readLayer } from '../oci/tar';
import type { DefaultCrRef, FetchedModule, LayerRef, ResolvedModule } from '../workflows/types';
import { BoundedMap } from './bounded-map';
import type { BlobCache } from './blob-cache';

/** Typed, non-retryable failures for what a retry cannot fix; the rest is retried. */
export function toFailure(err: unknown, what: string): Error {
  if (err instanceof OciError) {
    const retryable = err.reason === 'RegistryUnavailable' || err.reason === 'RegistryError';
    return retryable ? ApplicationFailure.retryable(`${what}: ${err.message}`, err.reason) : ApplicationFailure.nonRetryable(`${what}: ${err.message}`, err.reason);
  }
  if (err instanceof DescriptorError) return ApplicationFailure.nonRetryable(`${what}: ${err.message}`, 'MalformedDescriptor');
  if (err instanceof LayerFormatError) return ApplicationFailure.nonRetryable(`${what}: ${err.message}`, 'MalformedLayer');
  return err instanceof Error ? err : new Error(String(err));
}

export async function ensureLayer(cache: BlobCache, layer: LayerRef): Promise<Buffer> {
  const cached = await cache.get(layer.digest);
  if (cached) return cached;
  const blob = await new OciRegistryClient(layer.registry).pullBlob(layer.repository, layer.digest);
  await cache.put(blob);
  return blob;
}

/** How many templates' raw-manifest resources a worker remembers. */
const RESOURCES_KEPT = 1000;

export function fetchActivities(kcp: KubeClient, cache: BlobCache) {
  /**
   * The raw-manifest resource a template's component descriptor names, per template uid and
   * generation: a template that changes gets a new generation, so the descriptor is pulled from
   * the registry once per template version, not once per Kyma.
   */
  const resources = new BoundedMap<string, ReturnType<typeof rawManifestResource>>(RESOURCES_KEPT);
  return {
    async fetchLayer(module: ResolvedModule, defaultNamespace: string): Promise<FetchedModule> {
      const { name, namespace } = module.template;
      const where = `ModuleTemplate ${namespace}/${name}`;
      try {
        const template = (await kcp.get<ModuleTemplate & KubeObject>(API_VERSION, 'ModuleTemplate', name, namespace)) as ModuleTemplate | undefined;
        if (!template) throw ApplicationFailure.nonRetryable(`${where} no longer exists`, 'TemplateNotFound');
        const loc = componentLocation(template.spec.descriptor, where);
        const client = new OciRegistryClient(loc.registry);
        const meta = template.metadata as { uid?: string; generation?: number };
        const known = `${meta.uid}/${meta.generation}`;
        let res = resources.get(known);
        if (!res) {
          heartbeat();
          const descriptor = hasResources(template.spec.descriptor) ? template.spec.descriptor : await pullDescriptor(client, loc);
          heartbeat();
          res = rawManifestResource(descriptor, loc, where);
          resources.set(known, res);
        }
        const layerClient = res.registry === loc.registry ? client : new OciRegistryClient(res.registry);
        const blob = (await cache.get(res.digest)) ?? (await layerClient.pullBlob(res.repository, res.digest, () => heartbeat()));
        // Refuse a malformed layer here, before anything is applied.
        const { format } = readLayer(blob, `raw-manifest layer ${res.digest} of ${where}`);
        await cache.put(blob);
        const data = template.spec.data as { apiVersion?: string; kind?: string; metadata?: { name?: string; namespace?: string } } | undefined;
        let defaultCr: DefaultCrRef | undefined;
        if (data?.apiVersion && data.kind && data.metadata?.name) {
          defaultCr = { apiVersion: data.apiVersion, kind: data.kind, name: data.metadata.name, namespace: data.metadata.namespace ?? defaultNamespace };
        } else if (data) {
          throw new DescriptorError(`${where}: spec.data is not a Kubernetes object (it needs apiVersion, kind and metadata.name)`);
        }
        return {
          layer: { registry: res.registry, repository: res.repository, digest: res.digest, size: blob.length, format },
          manager: template.spec.manager,
          defaultCr,
        };
      } catch (err) {
        throw toFailure(err, `fetching the layer of ${where}`);
      }
    },
  };
}
