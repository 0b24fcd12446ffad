// The benchmark's report: the figures, and the targets they are held against.
export interface BenchReport {
  date: string;
  machine: { cores: number; node: string };
  kymas: number;
  modulesPerKyma: number;
  allReadySeconds: number;
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
    `${r.kymas} Kymas × ${r.modulesPerKyma} modules on ${r.machine.cores} cores (Node ${r.machine.node}).`,
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
