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
  const wanted: { version: string; meta?: ModuleReleaseMeta } | { failure: Readiness } = m.version
    ? { version: m.version }
    : await channelVersion(m.name, channel, catalog);
  if ('failure' in wanted) return failed(wanted.failure);
  const { version, meta } = wanted;
  if (!valid(version))
    return failed({ reason: 'InvalidVersion', message: `module "${m.name}": "${version}" is not a semantic version` });
  const name = templateName(m.name, version);
  const template = await catalog.template(name);
  const problem = templateProblem(m, template, { channel, version, namespace, name }, visibility);
  if (problem) return failed(problem, version);
  // The component: named by the descriptor, else (`descriptor: {}`, modulectl 2.3 and later) by
  // the ModuleReleaseMeta's ocmComponentName.
  const descriptor = template!.spec.descriptor as { component?: { name?: string } } | undefined;
  const fqdn = descriptor?.component?.name ?? (meta ?? (await catalog.releaseMeta(m.name)))?.spec.ocmComponentName;
  return { name: m.name, module: resolvedModule(m, template!, { channel, version, name, namespace, fqdn }) };
}

/** The version a channel maps to (or the mandatory one) in the module's ModuleReleaseMeta, and that meta; or why there is none. */
async function channelVersion(
  module: string,
  channel: string,
  catalog: ModuleCatalog,
): Promise<{ version: string; meta: ModuleReleaseMeta } | { failure: Readiness }> {
  const { namespace } = catalog;
  const meta = await catalog.releaseMeta(module);
  if (!meta)
    return {
      failure: {
        reason: 'ModuleNotFound',
        message: `module "${module}" is unknown: no ModuleReleaseMeta "${module}" in namespace "${namespace}"`,
      },
    };
  const version = meta.spec.mandatory?.version ?? meta.spec.channels?.find((c) => c.channel === channel)?.version;
  if (version) return { version, meta };
  const known = (meta.spec.channels ?? []).map((c) => c.channel).join(', ') || 'none';
  return {
    failure: {
      reason: 'ChannelNotFound',
      message: `module "${module}" has no version for channel "${channel}" in ModuleReleaseMeta ${namespace}/${module} (channels: ${known})`,
    },
  };
}

/** Why the template (`namespace/name`) of the version resolved cannot be installed: missing, of another version, or not visible to the Kyma. */
function templateProblem(
  m: SpecModule,
  template: ModuleTemplate | undefined,
  r: { channel: string; version: string; namespace: string; name: string },
  visibility: Visibility | undefined,
): Readiness | undefined {
  const { namespace, name } = r;
  const ref = `${namespace}/${name}`;
  if (!template) {
    const why = m.version ? `pinned version ${r.version}` : `version ${r.version} of channel "${r.channel}"`;
    return {
      reason: 'TemplateNotFound',
      message: `module "${m.name}": no ModuleTemplate "${name}" in namespace "${namespace}" for ${why}`,
    };
  }
  if (template.spec.version && !satisfies(template.spec.version, `=${r.version}`))
    return {
      reason: 'TemplateVersionMismatch',
      message: `ModuleTemplate ${ref} describes version ${template.spec.version}, not ${r.version}`,
    };
  const hidden = visibilityProblem(template, visibility, ref);
  return hidden && { ...hidden, message: `module "${m.name}": ${hidden.message}` };
}

/** The module resolved to `template` of `r.version`. */
function resolvedModule(
  m: SpecModule,
  template: ModuleTemplate,
  r: { channel: string; version: string; name: string; namespace: string; fqdn: string | undefined },
): ResolvedModule {
  // A template that names another module is installed all the same, as upstream does; the Kyma says so.
  const templateModuleName =
    template.spec.moduleName && template.spec.moduleName !== m.name ? template.spec.moduleName : undefined;
  const labelProblems = templateLabelProblems(template.metadata.labels);
  return {
    name: m.name,
    channel: m.version ? (m.channel ?? '') : r.channel,
    version: r.version,
    customResourcePolicy: m.customResourcePolicy,
    template: { name: r.name, namespace: r.namespace, generation: template.metadata.generation ?? 0 },
    ...(r.fqdn ? { fqdn: r.fqdn } : {}),
    ...(m.mandatory ? { mandatory: true } : {}),
    ...(templateModuleName ? { templateModuleName } : {}),
    ...(labelProblems.length ? { templateLabelProblems: labelProblems } : {}),
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
