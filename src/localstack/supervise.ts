// Keeps a server of the local stack running. When it exits while nobody is stopping it, the
// stack says so and starts it again with the same command line (same ports, same data) after
// the backoff of restart-policy.ts; it counts as up again once its readiness check passes.
// When it keeps crashing, the stack gives up on it and says what to do. stop() never restarts.
import { constants } from 'node:os';
import { log } from './log';
import type { ManagedProcess } from './process';
import { nextRestart, RESTART_POLICY } from './restart-policy';

/**
 * Starts the server with `spawn` and waits for `ready` (which rejects when the server exited or
 * did not become ready in time). The returned process stands for the server across restarts:
 * it has exited only once it was stopped or given up on.
 */
export async function supervise(
  spawn: () => ManagedProcess,
  ready: (proc: ManagedProcess) => Promise<void>,
): Promise<ManagedProcess> {
  let current = spawn();
  try {
    await ready(current);
  } catch (err) {
    await current.stop();
    throw err;
  }
  const { name, logFile } = current;
  let stopping = false;
  let timer: NodeJS.Timeout | undefined;
  let restarts: number[] = [];
  let finished = false;
  let finish!: (code: number | null) => void;
  const exited = new Promise<number | null>((resolve) => {
    finish = (code) => {
      finished = true;
      resolve(code);
    };
  });

  const onDown = (proc: ManagedProcess, what: string) => {
    if (stopping) return;
    const decision = nextRestart(restarts, Date.now());
    restarts = decision.restarts;
    const within = `within ${RESTART_POLICY.windowMs / 60_000} min`;
    const tail = proc.logTail(5).replace(/^/gm, '  ');
    if (decision.giveUp) {
      log(
        'stack',
        `${name} ${what}, after ${restarts.length} restarts ${within}: GIVING UP, ${name} stays ` +
          `down and the stack is broken. Look at ${logFile} for the cause, then stop klm (Ctrl-C) and ` +
          `run \`npm start\` again. Last log lines:\n${tail}`,
      );
      void proc.exited.then(finish);
      return;
    }
    log(
      'stack',
      `${name} ${what}; restarting it in ${decision.delayMs / 1000}s (restart ${restarts.length} ` +
        `of at most ${RESTART_POLICY.maxRestarts} ${within}). Last log lines (${logFile}):\n${tail}`,
    );
    timer = setTimeout(() => void restart(), decision.delayMs);
    timer.unref();
  };
  const watch = (proc: ManagedProcess) => {
    void proc.exited.then((code) => onDown(proc, `exited unexpectedly (${exitCause(code)})`));
  };
  const restart = async () => {
    const proc = spawn();
    current = proc;
    try {
      await ready(proc);
    } catch (err) {
      await proc.stop();
      onDown(proc, `did not come back (${(err as Error).message.split('\n')[0]})`);
      return;
    }
    log('stack', `${name} is up again after restart ${restarts.length}`);
    watch(proc);
  };
  watch(current);

  return {
    name,
    logFile,
    exited,
    hasExited: () => finished,
    pid: () => current.pid(),
    logTail: (lines) => current.logTail(lines),
    async stop(timeoutMs) {
      stopping = true;
      clearTimeout(timer);
      void current.exited.then(finish);
      await current.stop(timeoutMs);
    },
  };
}

/** An exit code as its watchdog (a shell) reports it: above 128, the signal that killed the server. */
function exitCause(code: number | null): string {
  const signal =
    code !== null && code > 128 ? Object.entries(constants.signals).find(([, n]) => n === code - 128)?.[0] : undefined;
  return signal ? `killed by ${signal}, code ${code}` : `code ${code}`;
}
