// Publishes module versions the way modulectl does: the raw manifest as a layer (a tar with
// one YAML file, or plain YAML), an OCM component descriptor at
// component-descriptors/<component>:<version> whose raw-manifest resource is a localBlob of
// that artifact, and the ModuleTemplate of each version and the ModuleReleaseMeta of each
// module as the control plane holds them.
import { stringify } from 'yaml';
import { API_VERSION, LABELS, type KubeObject } from '../api/shared';
import type { OciRegistryClient } from '../oci/registry-client';
import { Registries } from '../oci/registries';
import { tarOneFile } from '../oci/tar';

export type { OciRegistryClient };

/** One version of a module, as its author publishes it. */
export interface ModuleVersion {
  name: string;
  component: string;
  version: string;
  manifest: string;
  defaultCR?: Record<string, unknown>;
  /** ModuleTemplate `spec.customStateCheck` (deprecated upstream, still honoured). */
  customStateCheck?: { jsonPath: string; value: string; mappedState: string }[];
  /**
   * What the ModuleTemplate's `spec.descriptor` holds: 'empty': `{}`, as modulectl 2.3 and later
   * write it (the component is the ModuleReleaseMeta's ocmComponentName at the template's version,
   * in the registry the lifecycle manager is configured with); 'registry': the component's name,
   * version and repository context (a reference into the registry); 'inline': the whole descriptor
   * (legacy templates).
   */
  descriptor: 'empty' | 'registry' | 'inline';
  layer: 'tar' | 'yaml';
}

/** Where components are pushed: a registry host, and a repository subpath below it (OCM's OCIRegistry baseUrl and subPath). */
export interface PushTarget {
  host: string;
  subPath?: string;
}

const DESCRIPTOR_MEDIA_TYPE = 'application/vnd.ocm.software.component-descriptor.v2+yaml+tar';
const CONFIG_MEDIA_TYPE = 'application/vnd.ocm.software.component.config.v1+json';

function target(to: string | PushTarget): PushTarget {
  return typeof to === 'string' ? { host: to } : to;
}

/**
 * Pushes one version to the registry as the OCM tooling lays it out (what `modulectl create`
 * does through OCM): the artifact `[<subPath>/]component-descriptors/<component>:<version>`, an
 * OCI image manifest whose config (`application/vnd.ocm.software.component.config.v1+json`)
 * names the descriptor layer (`componentDescriptorLayer`), the first layer a tar holding
 * `component-descriptor.yaml`, further layers the local blobs (the raw manifest, a
 * `directoryTree` resource as modulectl declares it). Returns the full OCM descriptor. `client`: a client for the host that carries trust and
 * credentials (push access); the default one otherwise.
 */
export async function pushModuleVersion(to: string | PushTarget, m: ModuleVersion, client?: OciRegistryClient): Promise<Record<string, unknown>> {
  const { host, subPath } = target(to);
  const oci = client ?? Registries.unconfigured().client(host);
  const base = (subPath ?? '').replace(/^\/+|\/+$/g, '');
  const repository = `${base ? `${base}/` : ''}component-descriptors/${m.component}`;
  const layer = m.layer === 'tar' ? tarOneFile('raw-manifest.yaml', Buffer.from(m.manifest)) : Buffer.from(m.manifest);
  const layerMediaType = m.layer === 'tar' ? 'application/x-tar' : 'application/x-yaml';
  const layerDigest = await oci.pushBlob(repository, layer);
  const descriptor = {
    meta: { schemaVersion: 'v2' },
    component: {
      name: m.component,
      version: m.version,
      provider: 'kyma-project.io',
      labels: [{ name: 'kyma-project.io/built-by', value: 'modulectl', version: 'v1' }],
      repositoryContexts: [{ type: 'OCIRegistry', baseUrl: host, ...(base ? { subPath: base } : {}), componentNameMapping: 'urlPath' }],
      resources: [{ name: 'raw-manifest', type: 'directoryTree', version: m.version, relation: 'local', access: { type: 'localBlob', localReference: layerDigest, mediaType: layerMediaType } }],
      sources: [],
      componentReferences: [],
    },
  };
  const descriptorLayer = tarOneFile('component-descriptor.yaml', Buffer.from(stringify(descriptor)));
  const descriptorDigest = await oci.pushBlob(repository, descriptorLayer);
  const config = Buffer.from(JSON.stringify({ componentDescriptorLayer: { mediaType: DESCRIPTOR_MEDIA_TYPE, digest: descriptorDigest, size: descriptorLayer.length } }));
  const configDigest = await oci.pushBlob(repository, config);
  await oci.pushManifest(repository, m.version, {
    schemaVersion: 2,
    mediaType: 'application/vnd.oci.image.manifest.v1+json',
    // The annotations the OCM library writes (genericocireg: software.ocm.componentversion,
    // software.ocm.creator; software.ocm.artifact on each local blob).
    annotations: { 'software.ocm.componentversion': `${m.component}:${m.version}`, 'software.ocm.creator': 'klm-temporal publish' },
    config: { mediaType: CONFIG_MEDIA_TYPE, digest: configDigest, size: config.length },
    layers: [
      { mediaType: DESCRIPTOR_MEDIA_TYPE, digest: descriptorDigest, size: descriptorLayer.length },
      { mediaType: layerMediaType, digest: layerDigest, size: layer.length, annotations: { 'software.ocm.artifact': JSON.stringify([{ kind: 'resource', identity: { name: 'raw-manifest' } }]) } },
    ],
  });
  return descriptor;
}

/** The ModuleTemplate of a version: named and labelled as modulectl names it (`<module>-<version>`). */
export function moduleTemplate(m: ModuleVersion, namespace: string, descriptor: Record<string, unknown>): KubeObject {
  const component = descriptor.component as { repositoryContexts: unknown[] };
  const forms = {
    empty: {},
    registry: { component: { name: m.component, version: m.version, repositoryContexts: component.repositoryContexts } },
    inline: descriptor,
  };
  return {
    apiVersion: API_VERSION,
    kind: 'ModuleTemplate',
    metadata: { name: `${m.name}-${m.version}`, namespace, labels: { [LABELS.moduleName]: m.name } },
    spec: {
      moduleName: m.name,
      version: m.version,
      descriptor: forms[m.descriptor],
      ...(m.defaultCR ? { data: m.defaultCR } : {}),
      ...(m.customStateCheck ? { customStateCheck: m.customStateCheck } : {}),
    },
  };
}

/** The ModuleReleaseMeta of a module: `ocmComponentName` is the full component name (`kyma-project.io/module/<name>`). */
export function moduleReleaseMeta(name: string, component: string, namespace: string, channels: Record<string, string>): KubeObject {
  return {
    apiVersion: API_VERSION,
    kind: 'ModuleReleaseMeta',
    metadata: { name, namespace },
    spec: { moduleName: name, ocmComponentName: component, channels: Object.entries(channels).map(([channel, version]) => ({ channel, version })) },
  };
}
