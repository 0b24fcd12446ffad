// Starts a server process that cannot outlive us. Each server runs under a small bash
// watchdog that holds the read end of a pipe from this Node process: when we close it
// (stop()) or when we die for any reason, SIGKILL included, the watchdog sees end-of-file
// and terminates the server (TERM, then KILL after a grace period). Each watchdog runs in a
// session of its own, so that Ctrl-C or a signal to our process group does not kill servers
// out of order (an API server whose etcd is gone never finishes shutting down). Only
// processes we started are ever signalled. The watchdog writes the server's own pid to a file
// next to its log (temporal.log: temporal.pid), so that tests can kill the server itself.
import { spawn, type ChildProcess } from 'node:child_process';
import { openSync, closeSync, readFileSync, rmSync } from 'node:fs';

const WATCHDOG = `
pidfile=$1; shift
exec 3<&0
"$@" 3<&- </dev/null &
child=$!
echo "$child" >"$pidfile"
{ cat >/dev/null <&3; kill -TERM "$child" 2>/dev/null; sleep 8; kill -KILL "$child" 2>/dev/null; } &
watcher=$!
exec 3<&-
wait "$child"; rc=$?
kill "$watcher" 2>/dev/null
exit $rc
`;

export interface ManagedProcess {
  readonly name: string;
  readonly logFile: string;
  /** Resolves with the exit code once the server has exited. */
  readonly exited: Promise<number | null>;
  hasExited(): boolean;
  /** The server's own pid (not the watchdog's) while it runs. */
  pid(): number | undefined;
  /** Last lines of the server's log, for error messages. */
  logTail(lines?: number): string;
  stop(timeoutMs?: number): Promise<void>;
}

export function startProcess(
  name: string,
  command: string,
  args: string[],
  opts: { logFile: string; cwd?: string; env?: NodeJS.ProcessEnv },
): ManagedProcess {
  const pidFile = `${opts.logFile.replace(/\.log$/, '')}.pid`;
  rmSync(pidFile, { force: true });
  const out = openSync(opts.logFile, 'a');
  let child: ChildProcess;
  try {
    child = spawn('bash', ['-c', WATCHDOG, name, pidFile, command, ...args], {
      cwd: opts.cwd,
      env: opts.env ?? process.env,
      stdio: ['pipe', out, out],
      detached: true,
    });
  } finally {
    closeSync(out);
  }
  let done = false;
  const exited = new Promise<number | null>((resolve) => {
    child.on('exit', (code) => {
      done = true;
      resolve(code);
    });
    child.on('error', () => {
      done = true;
      resolve(null);
    });
  });
  // The pipe must not keep our event loop alive, nor an EPIPE crash us.
  child.stdin?.on('error', () => undefined);
  child.unref();
  const proc: ManagedProcess = {
    name,
    logFile: opts.logFile,
    exited,
    hasExited: () => done,
    pid() {
      if (done) return undefined;
      try {
        const pid = Number.parseInt(readFileSync(pidFile, 'utf8'), 10);
        return pid > 0 ? pid : undefined;
      } catch {
        return undefined;
      }
    },
    logTail(lines = 30) {
      try {
        return readFileSync(opts.logFile, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
      } catch {
        return '';
      }
    },
    async stop(timeoutMs = 15_000) {
      if (done) return;
      // Keep the event loop alive until the server is really gone.
      child.ref();
      child.stdin?.end();
      const timer = new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), timeoutMs).unref());
      if ((await Promise.race([exited, timer])) === 'timeout' && child.pid) {
        // The watchdog's own grace period passed too: kill its whole process group.
        try {
          process.kill(-child.pid, 'SIGKILL');
        } catch {
          // already gone
        }
      }
    },
  };
  return proc;
}

/** Polls `check` until it returns true; fails early when the process died, with its log. */
export async function waitUntil(
  proc: ManagedProcess,
  what: string,
  check: () => Promise<boolean>,
  timeoutMs = 90_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (proc.hasExited())
      throw new Error(
        `${proc.name} exited before it was ${what}. Last log lines (${proc.logFile}):\n${proc.logTail()}`,
      );
    try {
      if (await check()) return;
    } catch {
      // not up yet
    }
    if (Date.now() > deadline)
      throw new Error(
        `${proc.name} was not ${what} within ${timeoutMs / 1000}s. Last log lines (${proc.logFile}):\n${proc.logTail()}`,
      );
    await new Promise((r) => setTimeout(r, 200));
  }
}
