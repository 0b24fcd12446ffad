// A durable timer armed once and left running across wake-ups. `condition(fn, timeout)` starts
// and cancels a timer on every wake-up (two history events each time); a drift timer that
// fires every interval regardless of the signals in between needs neither.
import { CancellationScope, isCancellation, sleep } from '@temporalio/workflow';

/** What a loop needs of a timer (a WakeTimer, or a user's face of a SharedDrift). */
export interface LoopTimer {
  arm(ms: number): void;
  cancel(): void;
  fired(): boolean;
  take(): boolean;
}

export class WakeTimer implements LoopTimer {
  private due = false;
  private scope?: CancellationScope;

  /** Starts the timer unless it is running or has fired and not been taken yet. */
  arm(ms: number): void {
    if (this.scope || this.due) return;
    const scope = new CancellationScope();
    this.scope = scope;
    scope
      .run(() => sleep(ms))
      .then(
        () => {
          if (this.scope !== scope) return;
          this.scope = undefined;
          this.due = true;
        },
        (err: unknown) => {
          if (!isCancellation(err)) throw err;
        },
      );
  }

  /** Stops a running timer (one history event), and forgets a firing not taken yet. */
  cancel(): void {
    this.scope?.cancel();
    this.scope = undefined;
    this.due = false;
  }

  /** Whether the timer has fired; true once per firing. */
  fired(): boolean {
    return this.due;
  }

  take(): boolean {
    const d = this.due;
    this.due = false;
    return d;
  }
}
