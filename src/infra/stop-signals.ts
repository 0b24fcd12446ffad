// How the worker and the bridge stop. On the first SIGINT or SIGTERM their probes fail (a
// stopping process is neither alive nor ready), their own stop begins, and a deadline is set:
// a process still there after its shutdown timeout (KLM_SHUTDOWN_TIMEOUT) says so and exits,
// rather than wait for the kubelet's SIGKILL.

/**
 * Listens for SIGINT and SIGTERM once: `onStop` runs at the first (the probes fail, the caller's
 * stop begins), and the process exits with code 1 when it is still there `timeoutMs` later.
 * Resolves with the signal.
 */
export function stopSignals(o: {
  name: string;
  timeoutMs: number;
  onStop: (signal: NodeJS.Signals) => void;
  log: (m: string) => void;
}): Promise<NodeJS.Signals> {
  let signalled: NodeJS.Signals | undefined;
  return new Promise<NodeJS.Signals>((resolve) => {
    const on = (signal: NodeJS.Signals) => {
      if (signalled) return;
      signalled = signal;
      o.log(`${o.name}: ${signal}: stopping (at most ${o.timeoutMs / 1000}s)`);
      // Does not keep the process alive: it fires only when something else still does.
      setTimeout(() => {
        o.log(`${o.name}: not stopped ${o.timeoutMs / 1000}s after ${signal} (KLM_SHUTDOWN_TIMEOUT): exiting`);
        process.exit(1);
      }, o.timeoutMs).unref();
      o.onStop(signal);
      resolve(signal);
    };
    for (const s of ['SIGINT', 'SIGTERM'] as const) process.on(s, on);
  });
}
