// One drift timer for a Kyma and the modules its workflow runs, instead of one each: every
// firing wakes each of them once. A Kyma of three modules then starts one timer per interval,
// not four, and wakes once for it, not four times.
import { WakeTimer, type LoopTimer } from './wake-timer';

export class SharedDrift {
  /** Firings so far. */
  private firings = 0;

  constructor(private readonly timer: LoopTimer = new WakeTimer()) {}

  /** A face of the timer for one of its users. */
  user(): LoopTimer {
    let taken = this.firings;
    const fired = () => {
      this.count();
      return taken < this.firings;
    };
    return {
      // Runs unless it runs already, or this user has a firing not taken yet.
      arm: (ms) => {
        if (!fired()) this.timer.arm(ms);
      },
      // A user that stops forgets its firing; the timer runs on for the others.
      cancel: () => {
        this.count();
        taken = this.firings;
      },
      fired,
      take: () => {
        const was = fired();
        taken = this.firings;
        return was;
      },
    };
  }

  /** Counts a firing of the timer (and lets it be armed again). */
  private count(): void {
    if (this.timer.take()) this.firings++;
  }
}
