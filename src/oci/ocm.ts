// OCM component descriptors as modulectl writes them, and their layout in an OCI registry:
// the descriptor of component C at version V is the artifact `component-descriptors/C:V`
// under the repository context's base URL (and its subPath); its config names the layer that
// holds the descriptor; local blobs (such as the raw-manifest layer) are layers of that
// artifact, addressed by digest in the same repository.
//
// Where the component is found, as upstream's lifecycle-manager does:
// - a ModuleTemplate with `descriptor: {}` (modulectl 2.3 and later): the component
//   `ModuleReleaseMeta.spec.ocmComponentName` at the template's `spec.version`, in the registry
//   the lifecycle manager is configured with (`--oci-registry-host` plus
//   `--modules-repository-subpath`, see upstream internal/setup/ociregistry.go and
//   internal/repository/ocm/repo.go): `<host>[/<subpath>]/component-descriptors/<component>:<version>`;
// - a template that carries the descriptor (whole, or name, version and repositoryContexts):
//   from its last repository context (baseUrl, subPath);
// - local blobs of a descriptor: in the repository of its effective (last) repository context,
//   as upstream's internal/manifest/img/parse.go.
import { createHash } from 'node:crypto';
import { parse } from 'yaml';
import type { Reason } from '../api/reasons';
import { OciError, type OciRegistryClient } from './registry-client';
import { extractSingleYaml } from './tar';

export class DescriptorError extends Error {
  /** The reason the failure stands for; MalformedDescriptor when unset. */
  constructor(
    message: string,
    readonly reason?: Reason,
  ) {
    super(message);
    this.name = 'DescriptorError';
  }
}

/**
 * The registry the lifecycle manager looks components up in (upstream's `--oci-registry-host`
 * and `--modules-repository-subpath`). The host may carry a path and a scheme (`http://` or
 * `https://`, dropped here: the registry client chooses the protocol; an `http://` host is an
 * insecure host in the worker's configuration, src/infra/config.ts, so it may speak plain HTTP).
 */
