// OCM component descriptors as modulectl writes them, and their layout in an OCI registry:
// the descriptor of component C at version V is the artifact `component-descriptors/C:V`
// under the repository context's base URL; its config names the layer that holds the
// descriptor; local blobs (such as the raw-manifest layer) are layers of that artifact,
// addressed by digest in the same repository.
import { parse } from 'yaml';
import { OciError, type OciRegistryClient } from './registry-client';
import { extractSingleYaml } from './tar';

export class DescriptorError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'DescriptorError';
  }
}

export interface ComponentLocation {
  /** host:port of the registry (http on loopback, https otherwise). */
  registry: string;
  /** Repository of the component's artifact: `<base path>/component-descriptors/<component>`. */
  repository: string;
  component: string;
  version: string;
}

export interface RawManifestResource {
  digest: string;
  mediaType: string;
  /** Repository that holds the blob. */
  repository: string;
  registry: string;
}

interface Descriptor {
  component?: {
    name?: string;
    version?: string;
    repositoryContexts?: { baseUrl?: string; type?: string }[];
    resources?: { name?: string; type?: string; access?: Record<string, unknown> }[];
  };
}

function asDescriptor(raw: unknown, where: string): Descriptor {
  if (!raw || typeof raw !== 'object' || !('component' in raw) || typeof (raw as Descriptor).component !== 'object') {
    throw new DescriptorError(`${where}: not an OCM component descriptor (no "component" object)`);
  }
  return raw as Descriptor;
}

/** Where the component lives, from the (possibly partial) descriptor. */
export function componentLocation(raw: unknown, where: string): ComponentLocation {
  const c = asDescriptor(raw, where).component!;
  if (!c.name || !c.version) throw new DescriptorError(`${where}: the descriptor names no component name and version`);
  const contexts = c.repositoryContexts ?? [];
  const baseUrl = contexts[contexts.length - 1]?.baseUrl;
  if (!baseUrl) throw new DescriptorError(`${where}: component ${c.name}:${c.version} has no repositoryContexts[].baseUrl`);
  const trimmed = baseUrl.replace(/^(https?|oci):\/\//, '').replace(/\/+$/, '');
  const slash = trimmed.indexOf('/');
  const registry = slash < 0 ? trimmed : trimmed.slice(0, slash);
  const basePath = slash < 0 ? '' : `${trimmed.slice(slash + 1)}/`;
  return { registry, repository: `${basePath}component-descriptors/${c.name}`, component: c.name, version: c.version };
}

export function hasResources(raw: unknown): boolean {
  return Array.isArray((raw as Descriptor | undefined)?.component?.resources);
}

/** The raw-manifest resource of a full descriptor. */
export function rawManifestResource(raw: unknown, loc: ComponentLocation, where: string): RawManifestResource {
  const resources = asDescriptor(raw, where).component!.resources ?? [];
  const res = resources.find((r) => r.name === 'raw-manifest');
  if (!res) throw new DescriptorError(`${where}: component ${loc.component}:${loc.version} has no resource named raw-manifest`);
  const access = res.access ?? {};
  switch (access.type) {
    case 'localBlob':
    case 'localBlob/v1': {
      const digest = access.localReference;
      if (typeof digest !== 'string') throw new DescriptorError(`${where}: raw-manifest localBlob access has no localReference`);
      return { digest, mediaType: typeof access.mediaType === 'string' ? access.mediaType : '', repository: loc.repository, registry: loc.registry };
    }
    case 'ociBlob':
    case 'ociBlob/v1': {
      const digest = access.digest;
      const ref = access.ref;
      if (typeof digest !== 'string' || typeof ref !== 'string') throw new DescriptorError(`${where}: raw-manifest ociBlob access needs ref and digest`);
      const slash = ref.indexOf('/');
      return { digest, mediaType: typeof access.mediaType === 'string' ? access.mediaType : '', registry: ref.slice(0, slash), repository: ref.slice(slash + 1) };
    }
    default:
      throw new DescriptorError(`${where}: raw-manifest access type "${String(access.type)}" is not supported (use localBlob or ociBlob)`);
  }
}

interface OciManifest {
  config?: { digest?: string };
  layers?: { digest?: string; mediaType?: string }[];
}

/** Pulls the full component descriptor from the registry, as OCM lays it out. */
export async function pullDescriptor(client: OciRegistryClient, loc: ComponentLocation): Promise<unknown> {
  const where = `${loc.registry}/${loc.repository}:${loc.version}`;
  const manifest = await client.getManifest<OciManifest>(loc.repository, loc.version).catch((err: unknown) => {
    if (err instanceof OciError && err.reason === 'BlobNotFound') throw new DescriptorError(`component descriptor ${where} not found in the registry`);
    throw err;
  });
  let layerDigest: string | undefined;
  if (manifest.config?.digest) {
    const config = JSON.parse((await client.pullBlob(loc.repository, manifest.config.digest)).toString('utf8')) as { componentDescriptorLayer?: { digest?: string } };
    layerDigest = config.componentDescriptorLayer?.digest;
  }
  layerDigest ??= manifest.layers?.[0]?.digest;
  if (!layerDigest) throw new DescriptorError(`${where}: the artifact names no component descriptor layer`);
  const layer = await client.pullBlob(loc.repository, layerDigest);
  const text = extractSingleYaml(layer, where, /component-descriptor\.ya?ml$/);
  return asDescriptor(parse(text) as unknown, where);
}
