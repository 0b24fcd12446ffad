// Local activities one at a time, in the order they were asked for. A local activity leaves only
// a marker in history; when two run at once, the order they finish in decides what the workflow
// does next, but a replay resolves them in the order of their markers, which need not be that
// order: the replay then schedules different commands and fails as nondeterministic. Taking turns
// makes the order of scheduling the order of finishing.
//
// Written with as few promises as the turns need: the SDK's sandbox captures a stack trace for
// every promise workflow code makes (bench/workflow-promises.ts counts them), so a local activity
// asked for while none runs starts at once, and one promise tells when it is done.
export class LocalLane {
  private busy = false;
  /** Starts of the local activities that wait for their turn, in order. */
  private readonly waiting: (() => void)[] = [];

  /** Runs `fn` once every local activity queued before it has settled. */
  run<T>(fn: () => Promise<T>): Promise<T> {
    if (!this.busy) return this.start(fn);
    return new Promise<T>((resolve, reject) => this.waiting.push(() => void this.start(fn).then(resolve, reject)));
  }

  /** The activities of `proxy`, each taking its turn in this lane. */
  serial<T extends object>(proxy: T): T {
    return new Proxy(proxy, {
      get: (target, key) => {
        const fn = (target as Record<PropertyKey, unknown>)[key];
        if (typeof fn !== 'function') return fn;
        return (...args: unknown[]) => this.run(() => (fn as (...a: unknown[]) => Promise<unknown>)(...args));
      },
    });
  }

  private start<T>(fn: () => Promise<T>): Promise<T> {
    this.busy = true;
    let turn: Promise<T>;
    try {
      turn = fn();
    } catch (err) {
      turn = Promise.reject(err instanceof Error ? err : new Error(String(err)));
    }
    const next = () => {
      this.busy = false;
      this.waiting.shift()?.();
    };
    turn.then(next, next);
    return turn;
  }
}
