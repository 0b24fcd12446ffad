// CPU seconds by component, from /proc: which process of the stack a phase of the benchmark
// kept busy. Linux only; elsewhere the breakdown is empty.
import { readdir, readFile } from 'node:fs/promises';

const TICKS_PER_SECOND = 100;

/** utime + stime per process name (the kernel's `comm`), summed over its processes. */
export async function cpuByProcess(): Promise<Map<string, number>> {
  const totals = new Map<string, number>();
  const pids = await readdir('/proc').catch(() => [] as string[]);
  await Promise.all(pids.filter((p) => /^\d+$/.test(p)).map(async (pid) => {
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '');
    // "pid (comm) state ..." – comm may contain spaces and parentheses: split at the last ')'.
    const close = stat.lastIndexOf(')');
    if (close < 0) return;
    const comm = stat.slice(stat.indexOf('(') + 1, close);
    const fields = stat.slice(close + 2).split(' ');
    const ticks = Number(fields[11]) + Number(fields[12]);
    totals.set(comm, (totals.get(comm) ?? 0) + ticks / TICKS_PER_SECOND);
  }));
  return totals;
}

/** CPU seconds each process name used between two snapshots, busiest first (≥ 0.5 s only). */
export function cpuSince(before: Map<string, number>, after: Map<string, number>): { process: string; cpuSeconds: number }[] {
  return [...after]
    .map(([process, s]) => ({ process, cpuSeconds: Math.round((s - (before.get(process) ?? 0)) * 10) / 10 }))
    .filter((x) => x.cpuSeconds >= 0.5)
    .sort((a, b) => b.cpuSeconds - a.cpuSeconds);
}
