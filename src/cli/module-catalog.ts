// klm module catalog: the modules a Kyma's namespace offers, from its ModuleTemplates (one per
// version) and ModuleReleaseMetas (which version each channel carries, or the mandatory one).
import type { ModuleReleaseMeta } from '../api/modulereleasemeta';
import type { ModuleTemplate } from '../api/moduletemplate';
import { API_VERSION, LABELS, type KubeObject } from '../api/shared';
import type { KubeClient } from '../k8s/rest-client';
import { table } from './output';

export interface CatalogEntry {
  name: string;
  versions: string[];
  /** channel → version; `mandatory` for a mandatory module. */
  channels: Record<string, string>;
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

export async function catalog(kube: KubeClient, namespace: string): Promise<CatalogEntry[]> {
  const [templates, metas] = await Promise.all([
    kube.list<Template>(API_VERSION, 'ModuleTemplate', { namespace }),
    kube.list<ReleaseMeta>(API_VERSION, 'ModuleReleaseMeta', { namespace }),
  ]);
  const entries = new Map<string, CatalogEntry>();
  const entry = (name: string) => {
    let e = entries.get(name);
    if (!e) entries.set(name, (e = { name, versions: [], channels: {}, beta: false, internal: false, origin: 'kyma' }));
    return e;
  };
  for (const t of templates.items) {
    if (!t.spec.moduleName || !t.spec.version) continue;
    const e = entry(t.spec.moduleName);
    e.versions.push(t.spec.version);
    e.beta ||= t.metadata.labels?.[LABELS.beta] === 'true';
    e.internal ||= t.metadata.labels?.[LABELS.internal] === 'true';
  }
  for (const m of metas.items) {
    const e = entry(m.spec.moduleName);
    for (const c of m.spec.channels ?? []) e.channels[c.channel] = c.version;
    if (m.spec.mandatory) e.channels.mandatory = m.spec.mandatory.version;
    e.beta ||= m.spec.beta === true;
    e.internal ||= m.spec.internal === true;
  }
  return [...entries.values()].map((e) => ({ ...e, versions: [...new Set(e.versions)].sort(byVersion) })).sort((a, b) => a.name.localeCompare(b.name));
}

function flagged(t: Template): { beta: boolean; internal: boolean } {
  return { beta: t.metadata.labels?.[LABELS.beta] === 'true', internal: t.metadata.labels?.[LABELS.internal] === 'true' };
}

/** Community modules: each one pulled into the cluster, then those of the community catalog, one entry per module. */
export function communityEntries(pulled: Template[], remote: Template[]): CatalogEntry[] {
  const fromCluster = pulled
    .map((t) => ({ name: t.spec.moduleName!, versions: [t.spec.version!], channels: {}, ...flagged(t), origin: `${t.metadata.namespace}/${t.metadata.name}` }))
    .sort((a, b) => a.name.localeCompare(b.name) || a.origin.localeCompare(b.origin));
  const byModule = new Map<string, CatalogEntry>();
  for (const t of remote) {
    const e = byModule.get(t.spec.moduleName!) ?? { name: t.spec.moduleName!, versions: [], channels: {}, beta: false, internal: false, origin: 'community' };
    e.versions.push(t.spec.version!);
    const f = flagged(t);
    e.beta ||= f.beta;
    e.internal ||= f.internal;
    byModule.set(e.name, e);
  }
  const fromCatalog = [...byModule.values()].map((e) => ({ ...e, versions: [...new Set(e.versions)].sort(byVersion) })).sort((a, b) => a.name.localeCompare(b.name));
  return [...fromCluster, ...fromCatalog];
}

export function catalogTable(entries: CatalogEntry[]): string {
  if (!entries.length) return 'no modules in this namespace';
  return table(['NAME', 'VERSIONS', 'CHANNELS', 'FLAGS', 'ORIGIN'], entries.map((e) => [
    e.name,
    e.versions.join(', ') || '-',
    Object.entries(e.channels).map(([c, v]) => `${c}: ${v}`).join(', ') || '-',
    [e.beta && 'beta', e.internal && 'internal'].filter(Boolean).join(', ') || '-',
    e.origin,
  ]));
}
