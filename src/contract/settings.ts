// The reconcile settings: chosen by the operator (environment), passed by the bridge in each
// workflow's input, kept by a running workflow until it continues as new.

export interface ReconcileSettings {
  /** The slow timer that re-checks and re-applies to catch drift and missed events. */
  driftIntervalMs: number;
  /** How long a module's CRDs may take to become Established. */
  crdEstablishedTimeoutMs: number;
  /** How long a module's manager may stay unavailable before the module goes Error (it keeps recovering). */
  managerAvailableTimeoutMs: number;
  /** First delay before a failed install is tried again (it doubles, up to the drift interval). */
  installRetryMs: number;
  /** Namespace for namespaced objects that name none; "{kyma}" becomes the Kyma's name. */
  defaultNamespace: string;
  /** Continue-as-new once history has this many events (0: only when Temporal suggests it). */
  maxHistoryEvents: number;
}

export const DEFAULT_SETTINGS: ReconcileSettings = {
  driftIntervalMs: 10 * 60_000,
  crdEstablishedTimeoutMs: 2 * 60_000,
  managerAvailableTimeoutMs: 5 * 60_000,
  installRetryMs: 30_000,
  defaultNamespace: 'kyma-system',
  maxHistoryEvents: 0,
};

/**
 * Workflow task timeout of Kyma and module workflows. Their tasks run local activities (API
 * reads and writes); under load those take seconds, and a task that outlives the default 10 s
 * is timed out and run again with all its local activities: work thrown away when it is least
 * affordable. A lost worker's task is retried after this long.
 */
export const WORKFLOW_TASK_TIMEOUT = '30 seconds';
