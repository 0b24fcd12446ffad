// Readiness of an installed module, from what was observed in its cluster: Ready when its
// manager workload is available and its default CR reports .status.state Ready (without a
// default CR the workload alone decides). The CR's Processing, Error, Warning and Deleting
// pass through with its message.
//
// A ModuleTemplate's spec.customStateCheck replaces the `.status.state` rule, as upstream's
// lifecycle-manager evaluated it (internal/manifest/ready_check.go before its PR #1628; the
// field is deprecated upstream since #1708 and no longer evaluated since #2735, but modules
// still ship it): each check reads the CR at its dot-separated jsonPath (`status.health`); a
// check whose path is absent is skipped; the checks mapping to the same state must all match
// (AND); then Error wins over Ready, Ready over Warning, Warning over Deleting; a path found
// but no mapped state matched is Processing; no path found at all: waiting for a state. The
// checks must map some value to Ready and some to Error, and a path must lead to a string.
import { describeObject } from '../api/names';
import type { Reason } from '../api/reasons';
import { LABELS, type ObjectRef } from '../api/shared';
import type { DefaultCrRef, StateCheck } from '../contract/artifacts';
import type { Readiness } from '../contract/readiness';
import { podTrouble, type PodView } from './pods';
import { isWorkload, workloadRollout, type WorkloadView } from './workload';

export interface ModuleCrView {
  status?: { state?: string; message?: string; conditions?: { type: string; status: string; message?: string }[] };
  /** The rest of the CR, for customStateCheck paths. */
  [field: string]: unknown;
}

export interface Observed {
  /** The Manifest carries skip-reconciliation=true. */
  paused: boolean;
  /**
   * The manager workload, and what was found (undefined: it does not exist); `pods`: its pods,
   * when they were read because its rollout did not complete.
   */
  manager?: { ref: ObjectRef; live: WorkloadView | undefined; pods?: PodView[] };
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
  if (o.paused)
    return {
      reason: 'Paused',
      message: `reconciliation paused by the ${LABELS.skipReconciliation} label on the Manifest`,
    };
  const manager = o.manager && managerReadiness(o.manager);
  if (manager) return manager;
  if (!o.cr) return { reason: 'Ready', message: 'module is ready' };
  return crReadiness(o.cr);
}

/** Why the manager keeps the module from being ready, if it does: missing, or its rollout of its current spec not complete. */
function managerReadiness(m: NonNullable<Observed['manager']>): Readiness | undefined {
  const what = describeObject(m.ref.kind, m.ref.name, m.ref.namespace);
  if (!m.live) return { reason: 'ManagerMissing', message: `manager ${what} does not exist` };
  const { phase, detail } = workloadRollout(m.live);
  if (phase === 'stalled')
    return { reason: 'ManagerRolloutStalled', message: `the rollout of manager ${what} stalled: ${detail}` };
  if (phase !== 'progressing') return undefined;
  const trouble = m.pods && podTrouble(m.pods);
  if (trouble)
    return { reason: 'ManagerPodsFailing', message: `manager ${what} cannot roll out (${detail}): ${trouble}` };
  return { reason: 'ManagerNotAvailable', message: `waiting for the rollout of manager ${what} (${detail})` };
}

/** The readiness the default CR reports: its `.status.state`, or the template's customStateCheck over it. */
function crReadiness(cr: NonNullable<Observed['cr']>): Readiness {
  const what = describeObject(cr.ref.kind, cr.ref.name, cr.ref.namespace);
  if (!cr.live) return { reason: 'ResourceMissing', message: `default resource ${what} does not exist` };
  const status = cr.live.status;
  const message = status?.message ?? status?.conditions?.find((c) => c.status !== 'True')?.message;
  if (cr.ref.customStateCheck?.length) return customReadiness(cr.ref.customStateCheck, cr.live, what, message);
  const state = status?.state;
  if (state === 'Ready') return { reason: 'Ready', message: 'module is ready' };
  const reason = state ? PASSED_THROUGH[state] : undefined;
  if (reason) return { reason, message: `${what} is ${state}${message ? `: ${message}` : ''}` };
  return { reason: 'ResourceNotReady', message: `waiting for ${what} to report a state` };
}

/** The value at a dot-separated path (`status.health`; a leading dot is allowed). */
export function valueAt(obj: unknown, jsonPath: string): unknown {
  let v: unknown = obj;
  for (const key of jsonPath.replace(/^\./, '').split('.')) {
    if (!v || typeof v !== 'object' || Array.isArray(v)) return undefined;
    v = (v as Record<string, unknown>)[key];
  }
  return v;
}

/** Precedence of mapped states when several hold, as upstream's calculateFinalState. */
const CUSTOM_PRECEDENCE = ['Error', 'Ready', 'Warning', 'Deleting'] as const;
const CUSTOM_REASON: Record<(typeof CUSTOM_PRECEDENCE)[number] | 'Processing', Reason> = {
  Error: 'ResourceError',
  Ready: 'Ready',
  Warning: 'ResourceWarning',
  Deleting: 'ResourceDeleting',
  Processing: 'ResourceProcessing',
};

