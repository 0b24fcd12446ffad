// klm module catalog: the modules a Kyma's namespace offers, from its ModuleTemplates (one per
// version) and ModuleReleaseMetas (which version each channel carries, or the mandatory one), as
// the Kyma may use them: the worker's own decisions say which templates it may see (visibility)
// and whether each channel's version can be installed (resolution).
import type { Kyma } from '../api/kyma';
import type { ModuleReleaseMeta } from '../api/modulereleasemeta';
import type { ModuleTemplate } from '../api/moduletemplate';
import { API_VERSION, type KubeObject } from '../api/shared';
import type { Visibility } from '../contract/kyma';
import type { Readiness } from '../contract/readiness';
import { listedCatalog, resolveModule, type ModuleCatalog } from '../decisions/resolution';
import { kymaVisibility, missingLabel, visibilityOf } from '../decisions/visibility';
import type { KubeClient } from '../k8s/rest-client';
import { table } from './output';

export interface CatalogEntry {
  name: string;
  versions: string[];
  /** channel → version; `mandatory` for a mandatory module. */
  channels: Record<string, string>;
  /** Channels whose version the Kyma cannot install, with the worker's reason and message (no template, say). */
  channelProblems?: Record<string, Readiness>;
  beta: boolean;
  internal: boolean;
  /**
   * `kyma`: offered by the lifecycle manager (added to the Kyma); `<namespace>/<template>`: a
   * community module pulled into the cluster (`klm module add <namespace>/<template>` installs
   * it directly); `community`: in the community catalog, not pulled yet (`klm module pull`).
   */
  origin: string;
}

type Template = ModuleTemplate & KubeObject;
type ReleaseMeta = ModuleReleaseMeta & KubeObject;

/** The ModuleTemplates and ModuleReleaseMetas of a namespace, as resolution reads them. */
export interface CatalogObjects {
  namespace: string;
  templates: Template[];
  metas: ReleaseMeta[];
}

export async function catalogObjects(kube: KubeClient, namespace: string): Promise<CatalogObjects> {
  const [templates, metas] = await Promise.all([
    kube.list<Template>(API_VERSION, 'ModuleTemplate', { namespace }),
    kube.list<ReleaseMeta>(API_VERSION, 'ModuleReleaseMeta', { namespace }),
  ]);
  return { namespace, templates: templates.items, metas: metas.items };
}

/** The objects as the worker's resolution looks them up. */
export function resolutionCatalog(o: CatalogObjects): ModuleCatalog {
  return listedCatalog(o.namespace, o.templates, o.metas);
}

/** Versions in semantic order where they are semantic, else as strings. */
function byVersion(a: string, b: string): number {
  const pa = a.split(/[.-]/).map(Number);
  const pb = b.split(/[.-]/).map(Number);
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const x = pa[i] ?? 0;
    const y = pb[i] ?? 0;
    if (Number.isNaN(x) || Number.isNaN(y)) return a.localeCompare(b);
    if (x !== y) return x - y;
  }
  return 0;
}

/** What a Kyma may see: its labels; without a Kyma, everything (labelled templates are flagged). */
const SEES_ALL: Visibility = { beta: true, internal: true };

/**
 * The managed modules of the namespace as `kyma` may use them (without a Kyma: all of them):
 * templates it may not see are left out, and a module with none left is not offered; each
 * channel whose version it could not install says why, as the worker would.
 */
export async function catalogEntries(o: CatalogObjects, kyma?: Kyma): Promise<CatalogEntry[]> {
  const visibility = kyma ? kymaVisibility(kyma) : SEES_ALL;
  const entries = new Map<string, CatalogEntry>();
  const hidden = new Set<string>();
  const entry = (name: string) => {
    let e = entries.get(name);
    if (!e) entries.set(name, (e = { name, versions: [], channels: {}, beta: false, internal: false, origin: 'kyma' }));
    return e;
  };
  for (const t of o.templates) {
    if (!t.spec.moduleName || !t.spec.version) continue;
    const needs = visibilityOf(t.metadata.labels);
    if (missingLabel(needs, visibility)) {
      hidden.add(t.spec.moduleName);
      continue;
    }
    const e = entry(t.spec.moduleName);
    e.versions.push(t.spec.version);
    e.beta ||= needs.beta;
    e.internal ||= needs.internal;
  }
  for (const m of o.metas) {
    // A module whose every template the Kyma may not see is not offered to it.
    if (hidden.has(m.spec.moduleName) && !entries.has(m.spec.moduleName)) continue;
    const e = entry(m.spec.moduleName);
    for (const c of m.spec.channels ?? []) e.channels[c.channel] = c.version;
    if (m.spec.mandatory) e.channels.mandatory = m.spec.mandatory.version;
    e.beta ||= m.spec.beta === true;
    e.internal ||= m.spec.internal === true;
  }
  const resolution = resolutionCatalog(o);
  const done = await Promise.all(
    [...entries.values()].map(async (e): Promise<CatalogEntry> => {
      const problems: Record<string, Readiness> = {};
      for (const channel of Object.keys(e.channels)) {
        const r = await resolveModule(
          { name: e.name, channel, customResourcePolicy: 'CreateAndDelete', managed: true },
          channel,
          resolution,
          visibility,
        );
        if (r.failure) problems[channel] = r.failure;
      }
      return {
        ...e,
        versions: [...new Set(e.versions)].sort(byVersion),
        ...(Object.keys(problems).length ? { channelProblems: problems } : {}),
      };
    }),
  );
  return done.sort((a, b) => a.name.localeCompare(b.name));
}

