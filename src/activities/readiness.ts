// Readiness: reads what decides it (the Manifest's pause label, the manager workload, the
// default CR) and lets the pure evaluation (src/decisions/readiness.ts) decide.
import { apiVersionOf, type ObjectRef } from '../api/shared';
import type { DefaultCrRef } from '../contract/artifacts';
import type { KymaRef } from '../contract/kyma';
import type { SeenVersions } from '../contract/signals';
import type { Readiness } from '../contract/readiness';
import { evaluateReadiness, type ModuleCrView } from '../decisions/readiness';
import type { WorkloadView } from '../decisions/workload';
import type { KubeClient } from '../k8s/rest-client';
import type { TargetClusters } from '../k8s/target-cluster';
import { onTarget } from './target';

export interface CheckReadinessInput {
  kyma: KymaRef;
  module: string;
  /** What the module workflow was told of (the Manifest's version): the cache must have caught up with it. */
  seen?: SeenVersions;
  manager?: ObjectRef;
  cr?: DefaultCrRef;
}

export function readinessActivities(targets: TargetClusters, manifestPaused: (input: { kyma: KymaRef; module: string; seen?: SeenVersions }) => Promise<boolean>) {
  return {
    async checkReadiness({ kyma, module, seen, manager, cr }: CheckReadinessInput): Promise<Readiness> {
      if (await manifestPaused({ kyma, module, ...(seen ? { seen } : {}) })) return evaluateReadiness({ paused: true });
      const [workload, resource] = await onTarget(targets, kyma, (client: KubeClient) => Promise.all([
        manager && client.get(apiVersionOf(manager), manager.kind, manager.name, manager.namespace),
        cr && client.get(cr.apiVersion, cr.kind, cr.name, cr.namespace),
      ]));
      return evaluateReadiness({
        paused: false,
        ...(manager ? { manager: { ref: manager, live: workload as WorkloadView | undefined } } : {}),
        ...(cr ? { cr: { ref: cr, live: resource as ModuleCrView | undefined } } : {}),
      });
    },
  };
}
