// Readiness: reads what decides it (the Manifest's pause label, the manager workload, the
// default CR; those the bridge's watch told of already are not read again) and lets the pure
// evaluation (src/decisions/readiness.ts) decide.
import { apiVersionOf, type ObjectRef } from '../api/shared';
import type { DefaultCrRef } from '../contract/artifacts';
import type { KymaRef } from '../contract/kyma';
import type { ObservedObject, SeenVersions } from '../contract/signals';
import type { Readiness } from '../contract/readiness';
import { evaluateReadiness } from '../decisions/readiness';
import type { WorkloadView } from '../decisions/workload';
import type { KubeClient } from '../k8s/rest-client';
import type { TargetClusters } from '../k8s/target-cluster';
import { onTarget } from './target';

export interface CheckReadinessInput {
  kyma: KymaRef;
  module: string;
  /** What the module workflow was told of (the Manifest's version): the cache must have caught up with it. */
  seen?: SeenVersions;
  /** The manager and the CR as the bridge's watch last saw them: not read again. */
  observed?: { manager?: ObservedObject; cr?: ObservedObject };
  manager?: ObjectRef;
  cr?: DefaultCrRef;
}

export function readinessActivities(targets: TargetClusters, manifestPaused: (input: { kyma: KymaRef; module: string; seen?: SeenVersions }) => Promise<boolean>) {
  return {
    async checkReadiness({ kyma, module, seen, observed, manager, cr }: CheckReadinessInput): Promise<Readiness> {
      if (await manifestPaused({ kyma, module, ...(seen ? { seen } : {}) })) return evaluateReadiness({ paused: true });
      const seenAs = (o: ObservedObject) => o.view ?? undefined;
      const read = (manager && !observed?.manager) || (cr && !observed?.cr);
      const [workload, resource] = read
        ? await onTarget(targets, kyma, (client: KubeClient) => Promise.all([
          manager && (observed?.manager ? seenAs(observed.manager) : client.get(apiVersionOf(manager), manager.kind, manager.name, manager.namespace)),
          cr && (observed?.cr ? seenAs(observed.cr) : client.get(cr.apiVersion, cr.kind, cr.name, cr.namespace)),
        ]))
        : [observed?.manager && seenAs(observed.manager), observed?.cr && seenAs(observed.cr)];
      return evaluateReadiness({
        paused: false,
        ...(manager ? { manager: { ref: manager, live: workload as WorkloadView | undefined } } : {}),
        ...(cr ? { cr: { ref: cr, live: resource } } : {}),
      });
    },
  };
}
