// Fetch: from the ModuleTemplate's OCM descriptor (inline, or pulled from the registry) to
// the raw-manifest layer, pulled over the OCI Distribution API, verified by sha256 and kept
// in the worker's content-addressed cache. Returns only where the layer is and its digest.
// A template with `descriptor: {}` (modulectl 2.3 and later) names no component: it is the
// ModuleReleaseMeta's spec.ocmComponentName at the template's version, in the configured
// registry (src/oci/ocm.ts).
import type { ModuleReleaseMeta } from '../../api/modulereleasemeta';
import { Context, heartbeat } from '@temporalio/activity';
import type { ModuleTemplate } from '../../api/moduletemplate';
import { isReason } from '../../api/reasons';
import { API_VERSION, type KubeObject } from '../../api/shared';
import type { DefaultCrRef, FetchedModule, LayerRef, StateCheck } from '../../contract/artifacts';
import type { ResolvedModule } from '../../contract/module';
import { BoundedMap } from '../../infra/bounded-map';
import type { ObjectCache } from '../../k8s/object-cache';
import {
  configuredComponentLocation,
  DescriptorError,
  locateComponent,
  rawManifestOfComponent,
  type ComponentLocation,
  type OcmRegistry,
  type RawManifestResource,
} from '../../oci/ocm';
import { OciError } from '../../oci/registry-client';
import { LayerFormatError, readLayer } from '../../oci/tar';
import type { BlobCache } from '../blob-cache';
import { permanent, retryAfter, transient } from '../failure';

/** Typed failures for what the registry and the artifacts can go wrong with; the rest is retried. */
export function artifactFailure(err: unknown, what: string): Error {
  if (err instanceof OciError && isReason(err.reason)) {
    const retryable = err.reason === 'RegistryUnavailable' || err.reason === 'RegistryError';
    if (retryable && err.retryAfterMs !== undefined)
      return retryAfter(err.reason, `${what}: ${err.message}`, err.retryAfterMs);
    return retryable
      ? transient(err.reason, `${what}: ${err.message}`)
      : permanent(err.reason, `${what}: ${err.message}`);
  }
  if (err instanceof DescriptorError) return permanent(err.reason ?? 'MalformedDescriptor', `${what}: ${err.message}`);
  if (err instanceof LayerFormatError) return permanent('MalformedLayer', `${what}: ${err.message}`);
  return err instanceof Error ? err : new Error(String(err));
}