export interface OcmRegistry {
  host: string;
  subPath?: string;
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

interface RepositoryContext {
  type?: string;
  baseUrl?: string;
  subPath?: string;
  componentNameMapping?: string;
}

interface Descriptor {
  component?: {
    name?: string;
    version?: string;
    repositoryContexts?: RepositoryContext[];
    resources?: { name?: string; type?: string; access?: Record<string, unknown> }[];
  };
}

function asDescriptor(raw: unknown, where: string): Descriptor {
  if (!raw || typeof raw !== 'object' || !('component' in raw) || typeof (raw as Descriptor).component !== 'object') {
    throw new DescriptorError(`${where}: not an OCM component descriptor (no "component" object)`);
  }
  return raw as Descriptor;
}

/** host[:port] and the path below it, from a reference such as `http://host:5000/a/b/`. */
function splitReference(reference: string): { registry: string; basePath: string } {
  const trimmed = reference
    .trim()
    .replace(/^(https?|oci):\/\//, '')
    .replace(/\/+$/, '');
  const slash = trimmed.indexOf('/');
  return slash < 0
    ? { registry: trimmed, basePath: '' }
    : { registry: trimmed.slice(0, slash), basePath: trimmed.slice(slash + 1) };
}

function joinPath(...parts: (string | undefined)[]): string {
  return parts
    .map((p) => (p ?? '').replace(/^\/+|\/+$/g, ''))
    .filter(Boolean)
    .join('/');
}

/** The repository of component C under a base path: `component-descriptors/C` (urlPath mapping) or sha256(C) (sha256-digest). */
function componentRepository(basePath: string, component: string, mapping: string | undefined, where: string): string {
  if (mapping === undefined || mapping === '' || mapping === 'urlPath')
    return joinPath(basePath, 'component-descriptors', component);
  if (mapping === 'sha256-digest') return joinPath(basePath, createHash('sha256').update(component).digest('hex'));
  throw new DescriptorError(
    `${where}: componentNameMapping "${mapping}" is not supported (use urlPath or sha256-digest)`,
  );
}

/** Where a repository context puts component C at version V. */
function locationIn(ctx: RepositoryContext, component: string, version: string, where: string): ComponentLocation {
  const { registry, basePath } = splitReference(ctx.baseUrl!);
  const repository = componentRepository(joinPath(basePath, ctx.subPath), component, ctx.componentNameMapping, where);
  return { registry, repository, component, version };
}

/** The effective (last) repository context of a descriptor with a baseUrl, if it has one. */
function effectiveContext(c: NonNullable<Descriptor['component']>): RepositoryContext | undefined {
  const ctx = (c.repositoryContexts ?? []).at(-1);
  return ctx?.baseUrl ? ctx : undefined;
}

/**
 * Whether a template's descriptor names its component: anything but the empty `descriptor: {}`
 * of modulectl 2.3 and later (whose component is found through the ModuleReleaseMeta and the
 * configured registry). A descriptor that names it only in part is not taken for `{}`:
 * `componentLocation` says what it lacks.
 */
export function namesComponent(raw: unknown): boolean {
  return raw !== undefined && raw !== null && !(typeof raw === 'object' && Object.keys(raw).length === 0);
}

/** Where the component lives, from the (possibly partial) descriptor: its last repository context. */
export function componentLocation(raw: unknown, where: string): ComponentLocation {
  const c = asDescriptor(raw, where).component!;
  const { name, version } = c;
  if (!name || !version) {
    const missing = [name ? '' : 'component.name', version ? '' : 'component.version'].filter(Boolean);
    throw new DescriptorError(
      `${where}: its spec.descriptor lacks ${missing.join(' and ')}: a descriptor in the template ` +
        `names its OCM component by component.name and component.version (with repositoryContexts); ` +
        `or make it {} to have the component found through the ModuleReleaseMeta's ` +
        `spec.ocmComponentName at the template's spec.version`,
    );
  }
  const ctx = effectiveContext(c);
  if (!ctx) throw new DescriptorError(`${where}: component ${name}:${version} has no repositoryContexts[].baseUrl`);
  return locationIn(ctx, name, version, where);
}

/**
 * Where the configured registry holds component C at version V, as upstream:
 * `<host>[/<subPath>]/component-descriptors/<C>:<V>`.
 */
export function configuredComponentLocation(
  registry: OcmRegistry,
  component: string,
  version: string,
  where: string,
): ComponentLocation {
  if (!registry.host.trim())
    throw new DescriptorError(`${where}: no OCI registry is configured`, 'OciRegistryNotConfigured');
  return locationIn({ baseUrl: registry.host, subPath: registry.subPath ?? '' }, component, version, where);
}

/**
 * Where a full descriptor's local blobs are: the repository of its effective repository
 * context; a descriptor without one keeps its blobs where it was found.
 */
export function blobLocation(raw: unknown, found: ComponentLocation, where: string): ComponentLocation {
  const c = asDescriptor(raw, where).component!;
  const ctx = effectiveContext(c);
  return ctx ? locationIn(ctx, c.name ?? found.component, c.version ?? found.version, where) : found;
}

export function hasResources(raw: unknown): boolean {
  return Array.isArray((raw as Descriptor | undefined)?.component?.resources);
}

/** The raw-manifest resource of a full descriptor. */
export function rawManifestResource(raw: unknown, loc: ComponentLocation, where: string): RawManifestResource {
  const resources = asDescriptor(raw, where).component!.resources ?? [];
  const res = resources.find((r) => r.name === 'raw-manifest');
  if (!res)
    throw new DescriptorError(`${where}: component ${loc.component}:${loc.version} has no resource named raw-manifest`);
  const access = res.access ?? {};
  switch (access.type) {
    case 'localBlob':
    case 'localBlob/v1': {
      const digest = access.localReference;
      if (typeof digest !== 'string')
        throw new DescriptorError(`${where}: raw-manifest localBlob access has no localReference`);
      return {
        digest,
        mediaType: typeof access.mediaType === 'string' ? access.mediaType : '',
        repository: loc.repository,
        registry: loc.registry,
      };
    }
    case 'ociBlob':
    case 'ociBlob/v1': {
      const digest = access.digest;
      const ref = access.ref;
      if (typeof digest !== 'string' || typeof ref !== 'string')
        throw new DescriptorError(`${where}: raw-manifest ociBlob access needs ref and digest`);
      const slash = ref.indexOf('/');
      return {
        digest,
        mediaType: typeof access.mediaType === 'string' ? access.mediaType : '',
        registry: ref.slice(0, slash),
        repository: ref.slice(slash + 1),
      };
    }
    default:
      throw new DescriptorError(
        `${where}: raw-manifest access type "${String(access.type)}" is not supported (use localBlob or ociBlob)`,
      );
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
    if (err instanceof OciError && err.reason === 'BlobNotFound')
      throw new DescriptorError(`component descriptor ${where} not found in the registry`, 'BlobNotFound');
    throw err;
  });
  let layerDigest: string | undefined;
  if (manifest.config?.digest) {
    const config = JSON.parse((await client.pullBlob(loc.repository, manifest.config.digest)).toString('utf8')) as {
      componentDescriptorLayer?: { digest?: string };
    };
    layerDigest = config.componentDescriptorLayer?.digest;
  }
  layerDigest ??= manifest.layers?.[0]?.digest;
  if (!layerDigest) throw new DescriptorError(`${where}: the artifact names no component descriptor layer`);
  const layer = await client.pullBlob(loc.repository, layerDigest);
  const text = extractSingleYaml(layer, where, /component-descriptor\.ya?ml$/);
  return asDescriptor(parse(text) as unknown, where);
}

/**
 * Where a template's component is: named by its descriptor, else (`descriptor: {}`) where
 * `configured` finds it (the ModuleReleaseMeta's ocmComponentName in the configured registry).
 */
export async function locateComponent(
  descriptor: unknown,
  where: string,
  configured: () => Promise<ComponentLocation>,
): Promise<ComponentLocation> {
  return namesComponent(descriptor) ? componentLocation(descriptor, where) : await configured();
}

/**
 * The raw-manifest resource of a template's component at `loc`: from the descriptor the template
 * carries whole, else from the component's own descriptor pulled with `client`.
 */
export async function rawManifestOfComponent(
  client: OciRegistryClient,
  descriptor: unknown,
  loc: ComponentLocation,
  where: string,
): Promise<RawManifestResource> {
  if (hasResources(descriptor)) return rawManifestResource(descriptor, loc, where);
  const full = await pullDescriptor(client, loc);
  return rawManifestResource(full, blobLocation(full, loc, where), where);
}
