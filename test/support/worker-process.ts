// The worker as an operator runs it, for tests that kill it or measure it: a process of its own
// (node itself with tsx as a loader, so that a signal hits the worker and not a wrapper) that a
// SIGKILL ends at once; an exit nobody asked for is recorded as a crash, with the end of its stderr.
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';

/** Clock ticks per second of /proc's CPU times (USER_HZ: 100 on Linux). */
const TICKS = 100;

/** The worker as an operator runs it: a process of its own that a SIGKILL ends at once. */
export class WorkerProcess {
  private proc?: ChildProcess;
  private stderr = '';
  private killing = false;
  readonly crashes: string[] = [];

  constructor(
    private readonly env: NodeJS.ProcessEnv,
    private readonly log: (line: string) => void,
  ) {}

  start(extra: NodeJS.ProcessEnv = {}): void {
    this.stderr = '';
    this.killing = false;
    const proc = spawn(process.execPath, ['--import', 'tsx', 'src/workers/main.ts'], {
      env: { ...this.env, ...extra },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    proc.stderr.on('data', (d: Buffer) => (this.stderr = (this.stderr + d.toString()).slice(-4000)));
    proc.on('exit', (code, signal) => {
      if (this.killing) return;
      const line = `worker exited by itself (code ${code}, signal ${signal}): ${this.stderr.slice(-1500)}`;
      this.crashes.push(line);
      this.log(line);
    });
    this.proc = proc;
  }

  /** CPU seconds the running worker used so far, and its peak RSS in MB (Linux /proc). */
  usage(): { cpuSeconds: number; peakRssMB: number } {
    const pid = this.proc?.pid;
    if (!pid) throw new Error('the worker does not run');
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The fields after the command's closing parenthesis: utime and stime are the 12th and 13th.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const cpuSeconds = (Number(fields[11]) + Number(fields[12])) / TICKS;
    const hwm = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return { cpuSeconds, peakRssMB: Math.round(Number(hwm?.[1] ?? 0) / 1024) };
  }

  /** Whether it runs (it did not exit since its start). */
  running(): boolean {
    return this.proc !== undefined && this.proc.exitCode === null && this.proc.signalCode === null;
  }

  async kill(): Promise<void> {
    const proc = this.proc;
    if (!proc || proc.exitCode !== null || proc.signalCode !== null) return;
    this.killing = true;
    const exited = new Promise((r) => proc.once('exit', r));
    proc.kill('SIGKILL');
    await exited;
  }
}
