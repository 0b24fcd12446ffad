// Module resolution, as upstream: the channel is the module's own, else the Kyma's, else
// "regular"; the version is a pin, else the ModuleReleaseMeta's for that channel (or its
// mandatory version); the ModuleTemplate is `<module>-<version>` in the Kyma's namespace. A
// module that cannot be resolved gets a typed reason and a message that says what is missing.
import { satisfies, valid } from 'semver';
import type { KymaEvent } from '../api/events';
import type { ModuleReleaseMeta } from '../api/modulereleasemeta';
import type { ModuleTemplate } from '../api/moduletemplate';
import { effectiveChannel } from '../api/shared';
import type { SpecModule, Visibility } from '../contract/kyma';
import type { Resolution, ResolvedModule } from '../contract/module';
import type { Readiness } from '../contract/readiness';
import { templateLabelProblems } from './label-values';
import { moduleNameProblem } from './names';
import { visibilityProblem } from './visibility';

/** Where resolution looks things up (the Kyma's namespace): API reads today, caches later. */
export interface ModuleCatalog {
  readonly namespace: string;
  releaseMeta(name: string): Promise<ModuleReleaseMeta | undefined>;
  template(name: string): Promise<ModuleTemplate | undefined>;
}

function templateName(module: string, version: string): string {
  return `${module}-${version}`;
}

/** A catalog over objects already listed (the command line's): templates and release metas by name. */
export function listedCatalog(
  namespace: string,
  templates: readonly ModuleTemplate[],
  metas: readonly ModuleReleaseMeta[],
): ModuleCatalog {
  const byName = <T extends { metadata: { name: string } }>(items: readonly T[]) =>
    new Map(items.map((o) => [o.metadata.name, o]));
  const t = byName(templates);
  const m = byName(metas);
  return {
    namespace,
    releaseMeta: (name) => Promise.resolve(m.get(name)),
    template: (name) => Promise.resolve(t.get(name)),
  };
}

export async function resolveModule(
  m: SpecModule,
  kymaChannel: string,
  catalog: ModuleCatalog,
  visibility?: Visibility,
): Promise<Resolution> {
  const channel = effectiveChannel(m.channel, kymaChannel);
  const { namespace } = catalog;
  const failed = (failure: Readiness, version?: string): Resolution => ({
    name: m.name,
    failure,
    channel,
    ...(version ? { version } : {}),
  });
  const invalid = moduleNameProblem(m.name);
  if (invalid) return failed(invalid);
  let version = m.version;
  let meta: ModuleReleaseMeta | undefined;
  if (!version) {
    meta = await catalog.releaseMeta(m.name);
    if (!meta)
      return failed({
        reason: 'ModuleNotFound',
        message: `module "${m.name}" is unknown: no ModuleReleaseMeta "${m.name}" in namespace "${namespace}"`,
      });
    version = meta.spec.mandatory?.version ?? meta.spec.channels?.find((c) => c.channel === channel)?.version;
    if (!version) {
      const known = (meta.spec.channels ?? []).map((c) => c.channel).join(', ') || 'none';
      return failed({
        reason: 'ChannelNotFound',
        message: `module "${m.name}" has no version for channel "${channel}" in ModuleReleaseMeta ${namespace}/${m.name} (channels: ${known})`,
      });
    }
  }
  if (!valid(version))
    return failed({ reason: 'InvalidVersion', message: `module "${m.name}": "${version}" is not a semantic version` });
  const name = templateName(m.name, version);
  const template = await catalog.template(name);
  if (!template) {
    const why = m.version ? `pinned version ${version}` : `version ${version} of channel "${channel}"`;
    return failed(
      {
        reason: 'TemplateNotFound',
        message: `module "${m.name}": no ModuleTemplate "${name}" in namespace "${namespace}" for ${why}`,
      },
      version,
    );
  }
  if (template.spec.version && !satisfies(template.spec.version, `=${version}`)) {
    return failed(
      {
        reason: 'TemplateVersionMismatch',
        message: `ModuleTemplate ${namespace}/${name} describes version ${template.spec.version}, not ${version}`,
      },
      version,
    );
  }
  const hidden = visibilityProblem(template, visibility, `${namespace}/${name}`);
  if (hidden) return failed({ ...hidden, message: `module "${m.name}": ${hidden.message}` }, version);
  // The component: named by the descriptor, else (`descriptor: {}`, modulectl 2.3 and later) by
  // the ModuleReleaseMeta's ocmComponentName.
  const descriptor = template.spec.descriptor as { component?: { name?: string } } | undefined;
  const fqdn = descriptor?.component?.name ?? (meta ?? (await catalog.releaseMeta(m.name)))?.spec.ocmComponentName;
  // A template that names another module is installed all the same, as upstream does; the Kyma says so.
  const templateModuleName =
    template.spec.moduleName && template.spec.moduleName !== m.name ? template.spec.moduleName : undefined;
  const labelProblems = templateLabelProblems(template.metadata.labels);
  return {
    name: m.name,
    module: {
      name: m.name,
      channel: m.version ? (m.channel ?? '') : channel,
      version,
      customResourcePolicy: m.customResourcePolicy,
      template: { name, namespace, generation: template.metadata.generation ?? 0 },
      ...(fqdn ? { fqdn } : {}),
      ...(m.mandatory ? { mandatory: true } : {}),
      ...(templateModuleName ? { templateModuleName } : {}),
      ...(labelProblems.length ? { templateLabelProblems: labelProblems } : {}),
    },
  };
}

/** The short note a module's status carries while its template names another module. */
export function moduleNameNote(module: ResolvedModule): string | undefined {
  const other = module.templateModuleName;
  if (other === undefined) return undefined;
  return `ModuleTemplate ${module.template.namespace}/${module.template.name} says spec.moduleName "${other}", not "${module.name}"`;
}

/**
 * The Warning Event for a module whose template names another module in spec.moduleName, once
 * per template generation: none when `before` (what the module was told last) was
 * that very generation already.
 */
export function moduleNameMismatchEvent(
  module: ResolvedModule,
  before: ResolvedModule | undefined,
): KymaEvent | undefined {
  const note = moduleNameNote(module);
  if (!note) return undefined;
  const t = module.template;
  if (
    before &&
    before.templateModuleName === module.templateModuleName &&
    before.template.name === t.name &&
    before.template.generation === t.generation
  )
    return undefined;
  return {
    type: 'Warning',
    reason: 'ModuleNameMismatch',
    message:
      `module ${module.name}: ${note} (generation ${t.generation}); it is installed as module ` +
      `${module.name} all the same, as upstream does. Set spec.moduleName: ${module.name} in the ` +
      `template, or, if it is module ${module.templateModuleName}'s, publish it as ` +
      `${module.templateModuleName}-${module.version}`,
  };
}
