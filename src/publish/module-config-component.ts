// The OCM component klm pushes for a module config: klm's own extra (modulectl 3.1 was the last
// modulectl that pushed; 3.2 writes a component constructor for the OCM CLI,
// src/publish/component-constructor.ts). Built as modulectl builds it, as far as the lifecycle
// manager reads it: provider kyma-project.io, modulectl's labels, and the raw manifest and default
// CR as `directoryTree` resources, each an uncompressed tar of its one file. Not pushed: the image
// resources (for security scanning), the git source and the moduletemplate resource, which only
// the constructor file has.
import { LABELS } from '../api/shared';
import { tarOneFile } from '../oci/tar';
import { IS_CLUSTER_SCOPED } from './cluster-scope';
import { BUILT_BY_MODULECTL, type ComponentLabel, type ComponentVersion } from './component';
import type { ModuleConfig } from './module-config';

/** A file the component carries: its name (the tar entry's) and content; where it is when it is local. */
export interface SourceFile {
  fileName: string;
  text: string;
  /** The file's path, for a file the config names by path (not downloaded). */
  localFile?: string;
}

const v1 = (name: string, value: unknown): ComponentLabel => ({ name, value, version: 'v1' });

/**
 * The tar entry of a resource: the file's own name, as modulectl archives it; a name that is no
 * YAML file name (a download's, say) becomes `<resource>.yaml`, since readers take the one YAML
 * file of the archive.
 */
export function entryName(file: SourceFile, resource: string): string {
  return /\.ya?ml$/.test(file.fileName) ? file.fileName : `${resource}.yaml`;
}

function directoryTree(name: string, file: SourceFile) {
  return {
    name,
    type: 'directoryTree',
    mediaType: 'application/x-tar',
    blob: tarOneFile(entryName(file, name), Buffer.from(file.text)),
  };
}

/** The component's labels as modulectl sets them (its provider's kyma-project.io/built-by not among them). */
export function moduleLabels(config: ModuleConfig, clusterScoped: boolean): ComponentLabel[] {
  const labels = [
    v1(LABELS.beta, String(config.beta)),
    v1(LABELS.internal, String(config.internal)),
    v1('operator.kyma-project.io/requiresDowntime', String(config.requiresDowntime)),
    v1(IS_CLUSTER_SCOPED, String(clusterScoped)),
  ];
  if (config.securityScanEnabled) {
    labels.push(
      v1('security.kyma-project.io/scan', 'enabled'),
      v1('cloud.gardener.cnudie/responsibles', [
        { github_hostname: 'github.tools.sap', teamname: config.team, type: 'githubTeam' },
      ]),
    );
  }
  return labels;
}

export function moduleComponentOf(
  config: ModuleConfig,
  files: { manifest: SourceFile; defaultCR?: SourceFile },
  clusterScoped: boolean,
): ComponentVersion {
  return {
    name: config.name,
    version: config.version,
    labels: [BUILT_BY_MODULECTL, ...moduleLabels(config, clusterScoped)],
    resources: [
      directoryTree('raw-manifest', files.manifest),
      ...(files.defaultCR ? [directoryTree('default-cr', files.defaultCR)] : []),
    ],
  };
}
