// klm module pull: a community module's ModuleTemplate from the community catalog into a
// namespace of the cluster (not kyma-system, which is the lifecycle manager's), as the Kyma CLI
// pulls it; `klm module add <namespace>/<template>` then installs it directly.
import { API_VERSION } from '../api/shared';
import type { KubeClient } from '../k8s/rest-client';
import type { Template } from './module-source';
import { highestVersion } from './module-templates';
import { Refused } from './output';

/** Whether `actual` holds everything `expected` does (the API server may add defaults). */
function holds(actual: unknown, expected: unknown): boolean {
  if (Array.isArray(expected))
    return Array.isArray(actual) && actual.length === expected.length && expected.every((e, i) => holds(actual[i], e));
  if (expected && typeof expected === 'object')
    return (
      !!actual &&
      typeof actual === 'object' &&
      Object.entries(expected).every(([k, v]) => holds((actual as Record<string, unknown>)[k], v))
    );
  return actual === expected;
}

export interface PullInput {
  module: string;
  namespace: string;
  version?: string;
  /** Replace a template of that name that differs from the catalog's. */
  force?: boolean;
  catalog: Template[];
  source: string;
}

export async function pull(kube: KubeClient, p: PullInput): Promise<string> {
  if (p.namespace === 'kyma-system')
    throw new Refused(
      'community modules are not pulled into kyma-system, which holds what the lifecycle manager offers; name another namespace with --namespace',
    );
  const versions = p.catalog.filter((t) => t.spec.moduleName === p.module);
  if (!versions.length)
    throw new Refused(
      `community module ${p.module} is not in the community catalog ${p.source}; \`klm module catalog --community-catalog ${p.source}\` lists what is`,
    );
  const version = p.version ?? highestVersion(versions.map((t) => t.spec.version!))!;
  const entry = versions.find((t) => t.spec.version === version);
  if (!entry)
    throw new Refused(
      `community module ${p.module} has no version "${version}" in the community catalog; it has: ${versions.map((t) => t.spec.version).join(', ')}`,
    );
  const { name, labels, annotations } = entry.metadata;
  const template: Template = {
    apiVersion: API_VERSION,
    kind: 'ModuleTemplate',
    metadata: { name, namespace: p.namespace, ...(labels ? { labels } : {}), ...(annotations ? { annotations } : {}) },
    spec: entry.spec,
  };
  const existing = await kube.get<Template>(API_VERSION, 'ModuleTemplate', name, p.namespace);
  if (existing && holds(existing.spec, entry.spec))
    return `ModuleTemplate ${p.namespace}/${name} is pulled already: nothing to do`;
  if (existing && !p.force)
    throw new Refused(
      `ModuleTemplate ${p.namespace}/${name} exists and differs from the community catalog's; --force replaces it`,
    );
  await kube.apply(template);
  return (
    `pulled ${p.module} ${version} into ModuleTemplate ${p.namespace}/${name}; install it with ` +
    `\`klm module add ${p.namespace}/${name}\` (a community module: no support from the Kyma ` +
    `team)`
  );
}
