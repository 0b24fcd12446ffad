// The OCM component modulectl 3.2.0 builds for a module config (internal/service/create and
// componentconstructor), as far as the lifecycle manager reads it: provider kyma-project.io, the
// labels modulectl sets, and the raw manifest and default CR as `directoryTree` resources, each
// an uncompressed tar of its one file. Not built: modulectl's module-image resources (the images
// the manifest names, for security scanning), its git source and its moduletemplate resource.
import { LABELS } from '../api/shared';
import { tarOneFile } from '../oci/tar';
import { IS_CLUSTER_SCOPED } from './cluster-scope';
import { BUILT_BY_MODULECTL, type ComponentLabel, type ComponentVersion } from './component';
import type { ModuleConfig } from './module-config';

/** A file the component carries: its name (the tar entry's) and content. */
export interface SourceFile {
  fileName: string;
  text: string;
}

const v1 = (name: string, value: unknown): ComponentLabel => ({ name, value, version: 'v1' });

/**
 * The tar entry of a resource: the file's own name, as modulectl archives it; a name that is no
 * YAML file name (a download's, say) becomes `<resource>.yaml`, since readers take the one YAML
 * file of the archive.
 */
function entryName(file: SourceFile, resource: string): string {
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

export function moduleComponentOf(
  config: ModuleConfig,
  files: { manifest: SourceFile; defaultCR?: SourceFile },
  clusterScoped: boolean,
): ComponentVersion {
  const labels = [
    BUILT_BY_MODULECTL,
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
  return {
    name: config.name,
    version: config.version,
    labels,
    resources: [
      directoryTree('raw-manifest', files.manifest),
      ...(files.defaultCR ? [directoryTree('default-cr', files.defaultCR)] : []),
    ],
  };
}
