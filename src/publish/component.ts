// An OCM component version in an OCI registry, laid out as the OCM tooling pushes it (what
// `modulectl create` hands to OCM): the artifact `[<subPath>/]component-descriptors/<component>:<version>`,
// an OCI image manifest whose config (`application/vnd.ocm.software.component.config.v1+json`)
// names the descriptor layer (`componentDescriptorLayer`), the first layer a tar holding
// `component-descriptor.yaml`, further layers the local blobs of its resources.
import { stringify } from 'yaml';
import { OciError, type OciRegistryClient } from '../oci/registry-client';
import { tarOneFile } from '../oci/tar';

/** Where components are pushed: a registry host, and a repository subpath below it (OCM's OCIRegistry baseUrl and subPath). */
export interface PushTarget {
  host: string;
  subPath?: string;
}

/** A resource whose content travels with the component, as a layer of its artifact (OCM's localBlob access). */
export interface LocalBlobResource {
  name: string;
  type: string;
  mediaType: string;
  blob: Buffer;
}

export interface ComponentLabel {
  name: string;
  value: unknown;
  version: string;
}

export interface ComponentVersion {
  name: string;
  version: string;
  labels: ComponentLabel[];
  resources: LocalBlobResource[];
}

/** The label modulectl gives every component it builds (its provider label kyma-project.io/built-by). */
export const BUILT_BY_MODULECTL: ComponentLabel = {
  name: 'kyma-project.io/built-by',
  value: 'modulectl',
  version: 'v1',
};

const DESCRIPTOR_MEDIA_TYPE = 'application/vnd.ocm.software.component-descriptor.v2+yaml+tar';
const CONFIG_MEDIA_TYPE = 'application/vnd.ocm.software.component.config.v1+json';

function basePath(to: PushTarget): string {
  return (to.subPath ?? '').replace(/^\/+|\/+$/g, '');
}

/** The repository of a component under the target: `[<subPath>/]component-descriptors/<component>` (OCM's urlPath mapping). */
export function componentRepository(to: PushTarget, component: string): string {
  const base = basePath(to);
  return `${base ? `${base}/` : ''}component-descriptors/${component}`;
}

/** Whether the registry holds the component at that version already. */
export async function componentVersionExists(
  to: PushTarget,
  name: string,
  version: string,
  oci: OciRegistryClient,
): Promise<boolean> {
  try {
    await oci.getManifest(componentRepository(to, name), version);
    return true;
  } catch (err) {
    if (err instanceof OciError && err.reason === 'BlobNotFound') return false;
    throw err;
  }
}

/** Pushes the component version (replacing the tag if it exists); returns its full OCM descriptor. */
export async function pushComponent(
  to: PushTarget,
  c: ComponentVersion,
  oci: OciRegistryClient,
): Promise<Record<string, unknown>> {
  const repository = componentRepository(to, c.name);
  const base = basePath(to);
  const layers = [];
  for (const r of c.resources) layers.push({ resource: r, digest: await oci.pushBlob(repository, r.blob) });
  const descriptor = {
    meta: { schemaVersion: 'v2' },
    component: {
      name: c.name,
      version: c.version,
      provider: 'kyma-project.io',
      labels: c.labels,
      repositoryContexts: [
        { type: 'OCIRegistry', baseUrl: to.host, ...(base ? { subPath: base } : {}), componentNameMapping: 'urlPath' },
      ],
      resources: layers.map(({ resource: r, digest }) => ({
        name: r.name,
        type: r.type,
        version: c.version,
        relation: 'local',
        access: { type: 'localBlob', localReference: digest, mediaType: r.mediaType },
      })),
      sources: [],
      componentReferences: [],
    },
  };
  const descriptorLayer = tarOneFile('component-descriptor.yaml', Buffer.from(stringify(descriptor)));
  const descriptorDigest = await oci.pushBlob(repository, descriptorLayer);
  const config = Buffer.from(
    JSON.stringify({
      componentDescriptorLayer: {
        mediaType: DESCRIPTOR_MEDIA_TYPE,
        digest: descriptorDigest,
        size: descriptorLayer.length,
      },
    }),
  );
  const configDigest = await oci.pushBlob(repository, config);
  await oci.pushManifest(repository, c.version, {
    schemaVersion: 2,
    mediaType: 'application/vnd.oci.image.manifest.v1+json',
    // The annotations the OCM library writes (genericocireg: software.ocm.componentversion,
    // software.ocm.creator; software.ocm.artifact on each local blob).
    annotations: {
      'software.ocm.componentversion': `${c.name}:${c.version}`,
      'software.ocm.creator': 'klm-temporal publish',
    },
    config: { mediaType: CONFIG_MEDIA_TYPE, digest: configDigest, size: config.length },
    layers: [
      { mediaType: DESCRIPTOR_MEDIA_TYPE, digest: descriptorDigest, size: descriptorLayer.length },
      ...layers.map(({ resource: r, digest }) => ({
        mediaType: r.mediaType,
        digest,
        size: r.blob.length,
        annotations: { 'software.ocm.artifact': JSON.stringify([{ kind: 'resource', identity: { name: r.name } }]) },
      })),
    ],
  });
  return descriptor;
}