/** The catalog of the namespace as `kyma` may use it (see catalogEntries). */
export async function catalog(kube: KubeClient, namespace: string, kyma?: Kyma): Promise<CatalogEntry[]> {
  return await catalogEntries(await catalogObjects(kube, namespace), kyma);
}

/** Community modules: each one pulled into the cluster, then those of the community catalog, one entry per module. */
export function communityEntries(pulled: Template[], remote: Template[]): CatalogEntry[] {
  const fromCluster = pulled
    .map((t) => ({
      name: t.spec.moduleName!,
      versions: [t.spec.version!],
      channels: {},
      ...visibilityOf(t.metadata.labels),
      origin: `${t.metadata.namespace}/${t.metadata.name}`,
    }))
    .sort((a, b) => a.name.localeCompare(b.name) || a.origin.localeCompare(b.origin));
  const byModule = new Map<string, CatalogEntry>();
  for (const t of remote) {
    const e = byModule.get(t.spec.moduleName!) ?? {
      name: t.spec.moduleName!,
      versions: [],
      channels: {},
      beta: false,
      internal: false,
      origin: 'community',
    };
    e.versions.push(t.spec.version!);
    const f = visibilityOf(t.metadata.labels);
    e.beta ||= f.beta;
    e.internal ||= f.internal;
    byModule.set(e.name, e);
  }
  const fromCatalog = [...byModule.values()]
    .map((e) => ({ ...e, versions: [...new Set(e.versions)].sort(byVersion) }))
    .sort((a, b) => a.name.localeCompare(b.name));
  return [...fromCluster, ...fromCatalog];
}

/** A channel's problem in a word or two, beside its version (the JSON output has the worker's message). */
function mark(p: Readiness): string {
  const words: Partial<Record<Readiness['reason'], string>> = {
    TemplateNotFound: 'no template',
    TemplateVersionMismatch: 'template of another version',
    ModuleNotVisible: 'not visible to this Kyma',
    InvalidVersion: 'not a semantic version',
  };
  return words[p.reason] ?? p.reason;
}

/**
 * The entries as `-o json|yaml` prints them: the Kyma CLI's field `availableVersions` (each
 * version with the channels that carry it: `1.0.0(regular), 1.1.0(fast)`) beside klm's own.
 */
export function withKymaCliFields(entries: CatalogEntry[]): (CatalogEntry & { availableVersions: string })[] {
  return entries.map((e) => ({
    ...e,
    availableVersions: e.versions
      .map((v) => {
        const channels = Object.keys(e.channels).filter((c) => e.channels[c] === v);
        return channels.length ? channels.map((c) => `${v}(${c})`).join(', ') : v;
      })
      .join(', '),
  }));
}

/** klm's columns; an empty catalog is the header alone, as the Kyma CLI prints its own. */
export function catalogTable(entries: CatalogEntry[]): string {
  return table(
    ['NAME', 'VERSIONS', 'CHANNELS', 'FLAGS', 'ORIGIN'],
    entries.map((e) => [
      e.name,
      e.versions.join(', ') || '-',
      Object.entries(e.channels)
        .map(([c, v]) => `${c}: ${v}${e.channelProblems?.[c] ? ` (${mark(e.channelProblems[c])})` : ''}`)
        .join(', ') || '-',
      [e.beta && 'beta', e.internal && 'internal'].filter(Boolean).join(', ') || '-',
      e.origin,
    ]),
  );
}
