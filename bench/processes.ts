// CPU seconds and memory by process id, from /proc (Linux only; elsewhere the figures are 0).
// A process is named by the bench (worker, bridge, Temporal, each kube-apiserver, …) and found
// by a function, since a supervised server that restarted has a new pid: the current one is read
// at each snapshot (CPU of a server's earlier incarnations is then lost, and the phase shows less).
import { readFileSync } from 'node:fs';

const TICKS_PER_SECOND = 100;

export interface Tracked {
  label: string;
  pid(): number | undefined;
}

export interface ProcSample {
  /** utime + stime, seconds. */
  cpuSeconds: number;
  /** Resident set now, and its peak since the process started (VmHWM), MB. */
  rssMB: number;
  peakRssMB: number;
}

/** utime + stime in seconds, from a `/proc/…/stat` line (a process's or a thread's). */
export function cpuSecondsOf(stat: string): number {
  // "pid (comm) state ...": comm may contain spaces and parentheses, so split at the last ')'.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND;
}

/** One process's CPU and memory now; undefined when it is gone. */
export function sample(pid: number | undefined): ProcSample | undefined {
  if (!pid) return undefined;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (key: string) => Number(new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? 0);
    return {
      cpuSeconds: cpuSecondsOf(stat),
      rssMB: kb('VmRSS') / 1024,
      peakRssMB: kb('VmHWM') / 1024,
    };
  } catch {
    return undefined;
  }
}

export type Snapshot = Map<string, ProcSample & { pid: number }>;

export function snapshot(tracked: Tracked[]): Snapshot {
  const s: Snapshot = new Map();
  for (const t of tracked) {
    const pid = t.pid();
    const x = sample(pid);
    if (x && pid) s.set(t.label, { ...x, pid });
  }
  return s;
}

export interface PhaseCpu {
  label: string;
  pid: number;
  cpuSeconds: number;
  /** RSS at the end of the phase and the process's peak so far, MB. */
  rssMB: number;
  peakRssMB: number;
}

/** CPU each tracked process used between two snapshots (a restarted server: only its new pid's). */
export function phase(before: Snapshot, after: Snapshot): PhaseCpu[] {
  return [...after].map(([label, a]) => {
    const b = before.get(label);
    const cpu = b && b.pid === a.pid ? a.cpuSeconds - b.cpuSeconds : a.cpuSeconds;
    return {
      label,
      pid: a.pid,
      cpuSeconds: Math.round(cpu * 100) / 100,
      rssMB: Math.round(a.rssMB),
      peakRssMB: Math.round(a.peakRssMB),
    };
  });
}

/** Seconds of CPU the whole machine spent (all cores, from /proc/stat), for context. */
export function machineCpuSeconds(): number {
  try {
    const cpu = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
    // user nice system idle iowait irq softirq steal: busy = all but idle and iowait.
    return (cpu.reduce((a, b) => a + b, 0) - cpu[3]! - cpu[4]!) / TICKS_PER_SECOND;
  } catch {
    return 0;
  }
}
