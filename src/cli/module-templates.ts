// Which ModuleTemplate a direct install uses: a community module by its `namespace/template`
// (as the Kyma CLI names them, once pulled), a module of the catalog by name and a version, a
// channel of its ModuleReleaseMeta, or its highest version.
import semver from 'semver';
import type { ModuleReleaseMeta } from '../api/modulereleasemeta';
import { API_VERSION, type KubeObject } from '../api/shared';
import type { KubeClient } from '../k8s/rest-client';
import type { Template } from './module-source';
import { Refused } from './output';

/** `namespace/template`: a community module pulled into the cluster. */
export function isCommunityName(name: string): boolean {
  return name.includes('/');
}

export async function communityTemplate(kube: KubeClient, name: string): Promise<Template> {
  const [namespace, templateName, ...rest] = name.split('/');
  if (!namespace || !templateName || rest.length)
    throw new Refused(
      `"${name}" is no community module: name one as namespace/template (\`klm module catalog\` lists them)`,
    );
  const template = await kube.get<Template>(API_VERSION, 'ModuleTemplate', templateName, namespace);
  if (!template)
    throw new Refused(
      `there is no ModuleTemplate ${name}; \`klm module pull <module> --namespace ${namespace}\` brings a community module's template into the cluster`,
    );
  if (!template.spec.moduleName || !template.spec.version)
    throw new Refused(
      `ModuleTemplate ${name} names no spec.moduleName and spec.version: it is no module version klm can install`,
    );
  return template;
}

/** The highest of `versions`, releases before pre-releases. */
export function highestVersion(versions: string[]): string | undefined {
  const valid = versions.filter((v) => semver.valid(v));
  const releases = valid.filter((v) => !semver.prerelease(v));
  return (releases.length ? releases : valid).sort(semver.rcompare)[0] ?? versions.sort().at(-1);
}

export interface Wanted {
  version?: string;
  channel?: string;
}

/** The catalog's template of `module` for the version or channel asked (the highest version when the module has no ModuleReleaseMeta). */
export async function catalogTemplate(
  kube: KubeClient,
  namespace: string,
  module: string,
  wanted: Wanted,
  defaultChannel: string,
): Promise<Template> {
  const { items } = await kube.list<Template>(API_VERSION, 'ModuleTemplate', { namespace });
  const templates = items.filter((t) => t.spec.moduleName === module && t.spec.version);
  if (!templates.length)
    throw new Refused(
      `module "${module}" is not in the catalog of namespace ${namespace}; \`klm module catalog\` lists what is`,
    );
  const versions = templates.map((t) => t.spec.version!);
  let version = wanted.version;
  if (!version) {
    const meta = await kube.get<ModuleReleaseMeta & KubeObject>(API_VERSION, 'ModuleReleaseMeta', module, namespace);
    const channel = wanted.channel ?? defaultChannel;
    if (meta) {
      version = meta.spec.channels?.find((c) => c.channel === channel)?.version;
      if (!version)
        throw new Refused(
          `module ${module} has no version on channel "${channel}"; it has: ` +
            `${(meta.spec.channels ?? []).map((c) => c.channel).join(', ') || 'none'} (--channel), or ` +
            `name a version with --version`,
        );
    } else {
      if (wanted.channel)
        throw new Refused(
          `module ${module} has no channels (no ModuleReleaseMeta ${namespace}/${module}); name a version with --version (${versions.join(', ')})`,
        );
      version = highestVersion(versions)!;
    }
  }
  const template = templates.find((t) => t.spec.version === version);
  if (!template) throw new Refused(`module ${module} has no version "${version}"; it has: ${versions.join(', ')}`);
  return template;
}
