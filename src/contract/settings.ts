// The reconcile settings: chosen by the operator (the worker's environment), read by each run of a
// Kyma's workflow when it starts (the local activity `beginKymaRun`, with the Kyma). They are part of the
// worker's deployment version (its build id carries their digest): a change of them is a new
// version, which running workflows move to at their next continue-as-new, as to new code.

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
  /**
   * A Kyma's module activities (installs, checks in its cluster, removal steps) under way at once,
   * at most. Their results come back while a workflow task may run: Temporal fails a task that
   * has more than 100 events waiting for it (each result is two), and a failed task costs its
   * whole work again.
   */
  moduleParallelism: number;
  /** The modules a Kyma may have; one with more is Error (ModuleLimitExceeded) and nothing of it is changed. */
  maxModulesPerKyma: number;
  /**
   * How long a run of a Kyma's workflow may last (KLM_MAX_RUN_AGE): it continues as new once it is
   * this old and idle, so that it reaches the current worker deployment version and settings.
   */
  maxRunAgeMs: number;
}

export const DEFAULT_SETTINGS: ReconcileSettings = {
  driftIntervalMs: 10 * 60_000,
  crdEstablishedTimeoutMs: 2 * 60_000,
  managerAvailableTimeoutMs: 5 * 60_000,
  installRetryMs: 30_000,
  defaultNamespace: 'kyma-system',
  maxHistoryEvents: 0,
  moduleParallelism: 20,
  maxModulesPerKyma: 1_000,
  maxRunAgeMs: 24 * 60 * 60_000,
};

/**
 * Workflow task timeout of Kyma and rollout workflows: Temporal's default. Their tasks are short
 * (a Kyma's local activities take turns, its modules' checks go together in one), and a lost
 * worker's task is given to another after this long.
 */
export const WORKFLOW_TASK_TIMEOUT = '10 seconds';
