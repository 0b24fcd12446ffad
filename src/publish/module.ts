// Publishes module versions the way modulectl does: the raw manifest as a layer (a tar with
// one YAML file, or plain YAML), an OCM component descriptor at
// component-descriptors/<component>:<version> whose raw-manifest resource is a localBlob of
// that artifact, and the ModuleTemplate of each version and the ModuleReleaseMeta of each
// module as the control plane holds them.
import { stringify } from 'yaml';
import { API_VERSION, type KubeObject } from '../api/shared';
import { OciRegistryClient } from '../oci/registry-client';
import { tarOneFile } from '../oci/tar';

export type { OciRegistryClient };

/** One version of a module, as its author publishes it. */
export interface ModuleVersion {
  name: string;
  component: string;
  version: string;
  manifest: string;
  defaultCR?: Record<string, unknown>;
  /** 'registry': the ModuleTemplate names the component; 'inline': it carries the whole descriptor. */
  descriptor: 'registry' | 'inline';
  layer: 'tar' | 'yaml';
}

const DESCRIPTOR_MEDIA_TYPE = 'application/vnd.ocm.software.component-descriptor.v2+yaml+tar';
const CONFIG_MEDIA_TYPE = 'application/vnd.ocm.software.component.config.v1+json';

/**
 * Pushes one version to the registry; returns its full OCM descriptor. `client`: a client for
 * `registryHost` that carries trust and credentials (push access); the default one otherwise.
 */
export async function pushModuleVersion(registryHost: string, m: ModuleVersion, client?: OciRegistryClient): Promise<Record<string, unknown>> {
  const oci = client ?? new OciRegistryClient(registryHost);
  const repository = `component-descriptors/${m.component}`;
  const layer = m.layer === 'tar' ? tarOneFile('raw-manifest.yaml', Buffer.from(m.manifest)) : Buffer.from(m.manifest);
  const layerMediaType = m.layer === 'tar' ? 'application/x-tar' : 'application/x-yaml';
  const layerDigest = await oci.pushBlob(repository, layer);
  const descriptor = {
    meta: { schemaVersion: 'v2' },
    component: {
      name: m.component,
      version: m.version,
      provider: 'kyma-project.io',
      repositoryContexts: [{ type: 'OCIRegistry', baseUrl: registryHost, componentNameMapping: 'urlPath' }],
      resources: [{ name: 'raw-manifest', type: 'directory', version: m.version, relation: 'local', access: { type: 'localBlob', localReference: layerDigest, mediaType: layerMediaType } }],
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
    config: { mediaType: CONFIG_MEDIA_TYPE, digest: configDigest, size: config.length },
    layers: [
      { mediaType: DESCRIPTOR_MEDIA_TYPE, digest: descriptorDigest, size: descriptorLayer.length },
      { mediaType: layerMediaType, digest: layerDigest, size: layer.length },
    ],
  });
  return descriptor;
}

export function moduleTemplate(m: ModuleVersion, namespace: string, descriptor: Record<string, unknown>, registryHost: string): KubeObject {
  const reference = { component: { name: m.component, version: m.version, repositoryContexts: [{ type: 'OCIRegistry', baseUrl: registryHost }] } };
  return {
    apiVersion: API_VERSION,
    kind: 'ModuleTemplate',
    metadata: { name: `${m.name}-${m.version}`, namespace },
    spec: {
      moduleName: m.name,
      version: m.version,
      descriptor: m.descriptor === 'inline' ? descriptor : reference,
      ...(m.defaultCR ? { data: m.defaultCR } : {}),
    },
  };
}

export function moduleReleaseMeta(name: string, component: string, namespace: string, channels: Record<string, string>): KubeObject {
  return {
    apiVersion: API_VERSION,
    kind: 'ModuleReleaseMeta',
    metadata: { name, namespace },
    spec: { moduleName: name, ocmComponentName: component, channels: Object.entries(channels).map(([channel, version]) => ({ channel, version })) },
  };
}