/** The layer from the cache, else pulled (once per digest at a time, however many ask). */
export async function ensureLayer(cache: BlobCache, layer: LayerRef): Promise<Buffer> {
  return await cache.obtain(layer.digest, (onChunk) =>
    cache.registries.client(layer.registry).pullBlob(layer.repository, layer.digest, onChunk),
  );
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
  private readonly resources = new BoundedMap<string, RawManifestResource>(RESOURCES_KEPT);

  /** `registry`: where templates with `descriptor: {}` find their component (none: they fail). */
  constructor(
    private readonly kcp: ObjectCache,
    private readonly cache: BlobCache,
    private readonly registry?: OcmRegistry,
  ) {}

  async fetch(module: ResolvedModule, defaultNamespace: string): Promise<Fetched> {
    const { name, namespace } = module.template;
    const where = `ModuleTemplate ${namespace}/${name}`;
    // The cached template will do if it is the generation resolution chose (or a later one).
    const template = await this.kcp.getIf<ModuleTemplate & KubeObject>(
      API_VERSION,
      'ModuleTemplate',
      name,
      namespace,
      (t) => (t.metadata.generation ?? 0) >= module.template.generation,
    );
    if (!template) throw permanent('TemplateNotFound', `${where} no longer exists`);
    try {
      const loc = await locateComponent(template.spec.descriptor, where, () =>
        this.configuredLocation(module, template, where),
      );
      const client = this.cache.registries.client(loc.registry);
      // The location is part of the key: a template with `descriptor: {}` finds its component
      // through the ModuleReleaseMeta, which may change without the template changing.
      const known = `${template.metadata.uid}/${template.metadata.generation}/${loc.registry}/${loc.repository}:${loc.version}`;
      let res = this.resources.get(known);
      if (!res) {
        heartbeat();
        res = await rawManifestOfComponent(client, template.spec.descriptor, loc, where);
        heartbeat();
        this.resources.set(known, res);
      }
      const layerClient = res.registry === loc.registry ? client : this.cache.registries.client(res.registry);
      const { repository, digest } = res;
      const what = `raw-manifest layer ${digest} of ${where}`;
      // One download per digest at a time: concurrent installs of a new version wait for it,
      // each heartbeating in its own activity while the chunks come in.
      const activity = Context.current();
      const blob = await this.cache.obtain(digest, (onChunk) => layerClient.pullBlob(repository, digest, onChunk), {
        // Refuse a malformed layer before it is kept (and before anything is applied).
        accept: (b) => void readLayer(b, what),
        onChunk: () => activity.heartbeat(),
      });
      const { text, format } = readLayer(blob, what);
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

  /**
   * Where a template with `descriptor: {}` finds its component, as upstream: the ModuleReleaseMeta
   * of the module names it (spec.ocmComponentName), the template's spec.version is its version,
   * the configured registry holds it.
   */
  private async configuredLocation(
    module: ResolvedModule,
    template: ModuleTemplate,
    where: string,
  ): Promise<ComponentLocation> {
    const { namespace } = module.template;
    const meta = await this.kcp.get<ModuleReleaseMeta & KubeObject>(
      API_VERSION,
      'ModuleReleaseMeta',
      module.name,
      namespace,
    );
    const component = meta?.spec.ocmComponentName;
    if (!component) {
      const why = meta
        ? `ModuleReleaseMeta ${namespace}/${module.name} has no spec.ocmComponentName`
        : `there is no ModuleReleaseMeta ${namespace}/${module.name}`;
      throw new DescriptorError(
        `${where} has an empty descriptor, so its OCM component is named by the module's ` +
          `ModuleReleaseMeta, but ${why}: set spec.ocmComponentName (e.g. ` +
          `kyma-project.io/module/${module.name}) or put the descriptor into the template`,
        'OcmComponentNameMissing',
      );
    }
    const version = template.spec.version ?? module.version;
    if (!this.registry?.host) {
      throw new DescriptorError(
        `${where} has an empty descriptor: component ${component}:${version} is to be found in the ` +
          `configured OCI registry, but none is configured (set KLM_OCI_REGISTRY_HOST, and ` +
          `KLM_MODULES_REPOSITORY_SUBPATH if the components lie under a subpath)`,
        'OciRegistryNotConfigured',
      );
    }
    return configuredComponentLocation(this.registry, component, version, where);
  }
}

/** The default CR named by the template's spec.data, if it has one. */
function defaultCrOf(template: ModuleTemplate, where: string, defaultNamespace: string): { defaultCr?: DefaultCrRef } {
  const data = template.spec.data as
    { apiVersion?: unknown; kind?: unknown; metadata?: { name?: unknown; namespace?: unknown } } | undefined;
  if (!data) return {};
  const { apiVersion, kind } = data;
  const name = data.metadata?.name;
  const ns = data.metadata?.namespace;
  if (typeof apiVersion !== 'string' || typeof kind !== 'string' || typeof name !== 'string') {
    throw new DescriptorError(
      `${where}: spec.data is not a Kubernetes object (it needs apiVersion, kind and metadata.name)`,
    );
  }
  const checks = stateChecksOf(template, where);
  return {
    defaultCr: {
      apiVersion,
      kind,
      name,
      namespace: typeof ns === 'string' ? ns : defaultNamespace,
      ...(checks ? { customStateCheck: checks } : {}),
    },
  };
}

/** The template's spec.customStateCheck, as small data for the readiness check. */
function stateChecksOf(template: ModuleTemplate, where: string): StateCheck[] | undefined {
  const raw: unknown = template.spec.customStateCheck;
  if (raw === undefined || raw === null || (Array.isArray(raw) && raw.length === 0)) return undefined;
  if (!Array.isArray(raw)) throw new DescriptorError(`${where}: spec.customStateCheck is not a list`);
  return raw.map((c: { jsonPath?: unknown; value?: unknown; mappedState?: unknown } | null, i) => {
    if (!c || typeof c.jsonPath !== 'string' || typeof c.value !== 'string' || typeof c.mappedState !== 'string') {
      throw new DescriptorError(
        `${where}: spec.customStateCheck[${i}] needs jsonPath, value and mappedState (strings)`,
      );
    }
    return { jsonPath: c.jsonPath, value: c.value, mappedState: c.mappedState };
  });
}