/** Readiness from a ModuleTemplate's customStateCheck over the module CR (see the header). */
export function customReadiness(checks: StateCheck[], cr: ModuleCrView, what: string, message?: string): Readiness {
  const mapped = new Set(checks.map((c) => c.mappedState));
  const missing = ['Ready', 'Error'].filter((s) => !mapped.has(s));
  if (missing.length) {
    return {
      reason: 'InvalidCustomStateCheck',
      message: `the ModuleTemplate's customStateCheck maps no value to ${missing.join(' and ')}: it needs at least one check for Ready and one for Error`,
    };
  }
  const holds = new Map<string, boolean>();
  const seen: string[] = [];
  for (const c of checks) {
    const v = valueAt(cr, c.jsonPath);
    if (v === undefined || v === null) continue;
    if (typeof v !== 'string') {
      return {
        reason: 'InvalidCustomStateCheck',
        message:
          `customStateCheck path ${c.jsonPath} of ${what} holds ` +
          `${Array.isArray(v) ? 'a list' : typeof v === 'object' ? 'an object' : `a ${typeof v}`}, ` +
          `not a string`,
      };
    }
    if (!seen.some((s) => s.startsWith(`${c.jsonPath}=`))) seen.push(`${c.jsonPath}=${JSON.stringify(v)}`);
    holds.set(c.mappedState, (holds.get(c.mappedState) ?? true) && v === c.value);
  }
  if (seen.length === 0) {
    const paths = [...new Set(checks.map((c) => c.jsonPath))].join(', ');
    return { reason: 'ResourceNotReady', message: `waiting for ${what} to report ${paths} (customStateCheck)` };
  }
  const state = CUSTOM_PRECEDENCE.find((s) => holds.get(s)) ?? 'Processing';
  if (state === 'Ready') return { reason: 'Ready', message: 'module is ready' };
  return {
    reason: CUSTOM_REASON[state],
    message: `${what} is ${state} by customStateCheck (${seen.join(', ')})${message ? `: ${message}` : ''}`,
  };
}

/** The fields of a Deployment's, StatefulSet's or DaemonSet's status that `workloadRollout` reads. */
const WORKLOAD_STATUS_FIELDS = [
  'observedGeneration',
  'replicas',
  'readyReplicas',
  'availableReplicas',
  'updatedReplicas',
  'currentRevision',
  'updateRevision',
  'desiredNumberScheduled',
  'updatedNumberScheduled',
  'numberAvailable',
] as const;

/**
 * What of a manager workload or a module CR readiness reads: for workloads what
 * `workloadRollout` needs (and the selector of their pods); for CRs the state, message and conditions and the values at the
 * `paths` a customStateCheck reads; for both generation, deletion and finalizers. Small enough
 * for a signal.
 */
export function readinessView(
  o: {
    kind: string;
    metadata: { generation?: number; deletionTimestamp?: string; finalizers?: string[] };
    spec?: unknown;
    status?: unknown;
  },
  paths: Iterable<string> = [],
): Record<string, unknown> {
  const { generation, deletionTimestamp, finalizers } = o.metadata;
  const metadata = {
    ...(generation !== undefined ? { generation } : {}),
    ...(deletionTimestamp ? { deletionTimestamp } : {}),
    ...(finalizers?.length ? { finalizers } : {}),
  };
  const status = (o.status ?? {}) as Record<string, unknown> & {
    conditions?: { type: string; status: string; reason?: string; message?: string }[];
  };
  const conditions = status.conditions?.map(({ type, status: st, reason, message }) => ({
    type,
    status: st,
    ...(reason ? { reason } : {}),
    ...(message ? { message } : {}),
  }));
  if (isWorkload(o.kind)) {
    const spec = (o.spec ?? {}) as NonNullable<WorkloadView['spec']>;
    const strategy =
      spec.updateStrategy && o.kind !== 'Deployment'
        ? {
            updateStrategy: {
              type: spec.updateStrategy.type,
              ...(spec.updateStrategy.rollingUpdate
                ? { rollingUpdate: { partition: spec.updateStrategy.rollingUpdate.partition } }
                : {}),
            },
          }
        : {};
    return {
      kind: o.kind,
      metadata,
      spec: {
        replicas: spec.replicas,
        ...strategy,
        ...(spec.selector?.matchLabels ? { selector: { matchLabels: spec.selector.matchLabels } } : {}),
      },
      status: {
        ...Object.fromEntries(WORKLOAD_STATUS_FIELDS.map((f) => [f, status[f]])),
        ...(conditions ? { conditions } : {}),
      },
    };
  }
  const view: Record<string, unknown> = {
    kind: o.kind,
    metadata,
    status: { state: status.state, message: status.message, ...(conditions ? { conditions } : {}) },
  };
  for (const p of paths) setAt(view, p, valueAt(o, p));
  return view;
}

function setAt(target: Record<string, unknown>, path: string, value: unknown): void {
  if (value === undefined) return;
  const parts = path.replace(/^\./, '').split('.');
  let at = target;
  for (const part of parts.slice(0, -1)) {
    const next = at[part];
    at = at[part] = next && typeof next === 'object' ? { ...(next as Record<string, unknown>) } : {};
  }
  at[parts[parts.length - 1]!] = value;
}
