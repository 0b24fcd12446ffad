// The manager of a manifest: the workload whose rollout tells whether the module runs.
import type { KubeObject, ObjectRef } from '../api/shared';

/**
 * The manager workload: the template's spec.manager (a Deployment or StatefulSet, so namespaced:
 * one that names no namespace is where the manifest's objects without one went), else the
 * manifest's first Deployment or StatefulSet.
 */
export function managerOf(
  objects: KubeObject[],
  declared: ObjectRef | undefined,
  defaultNamespace: string,
): ObjectRef | undefined {
  if (declared) return declared.namespace ? declared : { ...declared, namespace: defaultNamespace };
  const w = objects.find((o) => o.apiVersion === 'apps/v1' && (o.kind === 'Deployment' || o.kind === 'StatefulSet'));
  return (
    w && {
      group: 'apps',
      version: 'v1',
      kind: w.kind,
      name: w.metadata.name,
      ...(w.metadata.namespace ? { namespace: w.metadata.namespace } : {}),
    }
  );
}
