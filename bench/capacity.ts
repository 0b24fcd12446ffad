// `npm run bench -- --capacity`: what each runtime costs, from a fleet as large as the machine
// holds. The install grows in steps (--sizes); after each step the bench reads every process's
// memory and each API server's open watches, so that per-runtime figures are slopes between
// steps (start-up costs drop out) instead of totals over a count. Then an idle window: each
// process's CPU, the workflow tasks and activities the workers ran (SDK metrics), over the
// runtimes. No status samples, promotions or loop baseline: those are the full bench's.

/** The fleet after one install step, with everything Ready. */
export interface CapacityStep {
  /** Runtimes (Kymas, one simulated cluster each) installed so far. */
  runtimes: number;
  /** How long this step's Kymas took to be all Ready (or until --step-timeout), s. */
  allReadySeconds: number;
  /** This step's Kymas not Ready when the step ended (--step-timeout). */
  notReady: string[];
  /** The bridges' V8 heap in use (their own /metrics), summed, MB. */
  bridgeHeapMB: number;
  bridgeRssMB: number;
  workerRssMB: number;
  temporalRssMB: number;
  /** Watches open now, by API server. */
  watches: Record<string, number>;
}

export interface CapacityReport {
  date: string;
  machine: { cores: number; node: string };
  modulesPerKyma: number;
  bridges: number;
  workers: number;
  targetServers: number;
  steps: CapacityStep[];
  /** Slopes between the first and the last step, per runtime. */
  perRuntime: {
    bridgeHeapMB: number;
    bridgeRssMB: number;
    workerRssMB: number;
    temporalRssMB: number;
    /** Watches per runtime on the target API servers together. */
    targetWatches: number;
  };
  install: {
    /** The last step's install: CPU of workers, bridges and Temporal per module install, ms. */
    cpuMsPerModule: { workers: number; bridges: number; temporal: number };
    historyEventsPerModuleInstall: number;
  };
  idle: {
    seconds: number;
    /** CPU per runtime and minute at rest, s. */
    cpuSecondsPerRuntimeMinute: { workers: number; bridges: number; temporal: number };
    /** What the workers ran at rest, per runtime and hour (drift timers, probes' news). */
    perRuntimeHour: { workflowTasks: number; activities: number; localActivities: number };
    driftIntervalMinutes: number;
  };
  /** Peak RSS of each process over the run, MB. */
  peakRssMB: Record<string, number>;
  shared: string;
}

/** The slope of `y` over runtimes between the first and the last step. */
export function slope(steps: CapacityStep[], y: (s: CapacityStep) => number): number {
  const first = steps[0];
  const last = steps.at(-1);
  if (!first || !last || last.runtimes === first.runtimes) return NaN;
  return (y(last) - y(first)) / (last.runtimes - first.runtimes);
}

const f = (x: number, digits = 1) => (Number.isFinite(x) ? x.toFixed(digits) : 'n/a');

export function renderCapacity(r: CapacityReport): string {
  const servers = Object.keys(r.steps[0]?.watches ?? {});
  const p = r.perRuntime;
  return [
    `# Capacity: ${r.steps.at(-1)?.runtimes ?? 0} simulated runtimes × ${r.modulesPerKyma} module(s), ${r.date}`,
    '',
    `${r.bridges} bridge(s), ${r.workers} worker(s), ${r.targetServers} target API server(s) on ${r.machine.cores} cores (Node ${r.machine.node}). ${r.shared}`,
    '',
    '## After each install step',
    '',
    `| runtimes | step all Ready (s) | not Ready | bridges heap (MB) | bridges RSS (MB) | ` +
      `workers RSS (MB) | Temporal RSS (MB) | ${servers.map((s) => `watches ${s}`).join(' | ')} |`,
    `| --- | --- | --- | --- | --- | --- | --- | ${servers.map(() => '---').join(' | ')} |`,
    ...r.steps.map(
      (s) =>
        `| ${s.runtimes} | ${f(s.allReadySeconds)} | ` +
        `${s.notReady.length ? s.notReady.join(', ') : 'none'} | ${f(s.bridgeHeapMB)} | ` +
        `${f(s.bridgeRssMB)} | ${f(s.workerRssMB)} | ${f(s.temporalRssMB)} | ` +
        `${servers.map((x) => s.watches[x] ?? 0).join(' | ')} |`,
    ),
    '',
    '## Per runtime',
    '',
    '| what | figure |',
    '| --- | --- |',
    `| bridge heap / RSS per runtime (slope between the first and the last step) | ${f(p.bridgeHeapMB, 3)} MB / ${f(p.bridgeRssMB, 3)} MB |`,
    `| worker RSS per runtime (slope) | ${f(p.workerRssMB, 3)} MB |`,
    `| Temporal (dev server) RSS per runtime (slope) | ${f(p.temporalRssMB, 3)} MB |`,
    `| watches per runtime on the target API servers (slope) | ${f(p.targetWatches, 2)} |`,
    `| CPU per module install (last step): workers / bridges / Temporal | ` +
      `${f(r.install.cpuMsPerModule.workers)} / ${f(r.install.cpuMsPerModule.bridges)} / ` +
      `${f(r.install.cpuMsPerModule.temporal)} ms |`,
    `| Temporal history events per module install | ${f(r.install.historyEventsPerModuleInstall)} |`,
    `| idle CPU per runtime (${f(r.idle.seconds, 0)} s window): workers / bridges / Temporal | ` +
      `${f(r.idle.cpuSecondsPerRuntimeMinute.workers * 1000, 2)} / ` +
      `${f(r.idle.cpuSecondsPerRuntimeMinute.bridges * 1000, 2)} / ` +
      `${f(r.idle.cpuSecondsPerRuntimeMinute.temporal * 1000, 2)} CPU-ms per minute |`,
    `| at rest per runtime and hour (drift every ${f(r.idle.driftIntervalMinutes, 0)} min): ` +
      `workflow tasks / activities / local activities | ` +
      `${f(r.idle.perRuntimeHour.workflowTasks, 2)} / ${f(r.idle.perRuntimeHour.activities, 2)} / ` +
      `${f(r.idle.perRuntimeHour.localActivities, 2)} |`,
    '',
    `Peak RSS over the run (MB): ${Object.entries(r.peakRssMB)
      .map(([k, v]) => `${k} ${f(v, 0)}`)
      .join(', ')}.`,
    '',
  ].join('\n');
}
