// The Kyma workflow's durable timers, whatever the number of its modules: the drift timer,
// armed once and left running across wake-ups (`condition(fn, timeout)` would start and cancel a
// timer on every wake-up), and the alarm, set to the earliest time a wait falls due (a module's
// deadline or retry, a held upgrade's window), moved only when an earlier one comes. The run's
// end (`KLM_MAX_RUN_AGE`) needs no timer of its own while the drift timer runs: that fires by
// then. Only a run that waits with nothing under way and no drift timer starts one.
import { CancellationScope, isCancellation, sleep } from '@temporalio/workflow';

/** A timer's end when it was cancelled (the alarm moved, or the workflow was cancelled): nothing to do. */
export function ignoreCancellation(err: unknown): void {
  if (!isCancellation(err)) throw err;
}

export class DriftTimer {
  private running = false;
  private endTimer = false;

  /** `endsAt`: the run's end, in workflow time. */
  constructor(private readonly endsAt: number) {}

  /**
   * Starts the timer, to fire after `ms` (cut by the run to end by its end: `takeDriftArm`),
   * unless it runs or no `ms` is given; `fired` is called when it fires.
   */
  arm(ms: number | undefined, fired: () => void): void {
    if (this.running || ms === undefined) return;
    this.running = true;
    void sleep(Math.max(1, ms)).then(() => {
      this.running = false;
      fired();
    }, ignoreCancellation);
  }

  /**
   * The run waits with nothing under way (`idle`), which nothing but news might end: unless the
   * drift timer runs, a timer for the run's end starts (once a run); `rang` when it rings.
   */
  coverEnd(idle: boolean, now: number, rang: () => void): void {
    if (!idle || this.running || this.endTimer) return;
    this.endTimer = true;
    void sleep(Math.max(1, this.endsAt - now)).then(rang, ignoreCancellation);
  }
}

export class Alarm {
  private at?: number;
  private scope?: CancellationScope;

  /** Rings at workflow time `at` (or sooner, if set to ring sooner already); `rang` is called when it does. */
  set(at: number | undefined, now: number, rang: () => void): void {
    if (at === undefined || (this.at !== undefined && this.at <= at)) return;
    this.scope?.cancel();
    const scope = new CancellationScope();
    this.scope = scope;
    this.at = at;
    scope
      .run(() => sleep(Math.max(at - now, 1)))
      .then(() => {
        if (this.scope !== scope) return;
        this.scope = undefined;
        this.at = undefined;
        rang();
      }, ignoreCancellation);
  }
}
