// Deterministic names and ids derived from a Kyma and a module (pure: used by workflows too).
export function manifestName(kyma: string, module: string): string {
  return `${kyma}-${module}`;
}

export function kymaWorkflowId(namespace: string, name: string): string {
  return `kyma/${namespace}/${name}`;
}

/** How the bridge names one module of a Kyma: its Kyma's workflow id, then `/module/<module>`. */
export function moduleKey(namespace: string, kyma: string, module: string): string {
  return `${kymaWorkflowId(namespace, kyma)}/module/${module}`;
}

/** The Kyma (and module) of a Kyma's workflow id or a module key, the inverse of the two above; undefined for other ids. */
export function parseKymaKey(key: string): { namespace: string; name: string; module?: string } | undefined {
  const m = /^kyma\/([^/]+)\/([^/]+)(?:\/module\/([^/]+))?$/.exec(key);
  if (!m) return undefined;
  return { namespace: m[1]!, name: m[2]!, ...(m[3] ? { module: m[3] } : {}) };
}

/** The annotation that ties an object in a target cluster back to its Kyma and module. */
export const OWNED_BY_ANNOTATION = 'operator.kyma-project.io/owned-by';

/**
 * On an object a module's manifest ships that was in the cluster before the module's first apply
 * (a user's namespace, say): the labels and annotations it had then, as JSON. Such an object is
 * never deleted: on removal it gets them back.
 */
export const FOUND_ANNOTATION = 'operator.kyma-project.io/found-metadata';

/**
 * On a Kyma, set by a person: the number of the last switch of its kubeconfig Secret to another
 * cluster whose left-behind objects they took care of. The condition `TargetCluster` names each
 * switch with its number; those up to this one are cleared.
 */
export const OLD_CLUSTERS_CLEARED_ANNOTATION = 'operator.kyma-project.io/old-clusters-cleared';

export function ownedBy(namespace: string, kyma: string, module: string): string {
  return `${namespace}/${kyma}/${module}`;
}

export function parseOwnedBy(
  value: string | undefined,
): { namespace: string; kyma: string; module: string } | undefined {
  const parts = value?.split('/');
  if (parts?.length !== 3 || parts.some((p) => !p)) return undefined;
  return { namespace: parts[0]!, kyma: parts[1]!, module: parts[2]! };
}

/**
 * The namespace for a Kyma's namespaced objects that name none. "{kyma}" in the setting
 * becomes the Kyma's name, so that several Kymas can share one target cluster (tests,
 * benchmarks) without sharing their modules' namespaced objects.
 */
export function defaultNamespaceFor(setting: string, kyma: string): string {
  return setting.replaceAll('{kyma}', kyma);
}

/** An object as people name it: `Kind namespace/name` (`Kind name` without a namespace). */
export function describeObject(kind: string, name: string, namespace?: string): string {
  return `${kind} ${namespace ? `${namespace}/` : ''}${name}`;
}

/** On a Manifest: the module's CR kind as `<apiVersion>/<kind>`, whatever the CR policy. */
export const RESOURCE_KIND_ANNOTATION = 'operator.kyma-project.io/resource-kind';

/** On a Manifest: the paths of its CR that the template's customStateCheck reads, comma-separated (the bridge follows them). */
export const STATE_PATHS_ANNOTATION = 'operator.kyma-project.io/state-paths';

/** On what klm's direct install applied: the module version whose manifest it came from. */
export const MODULE_VERSION_ANNOTATION = 'operator.kyma-project.io/module-version';
