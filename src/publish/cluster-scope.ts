// Whether a module's default CR is of a kind its manifest declares cluster-scoped, as modulectl
// tells it (internal/service/crdparser): the CRD of the CR's group and kind has scope Cluster.
// modulectl records the answer on the ModuleTemplate (annotation) and on the component (label).

/** Upstream's shared.IsClusterScopedAnnotation. */
export const IS_CLUSTER_SCOPED = 'operator.kyma-project.io/is-cluster-scoped';

interface Crd {
  kind?: unknown;
  spec?: { group?: unknown; scope?: unknown; names?: { kind?: unknown } };
}

/** `manifest`: the manifest's objects; no default CR: not cluster-scoped. */
export function defaultCrIsClusterScoped(manifest: unknown[], defaultCR: Record<string, unknown> | undefined): boolean {
  if (!defaultCR) return false;
  const group = typeof defaultCR.apiVersion === 'string' ? defaultCR.apiVersion.split('/')[0] : undefined;
  const crd = (manifest as (Crd | null)[]).find(
    (o) => o?.kind === 'CustomResourceDefinition' && o.spec?.group === group && o.spec?.names?.kind === defaultCR.kind,
  );
  return crd?.spec?.scope === 'Cluster';
}
