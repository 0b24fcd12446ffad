// The benchmark's report: the figures, and the targets they are held against.
export interface BenchReport {
  date: string;
  machine: { cores: number; node: string };
  kymas: number;
  modulesPerKyma: number;
  /** Clusters the Kymas target through kubeconfig Secrets (0: the control plane itself). */
  targetClusters: number;
  allReadySeconds: number;
  /** CPU seconds by process during the main install: where the time went. */
  installCpu: { process: string; cpuSeconds: number }[];
  perKymaReadySeconds: { p50: number; p95: number; p99: number };
  promotion: { firstSeconds: number; lastSeconds: number };
  statusPropagation: { samples: number; p50Seconds: number; p95Seconds: number };
  idleCpuSecondsPerMinute: number;
  historyEventsPerModuleInstall: number;
  peakRssMB: number;
  growth: { kymas: number; allReadySeconds: number }[];
  loop: { seconds: number; ratio: number };
  shared: string;
}

export function percentile(values: number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

const f = (x: number, d = 2) => x.toFixed(d);

export function renderReport(r: BenchReport): string {
  const target = (ok: boolean) => (ok ? 'met' : '**missed**');
  return [
    `# Fleet benchmark, ${r.date}`,
    '',
    `${r.kymas} Kymas × ${r.modulesPerKyma} modules on ${r.machine.cores} cores (Node ${r.machine.node}), ${r.targetClusters ? `targeting ${r.targetClusters} further API server(s) through kubeconfig Secrets` : 'targeting the control-plane cluster'}.`,
    '',
    '| figure | value | target (1000 × 3) |',
    '| --- | --- | --- |',
    `| all Ready | ${f(r.allReadySeconds, 1)} s | ≤ 180 s: ${target(r.allReadySeconds <= 180)} |`,
    `| per-Kyma time to Ready p50 / p95 / p99 | ${f(r.perKymaReadySeconds.p50)} / ${f(r.perKymaReadySeconds.p95)} / ${f(r.perKymaReadySeconds.p99)} s | |`,
    `| promotion: first / last Kyma on the new version | ${f(r.promotion.firstSeconds)} / ${f(r.promotion.lastSeconds)} s | |`,
    `| status propagation p50 / p95 (${r.statusPropagation.samples} samples) | ${f(r.statusPropagation.p50Seconds, 3)} / ${f(r.statusPropagation.p95Seconds, 3)} s | p95 ≤ 1 s: ${target(r.statusPropagation.p95Seconds <= 1)} |`,
    `| idle CPU of worker + bridge | ${f(r.idleCpuSecondsPerMinute)} CPU-s/min | ≤ 3: ${target(r.idleCpuSecondsPerMinute <= 3)} |`,
    `| history events per module install | ${f(r.historyEventsPerModuleInstall, 1)} | ≤ 30: ${target(r.historyEventsPerModuleInstall <= 30)} |`,
    `| peak RSS of the worker process | ${f(r.peakRssMB, 0)} MB | |`,
    `| plain apply loop over the same objects | ${f(r.loop.seconds, 1)} s; engine / loop = ${f(r.loop.ratio)} | ≤ 3×: ${target(r.loop.ratio <= 3)} |`,
    '',
    `CPU seconds by process while the ${r.kymas} Kymas installed (${f(r.allReadySeconds, 1)} s of wall time, ${r.machine.cores} cores: at most ${f(r.allReadySeconds * r.machine.cores, 0)} CPU-s):`,
    '',
    '| process | CPU-s | share of the machine |',
    '| --- | --- | --- |',
    ...r.installCpu.map((c) => `| ${c.process} | ${f(c.cpuSeconds, 1)} | ${f((100 * c.cpuSeconds) / (r.allReadySeconds * r.machine.cores), 0)} % |`),
    '',
    `Together ${f((100 * r.installCpu.reduce((a, c) => a + c.cpuSeconds, 0)) / (r.allReadySeconds * r.machine.cores), 0)} % of the machine: near 100 % means the install was CPU-bound, and the rows above say who spent it.`,
    '',
    'Time to all Ready by fleet size:',
    '',
    '| Kymas | all Ready |',
    '| --- | --- |',
    ...r.growth.map((g) => `| ${g.kymas} | ${f(g.allReadySeconds, 1)} s |`),
    '',
    `What is shared: ${r.shared}`,
    '',
  ].join('\n');
}
