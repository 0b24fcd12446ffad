// The component constructor modulectl 3.2.0 writes for the OCM CLI (`modulectl create
// --output-constructor-file`; internal/common/types/component and
// internal/service/componentconstructor): one component, provider kyma-project.io labelled
// built-by modulectl, modulectl's labels, the resources (an `ociArtifact` per image the manifest
// runs, the raw manifest and default CR as `directoryTree` inputs of their one file, the
// ModuleTemplate as a `PlainText` file), and the module's git source. Paths are absolute, as
// modulectl writes them. `ocm add componentversions` reads it.
import path from 'node:path';
import { BUILT_BY_MODULECTL } from './component';
import type { ImageInfo } from './image-reference';
import type { ModuleConfig } from './module-config';
import { moduleLabels } from './module-config-component';

export interface ConstructorInputs {
  /** Absolute paths of the files the OCM CLI reads. */
  manifestFile: string;
  defaultCRFile?: string;
  templateFile: string;
  /** The images the manifest runs (src/publish/manifest-images.ts). */
  images: ImageInfo[];
  /** The module's sources: the config's repository at the commit checked out. */
  source: { repoUrl: string; commit: string };
  clusterScoped: boolean;
}

/** upstream's semverPattern for image versions (a leading v allowed). */
const OCM_SEMVER =
  /^v?(\d+)\.(\d+)\.(\d+)(?:-([0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?(?:\+([0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?$/;

/** A tag made an OCM version's pre-release (upstream's normalizeTagForOCM). */
function normalizedTag(tag: string): string {
  return tag.replace(/[^a-zA-Z0-9.-]/g, '-').replace(/^[-.]+|[-.]+$/g, '') || 'unknown';
}

/** An image's resource name and version (upstream's generateOCMVersionAndName). */
export function imageResourceOf(image: ImageInfo): { name: string; version: string } {
  const tag = image.tag ?? '';
  if (image.digest) {
    const short = image.digest.slice(0, 12);
    const version = !tag
      ? `0.0.0+sha256.${short}`
      : OCM_SEMVER.test(tag)
        ? `${tag}+sha256.${short}`
        : `0.0.0-${normalizedTag(tag)}+sha256.${short}`;
    return { name: `${image.name}-${image.digest.slice(0, 8)}`, version };
  }
  return { name: image.name, version: OCM_SEMVER.test(tag) ? tag : `0.0.0-${normalizedTag(tag)}` };
}

function directoryTree(name: string, file: string, version: string) {
  return {
    name,
    type: 'directoryTree',
    version,
    input: { type: 'dir', path: path.dirname(file), includeFiles: [path.basename(file)] },
  };
}

export function componentConstructorOf(config: ModuleConfig, i: ConstructorInputs): Record<string, unknown> {
  const version = config.version;
  // Keys in modulectl's order (name, type, version, relation, labels, input, access).
  const images = i.images.map((image) => {
    const { name, version: v } = imageResourceOf(image);
    return {
      name,
      type: 'ociArtifact',
      version: v,
      relation: 'external',
      labels: [{ name: 'scan.security.kyma-project.io/type', value: 'third-party-image', version: 'v1' }],
      access: { type: 'ociArtifact', imageReference: image.reference },
    };
  });
  return {
    components: [
      {
        name: config.name,
        version,
        provider: { name: 'kyma-project.io', labels: [BUILT_BY_MODULECTL] },
        labels: moduleLabels(config, i.clusterScoped),
        resources: [
          ...images,
          directoryTree('raw-manifest', i.manifestFile, version),
          ...(i.defaultCRFile ? [directoryTree('default-cr', i.defaultCRFile, version)] : []),
          { name: 'moduletemplate', type: 'PlainText', version, input: { type: 'file', path: i.templateFile } },
        ],
        sources: [
          {
            name: 'module-sources',
            type: 'Github',
            version,
            access: { type: 'gitHub', repoUrl: i.source.repoUrl, commit: i.source.commit },
          },
        ],
      },
    ],
  };
}
