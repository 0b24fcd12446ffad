// Local activities one at a time, in a workflow that runs several coroutines (the Kyma's and
// each hosted module's). A local activity leaves only a marker in history; when two run at once,
// the order they finish in decides what the workflow does next, but a replay resolves them in
// the order of their markers, which need not be that order: the replay then schedules different
// local activities and fails as nondeterministic. Taking turns makes the order of scheduling the
// order of finishing. Runs recorded before hosted modules keep their own (the lane is off).
export class LocalLane {
  private tail: Promise<unknown> = Promise.resolve();

  constructor(public on: boolean) {}

  /** Runs `fn` once every local activity queued before it has settled. */
  run<T>(fn: () => Promise<T>): Promise<T> {
    if (!this.on) return fn();
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
