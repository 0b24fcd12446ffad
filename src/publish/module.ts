// Publishes module versions the way modulectl does: the raw manifest as a layer (a tar with
// one YAML file, or plain YAML), an OCM component descriptor at
// component-descriptors/<component>:<version> whose raw-manifest resource is a localBlob of
// that artifact, and the ModuleTemplate of each version and the ModuleReleaseMeta of each
// module as the control plane holds them.
import { API_VERSION, LABELS, type KubeObject } from '../api/shared';
import type { OciRegistryClient } from '../oci/registry-client';
import { Registries } from '../oci/registries';
import { tarOneFile } from '../oci/tar';
import { BUILT_BY_MODULECTL, pushComponent, type PushTarget } from './component';

export type { OciRegistryClient, PushTarget };

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

/**
 * Pushes one version to the registry as the OCM tooling lays it out (src/publish/component.ts),
 * its raw manifest a local blob (a `directoryTree` resource as modulectl declares it). Returns
 * the full OCM descriptor. `client`: a client for the host that carries trust and credentials
 * (push access); the default one otherwise.
 */
export async function pushModuleVersion(
  to: string | PushTarget,
  m: ModuleVersion,
  client?: OciRegistryClient,
): Promise<Record<string, unknown>> {
  const target = typeof to === 'string' ? { host: to } : to;
  const oci = client ?? Registries.unconfigured().client(target.host);
  const blob = m.layer === 'tar' ? tarOneFile('raw-manifest.yaml', Buffer.from(m.manifest)) : Buffer.from(m.manifest);
  return await pushComponent(
    target,
    {
      name: m.component,
      version: m.version,
      labels: [BUILT_BY_MODULECTL],
      resources: [
        {
          name: 'raw-manifest',
          type: 'directoryTree',
          mediaType: m.layer === 'tar' ? 'application/x-tar' : 'application/x-yaml',
          blob,
        },
      ],
    },
    oci,
  );
}

/** The ModuleTemplate of a version: named and labelled as modulectl names it (`<module>-<version>`). */
export function moduleTemplate(m: ModuleVersion, namespace: string, descriptor: Record<string, unknown>): KubeObject {
  const component = descriptor.component as { repositoryContexts: unknown[] };
  const forms = {
    empty: {},
    registry: {
      component: { name: m.component, version: m.version, repositoryContexts: component.repositoryContexts },
    },
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
export function moduleReleaseMeta(
  name: string,
  component: string,
  namespace: string,
  channels: Record<string, string>,
): KubeObject {
  return {
    apiVersion: API_VERSION,
    kind: 'ModuleReleaseMeta',
    metadata: { name, namespace },
    spec: {
      moduleName: name,
      ocmComponentName: component,
      channels: Object.entries(channels).map(([channel, version]) => ({ channel, version })),
    },
  };
}
