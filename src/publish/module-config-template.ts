// The ModuleTemplate modulectl 3.2.0 writes for a module config
// (internal/service/templategenerator): named `<module>-<version>`, `descriptor: {}` (the
// lifecycle manager finds the component through the ModuleReleaseMeta's ocmComponentName in its
// configured registry). modulectl renders maps with Go templates, which order them by key:
// labels, annotations, icons and resources come out sorted by name, as here.
import { API_VERSION, LABELS, type KubeObject } from '../api/shared';
import { IS_CLUSTER_SCOPED } from './cluster-scope';
import { shortName, type ModuleConfig, type NameLink } from './module-config';

export interface TemplateInputs {
  /** The default CR, parsed (the template's spec.data). */
  defaultCR?: Record<string, unknown>;
  clusterScoped: boolean;
  /** modulectl writes "": the namespace is given when the template is applied. */
  namespace: string;
}

function sortedByKey(m: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(m).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

function sortedByName(entries: NameLink[]): NameLink[] {
  return Object.entries(Object.fromEntries(entries.map((e) => [e.name, e.link])))
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([name, link]) => ({ name, link }));
}

export function moduleTemplateOf(config: ModuleConfig, o: TemplateInputs): KubeObject {
  const module = shortName(config.name);
  const labels = {
    ...config.labels,
    ...(config.beta ? { [LABELS.beta]: 'true' } : {}),
    ...(config.internal ? { [LABELS.internal]: 'true' } : {}),
    [LABELS.moduleName]: module,
  };
  const annotations = { ...config.annotations, [IS_CLUSTER_SCOPED]: String(o.clusterScoped) };
  // A manifest given as a URL is offered as the resource rawManifest; a resource of that name in the config wins.
  const resources = sortedByName([
    ...('url' in config.manifest ? [{ name: 'rawManifest', link: config.manifest.url }] : []),
    ...config.resources,
  ]);
  return {
    apiVersion: API_VERSION,
    kind: 'ModuleTemplate',
    metadata: {
      name: `${module}-${config.version}`,
      namespace: o.namespace,
      labels: sortedByKey(labels),
      annotations: sortedByKey(annotations),
    },
    spec: {
      moduleName: module,
      version: config.version,
      requiresDowntime: config.requiresDowntime,
      info: { repository: config.repository, documentation: config.documentation, icons: sortedByName(config.icons) },
      ...(config.associatedResources.length ? { associatedResources: config.associatedResources } : {}),
      ...(o.defaultCR ? { data: o.defaultCR } : {}),
      ...(config.manager ? { manager: config.manager } : {}),
      descriptor: {},
      ...(resources.length ? { resources } : {}),
    },
  };
}
