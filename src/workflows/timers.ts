// The Kyma workflow's two durable timers, whatever the number of its modules: the drift timer,
// armed once and left running across wake-ups (`condition(fn, timeout)` would start and cancel a
// timer on every wake-up), and the alarm, set to the earliest time a wait falls due (a module's
// deadline or retry, a held upgrade's window), moved only when an earlier one comes.
import { CancellationScope, isCancellation, sleep } from '@temporalio/workflow';

/** A timer's end when it was cancelled (the alarm moved, or the workflow was cancelled): nothing to do. */
export function ignoreCancellation(err: unknown): void {
  if (!isCancellation(err)) throw err;
}

export class DriftTimer {
  private running = false;

  /** Starts the timer unless it runs; `fired` is called when it fires. */
  arm(ms: number, fired: () => void): void {
    if (this.running) return;
    this.running = true;
    void sleep(ms).then(() => {
      this.running = false;
      fired();
    }, ignoreCancellation);
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
