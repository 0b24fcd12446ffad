// Readiness of an installed module, from what was observed in its cluster: Ready when its
// manager workload is available and its default CR reports .status.state Ready (without a
// default CR the workload alone decides). The CR's Processing, Error, Warning and Deleting
// pass through with its message.
import { describeObject } from '../api/names';
import type { Reason } from '../api/reasons';
import { LABELS, type ObjectRef } from '../api/shared';
import type { DefaultCrRef } from '../contract/artifacts';
import type { Readiness } from '../contract/readiness';
import { workloadAvailable, type WorkloadView } from './workload';

export interface ModuleCrView {
  status?: { state?: string; message?: string; conditions?: { type: string; status: string; message?: string }[] };
}

export interface Observed {
  /** The Manifest carries skip-reconciliation=true. */
  paused: boolean;
  /** The manager workload, and what was found (undefined: it does not exist). */
  manager?: { ref: ObjectRef; live: WorkloadView | undefined };
  /** The default CR the module manages, and what was found. */
  cr?: { ref: DefaultCrRef; live: ModuleCrView | undefined };
}

const PASSED_THROUGH: Record<string, Reason> = {
  Processing: 'ResourceProcessing',
  Error: 'ResourceError',
  Warning: 'ResourceWarning',
  Deleting: 'ResourceDeleting',
};

export function evaluateReadiness(o: Observed): Readiness {
  if (o.paused) return { reason: 'Paused', message: `reconciliation paused by the ${LABELS.skipReconciliation} label on the Manifest` };
  if (o.manager) {
    const what = describeObject(o.manager.ref.kind, o.manager.ref.name, o.manager.ref.namespace);
    if (!o.manager.live) return { reason: 'ManagerMissing', message: `manager ${what} does not exist` };
    const { ok, detail } = workloadAvailable(o.manager.live);
    if (!ok) return { reason: 'ManagerNotAvailable', message: `waiting for manager ${what} to become available (${detail})` };
  }
  if (!o.cr) return { reason: 'Ready', message: 'module is ready' };
  const what = describeObject(o.cr.ref.kind, o.cr.ref.name, o.cr.ref.namespace);
  if (!o.cr.live) return { reason: 'ResourceMissing', message: `default resource ${what} does not exist` };
  const status = o.cr.live.status;
  const state = status?.state;
  const message = status?.message ?? status?.conditions?.find((c) => c.status !== 'True')?.message;
  if (state === 'Ready') return { reason: 'Ready', message: 'module is ready' };
  const reason = state ? PASSED_THROUGH[state] : undefined;
  if (reason) return { reason, message: `${what} is ${state}${message ? `: ${message}` : ''}` };
  return { reason: 'ResourceNotReady', message: `waiting for ${what} to report a state` };
}
