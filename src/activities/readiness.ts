// Readiness: a module is Ready when its manager workload is available and its default CR
// reports .status.state Ready (no default CR: the workload alone decides). The CR's
// Processing, Error and Warning pass through with its message.
import { manifestName } from '../api/names';
import { API_VERSION, LABELS, type ObjectRef } from '../api/shared';
import type { KubeClient, KubeObject } from '../k8s/rest-client';
import { workloadAvailable, type Workload } from '../k8s/workload-status';
import type { TargetClusters } from '../k8s/target-cluster';
import { targetClient } from './target';
import type { DefaultCrRef, KymaRef, Readiness } from '../workflows/types';

interface ModuleCr extends KubeObject {
  status?: { state?: string; message?: string; conditions?: { type: string; status: string; message?: string }[] };
}

const PASSED_THROUGH = new Set(['Processing', 'Error', 'Warning', 'Deleting']);

export function readinessActivities(kcp: KubeClient, targets: TargetClusters) {
  /** Whether the module's Manifest carries skip-reconciliation=true (its workflow then waits). */
  async function manifestPaused(ref: KymaRef, module: string): Promise<boolean> {
    const m = await kcp.get(API_VERSION, 'Manifest', manifestName(ref.name, module), ref.namespace);
    return (m?.metadata as { labels?: Record<string, string> } | undefined)?.labels?.[LABELS.skipReconciliation] === 'true';
  }

  return {
    manifestPaused,

    async checkReadiness(ref: KymaRef, manager: ObjectRef | undefined, cr: DefaultCrRef | undefined, module?: string): Promise<Readiness> {
      if (module && (await manifestPaused(ref, module))) {
        return { state: 'Processing', reason: 'Paused', message: `reconciliation paused by the ${LABELS.skipReconciliation} label on the Manifest` };
      }
      const client = await targetClient(targets, ref);
      if (manager) {
        const apiVersion = manager.group ? `${manager.group}/${manager.version}` : manager.version;
        const w = await client.get<Workload>(apiVersion, manager.kind, manager.name, manager.namespace);
        const what = `${manager.kind} ${manager.namespace ? `${manager.namespace}/` : ''}${manager.name}`;
        if (!w) return { state: 'Processing', reason: 'ManagerMissing', message: `manager ${what} does not exist` };
        const { ok, detail } = workloadAvailable(w);
        if (!ok) return { state: 'Processing', reason: 'ManagerNotAvailable', message: `waiting for manager ${what} to become available (${detail})` };
      }
      if (!cr) return { state: 'Ready', reason: 'Ready', message: 'module is ready' };
      const obj = await client.get<ModuleCr>(cr.apiVersion, cr.kind, cr.name, cr.namespace);
      const what = `${cr.kind} ${cr.namespace ? `${cr.namespace}/` : ''}${cr.name}`;
      if (!obj) return { state: 'Processing', reason: 'ResourceMissing', message: `default resource ${what} does not exist` };
      const state = obj.status?.state;
      const message = obj.status?.message ?? obj.status?.conditions?.find((c) => c.status !== 'True')?.message;
      if (state === 'Ready') return { state: 'Ready', reason: 'Ready', message: 'module is ready' };
      if (state && PASSED_THROUGH.has(state)) {
        return { state: state as Readiness['state'], reason: `Resource${state}`, message: `${what} is ${state}${message ? `: ${message}` : ''}` };
      }
      return { state: 'Processing', reason: 'ResourceNotReady', message: `waiting for ${what} to report a state` };
    },
  };
}
