// Readiness: reads what decides it (the Manifest's pause label, the manager workload, the
// default CR; those the bridge's watch told of already are not read again; the manager's pods
// when asked to explain a rollout that does not complete) and lets the pure evaluation
// (src/decisions/readiness.ts) decide.
import { idOf, objectKey } from '../api/object-id';
import { apiVersionOf, type KubeObject, type ObjectRef } from '../api/shared';
import type { DefaultCrRef } from '../contract/artifacts';
import type { KymaRef } from '../contract/kyma';
import type { SeenVersions } from '../contract/seen-versions';
import type { ObservedObject, ReadinessCheck } from '../contract/readiness';
import { evaluateReadiness, readinessView } from '../decisions/readiness';
import type { PodView } from '../decisions/pods';
import { workloadRollout, type WorkloadView } from '../decisions/workload';
import type { KubeClient } from '../k8s/rest-client';
import type { TargetClusters } from '../k8s/target-cluster';
import { onTarget } from './target';

export interface CheckReadinessInput {
  kyma: KymaRef;
  module: string;
  /** What the module was told of (the Manifest's version): the cache must have caught up with it. */
  seen?: SeenVersions;
  /** The manager and the CR as the bridge's watch last saw them: not read again. */
  observed?: { manager?: ObservedObject; cr?: ObservedObject };
  manager?: ObjectRef;
  cr?: DefaultCrRef;
  /** The manager's rollout has not completed for a while: read its pods to tell why. */
  inspectPods?: boolean;
}

export function readinessActivities(
  targets: TargetClusters,
  manifestPaused: (input: { kyma: KymaRef; module: string; seen?: SeenVersions }) => Promise<boolean>,
) {
  return {
    async checkReadiness({
      kyma,
      module,
      seen,
      observed,
      manager,
      cr,
      inspectPods,
    }: CheckReadinessInput): Promise<ReadinessCheck> {
      if (await manifestPaused({ kyma, module, ...(seen ? { seen } : {}) })) return evaluateReadiness({ paused: true });
      const { workload, resource, read } = await liveObjects(targets, { kyma, observed, manager, cr });
      const pods =
        inspectPods && manager && workload ? await podsOf(targets, kyma, manager, workload as WorkloadView) : undefined;
      return {
        ...evaluateReadiness({
          paused: false,
          ...(manager
            ? { manager: { ref: manager, live: workload as WorkloadView | undefined, ...(pods ? { pods } : {}) } }
            : {}),
          ...(cr ? { cr: { ref: cr, live: resource } } : {}),
        }),
        ...(read.length ? { read } : {}),
      };
    },
  };
}

/**
 * The manager and the default CR as they are: those the bridge's watch told of as it saw them,
 * the others read from the target cluster (`read`: these, as the watch would tell of them).
 */
async function liveObjects(
  targets: TargetClusters,
  { kyma, observed, manager, cr }: Pick<CheckReadinessInput, 'kyma' | 'observed' | 'manager' | 'cr'>,
) {
  const seenAs = (o: ObservedObject) => o.view ?? undefined;
  const readManager = manager && !observed?.manager;
  const readCr = cr && !observed?.cr;
  const [workload, resource] =
    readManager || readCr
      ? await onTarget(targets, kyma, (client: KubeClient) =>
          Promise.all([
            readManager
              ? client.get(apiVersionOf(manager), manager.kind, manager.name, manager.namespace)
              : observed?.manager && seenAs(observed.manager),
            readCr ? client.get(cr.apiVersion, cr.kind, cr.name, cr.namespace) : observed?.cr && seenAs(observed.cr),
          ]),
        )
      : [observed?.manager && seenAs(observed.manager), observed?.cr && seenAs(observed.cr)];
  const read = [
    ...(readManager ? asObserved(workload as KubeObject | undefined) : []),
    ...(readCr
      ? asObserved(
          resource as KubeObject | undefined,
          cr.customStateCheck?.map((c) => c.jsonPath),
        )
      : []),
  ];
  return { workload, resource, read };
}

/**
 * The pods of a workload whose rollout has not completed (by its selector's labels); none for
 * one that completed. Only an explanation: when they cannot be read (the kubeconfig may not list
 * pods, say), the rollout is told without them.
 */
async function podsOf(
  targets: TargetClusters,
  kyma: KymaRef,
  manager: ObjectRef,
  workload: WorkloadView,
): Promise<PodView[] | undefined> {
  const labels = workload.spec?.selector?.matchLabels;
  if (!labels || Object.keys(labels).length === 0 || workloadRollout(workload).phase !== 'progressing')
    return undefined;
  const labelSelector = Object.entries(labels)
    .map(([k, v]) => `${k}=${v}`)
    .join(',');
  try {
    return await onTarget(
      targets,
      kyma,
      async (client: KubeClient) =>
        (
          await client.list<KubeObject & PodView>('v1', 'Pod', {
            namespace: manager.namespace,
            labelSelector,
            resourceVersion: '0',
          })
        ).items,
    );
  } catch {
    return undefined;
  }
}

/**
 * An object read from the cluster as the watch tells of it, under the key the watch uses (its
 * own apiVersion, kind, name and namespace), so that the watch's next news of it replaces this
 * view; nothing for one that is not there.
 */
function asObserved(o: KubeObject | undefined, paths?: string[]): ObservedObject[] {
  if (!o?.metadata.resourceVersion) return [];
  return [
    {
      key: objectKey(idOf(o)),
      resourceVersion: o.metadata.resourceVersion,
      view: readinessView(o, paths),
    },
  ];
}
