// Local activities one at a time, in the order they were asked for. A local activity leaves only
// a marker in history; when two run at once, the order they finish in decides what the workflow
// does next, but a replay resolves them in the order of their markers, which need not be that
// order: the replay then schedules different commands and fails as nondeterministic. Taking turns
// makes the order of scheduling the order of finishing.
export class LocalLane {
  private tail: Promise<unknown> = Promise.resolve();

  /** Runs `fn` once every local activity queued before it has settled. */
  run<T>(fn: () => Promise<T>): Promise<T> {
    const next = this.tail.then(fn);
    this.tail = next.catch(() => undefined);
    return next;
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
}
