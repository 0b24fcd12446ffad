// How long a module's manager may not run its current spec, and when its pods are read to tell
// why. A manager unavailable (or, once applied, missing) for longer than the timeout turns
// Processing into Error (with the reason), until it becomes available. A rollout that does not
// move is looked at again on a backoff (a minute, doubling up to 5 min), its pods read, so that a
// pod that cannot be scheduled or crash-loops shows as Error before the timeout.
import type { ObjectRef } from '../api/shared';
import type { Readiness } from '../contract/readiness';
import type { ReconcileSettings } from '../contract/settings';
import type { CarriedModule } from '../contract/workflow-inputs';
import { moduleEvent, type ModuleStep } from './module-steps';

/** Readiness reasons of a manager that does not run its current spec (yet). */
const MANAGER_NOT_RUNNING: string[] = [
  'ManagerNotAvailable',
  'ManagerMissing',
  'ManagerPodsFailing',
  'ManagerRolloutStalled',
];

/** What of the timeout a continue-as-new carries. */
export type CarriedTimeout = Pick<CarriedModule, 'unavailableSince' | 'missingSince' | 'reportedTimeout'>;

export class ManagerTimeout {
  private unavailableSince?: number;
  /** Since when the manager has been missing although this workflow applied it. */
  private missingSince?: number;
  /** The manager's rollout has been incomplete for a while: the next check reads its pods to tell why. */
  private inspect = false;
  /** Its pods were found in trouble: every check reads them again until the rollout completes (no flip back to Processing). */
  private inspectAgain = false;
  /** The dependency-timeout Event was sent for the timeout shown now. */
  private reportedTimeout = false;

  constructor(
    private readonly settings: Pick<ReconcileSettings, 'managerAvailableTimeoutMs' | 'driftIntervalMs'>,
    carried: CarriedTimeout = {},
  ) {
    this.unavailableSince = carried.unavailableSince;
    this.missingSince = carried.missingSince;
    this.reportedTimeout = carried.reportedTimeout ?? false;
  }

  /** A wait ended: on the drift timer or the manager's deadline, a manager that does not roll out is looked at closer (its pods say why). */
  woke(o: { drift: boolean; deadline?: boolean }): void {
    if ((o.drift || o.deadline) && this.unavailableSince !== undefined) this.inspect = true;
  }

  /** Whether the next check reads the pods of `manager` (none: no pods to read); the closer look is taken. */
  inspectPods(manager: ObjectRef | undefined): boolean {
    const inspectPods = (this.inspect || this.inspectAgain) && manager !== undefined;
    this.inspect = false;
    return inspectPods;
  }

  /** An install checked readiness itself: the closer look it owed is dropped. */
  checkedByInstall(): void {
    this.inspect = false;
  }

  /** A manager that stays missing although it was applied again and again times out instead of being re-applied forever. */
  missingTooLong(r: Readiness, now: number): boolean {
    if (r.reason !== 'ManagerMissing' || this.missingSince === undefined) return false;
    return now - this.missingSince >= this.settings.managerAvailableTimeoutMs;
  }

  /** The readiness a check found (at workflow time `now`), as the timeout shows it, and when to look again. */
  assess(r: Readiness, now: number): { readiness: Readiness; recheckInMs?: number } {
    this.inspectAgain = r.reason === 'ManagerPodsFailing';
    const timeoutMs = this.settings.managerAvailableTimeoutMs;
    const waiting = MANAGER_NOT_RUNNING.includes(r.reason);
    if (r.reason !== 'ManagerMissing') this.missingSince = undefined;
    if (!waiting || !timeoutMs) {
      this.unavailableSince = undefined;
      return { readiness: r };
    }
    this.unavailableSince ??= now;
    // A missing manager times out counting from when it went missing, an unavailable one from when it stopped being available.
    const since = r.reason === 'ManagerMissing' ? (this.missingSince ??= now) : this.unavailableSince;
    const left = since + timeoutMs - now;
    const inspectInMs = inspectionDelayMs(now - this.unavailableSince, timeoutMs, this.settings.driftIntervalMs);
    const recheckInMs = left > 0 ? Math.min(left, inspectInMs) : inspectInMs;
    if (left > 0 || (r.reason !== 'ManagerNotAvailable' && r.reason !== 'ManagerMissing'))
      return { readiness: r, recheckInMs };
    const still = r.reason === 'ManagerMissing' ? 'still missing' : 'still not available';
    return {
      readiness: {
        reason: 'ManagerNotAvailableTimeout',
        message: `${r.message}: ${still} after ${Math.round(timeoutMs / 1000)}s`,
      },
      recheckInMs,
    };
  }

  /** The end of a cycle of module `name` that shows `r`: a dependency-timeout Event, once per timeout. */
  timeoutEvent(name: string, r: Readiness): ModuleStep | undefined {
    const timedOut = r.reason === 'ManagerNotAvailableTimeout' || r.reason === 'CrdNotEstablished';
    const first = timedOut && !this.reportedTimeout;
    this.reportedTimeout = timedOut;
    return first ? moduleEvent('Warning', 'DependencyTimeout', `module ${name}: ${r.message}`) : undefined;
  }

  carry(): CarriedTimeout {
    return {
      ...(this.unavailableSince !== undefined ? { unavailableSince: this.unavailableSince } : {}),
      ...(this.missingSince !== undefined ? { missingSince: this.missingSince } : {}),
      ...(this.reportedTimeout ? { reportedTimeout: true } : {}),
    };
  }
}

/**
 * When to look at a manager that does not roll out again: a minute after it began (or a quarter
 * of the timeout, if shorter: 75 s by default), then as long again as it has taken so far, at
 * most 5 minutes (or the drift interval, if shorter). Not sooner: a rollout that is merely slow
 * (a loaded cluster) would pay a timer, a workflow task and a read of its pods for nothing.
 */
function inspectionDelayMs(elapsedMs: number, timeoutMs: number, driftMs: number): number {
  const first = Math.min(60_000, Math.max(1_000, Math.floor(timeoutMs / 4)));
  return Math.min(Math.max(first, elapsedMs), Math.min(300_000, driftMs));
}
