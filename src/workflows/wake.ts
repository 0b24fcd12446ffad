// The Kyma workflow loop's wait for news: what `condition(() => run.dirty)` does, with one
// promise per wait where `condition` makes four. The SDK's sandbox captures and source-maps a
// stack trace for every promise workflow code makes (an `await` too), and the loop waits once or
// more in every activation: bench/workflow-promises.ts counts them. A wait ends when `ring` is
// called (the run turned dirty, or a piece of work broke), or when the workflow is cancelled.
import { CancellationScope } from '@temporalio/workflow';

export class Wake {
  private resolve?: () => void;
  /** The workflow's cancellation, once requested: every wait ends with it. */
  private cancelled?: Error;

  constructor() {
    // One promise for the run, as `condition` makes one per wait.
    CancellationScope.current().cancelRequested.catch((err: unknown) => {
      this.cancelled = err as Error;
      this.ring();
    });
  }

  /** Ends the wait under way, if any. */
  ring(): void {
    const resolve = this.resolve;
    this.resolve = undefined;
    resolve?.();
  }

  /** Until `ready()` holds, looked at whenever `ring` is called; rejects with the workflow's cancellation once requested. */
  until(ready: () => boolean): Promise<void> {
    if (this.cancelled) return Promise.reject(this.cancelled);
    if (ready()) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      const look = () => {
        if (this.cancelled) reject(this.cancelled);
        else if (ready()) resolve();
        else this.resolve = look;
      };
      this.resolve = look;
    });
  }
}
