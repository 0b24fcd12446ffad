// Community modules: the community catalog (a file or URL in the format of the Kyma
// community-modules index, all-modules.json: a JSON array of ModuleTemplates; its YAML twin,
// one template per document, is read too), and the community modules pulled into a cluster
// (ModuleTemplates outside the Kyma's namespace with no ModuleReleaseMeta of their module beside
// them: the lifecycle manager offers a module only through one).
import { readFile } from 'node:fs/promises';
import { parseAllDocuments } from 'yaml';
import type { ModuleReleaseMeta } from '../api/modulereleasemeta';
import { API_VERSION, type KubeObject } from '../api/shared';
import type { KubeClient } from '../k8s/rest-client';
import { download, type Template } from './module-source';
import { Refused } from './output';

/** Where the Kyma CLI reads the community modules from. */
export const DEFAULT_COMMUNITY_CATALOG = 'https://kyma-project.github.io/community-modules/all-modules.json';

function entriesOf(text: string, source: string): unknown[] {
  const trimmed = text.trimStart();
  if (trimmed.startsWith('[')) {
    try {
      return JSON.parse(trimmed) as unknown[];
    } catch {
      throw new Refused(`the community catalog ${source} is not valid JSON`);
    }
  }
  const docs = parseAllDocuments(text);
  if (docs.some((d) => d.errors.length))
    throw new Refused(`the community catalog ${source} is neither a JSON array nor YAML documents`);
  return docs
    .map((d) => d.toJS() as unknown)
    .flatMap((d): unknown[] => (Array.isArray(d) ? (d as unknown[]) : d === null ? [] : [d]));
}

/** The templates of a community catalog (a file path, or an http(s) URL); an entry that is no module version is named and refused. */
export async function readCommunityCatalog(source: string): Promise<Template[]> {
  let text: string;
  if (/^https?:\/\//i.test(source)) text = await download(source, 'the community catalog');
  else {
    try {
      text = await readFile(source, 'utf8');
    } catch {
      throw new Refused(
        `the community catalog ${source} cannot be read: name a file or an http(s) URL with --community-catalog`,
      );
    }
  }
  const entries = entriesOf(text, source);
  const problems: string[] = [];
  entries.forEach((e, i) => {
    const t = e as Partial<Template> | null;
    const missing = [
      t?.kind !== 'ModuleTemplate' && 'kind: ModuleTemplate',
      !t?.metadata?.name && 'metadata.name',
      !t?.spec?.moduleName && 'spec.moduleName',
      !t?.spec?.version && 'spec.version',
    ].filter(Boolean);
    if (missing.length)
      problems.push(`entry ${i + 1}${t?.metadata?.name ? ` (${t.metadata.name})` : ''} lacks ${missing.join(', ')}`);
  });
  if (problems.length)
    throw new Refused(
      `the community catalog ${source} holds entries that are no module versions: ${problems.join('; ')}`,
    );
  return entries as Template[];
}

/** The community modules pulled into the cluster: templates outside `catalogNamespace` whose namespace has no ModuleReleaseMeta of their module. */
export async function pulledTemplates(kube: KubeClient, catalogNamespace: string): Promise<Template[]> {
  const [templates, metas] = await Promise.all([
    kube.list<Template>(API_VERSION, 'ModuleTemplate'),
    kube.list<ModuleReleaseMeta & KubeObject>(API_VERSION, 'ModuleReleaseMeta'),
  ]);
  const released = new Set(metas.items.map((m) => `${m.metadata.namespace}/${m.spec.moduleName}`));
  return templates.items.filter(
    (t) =>
      t.metadata.namespace !== catalogNamespace &&
      t.spec.moduleName &&
      t.spec.version &&
      !released.has(`${t.metadata.namespace}/${t.spec.moduleName}`),
  );
}
