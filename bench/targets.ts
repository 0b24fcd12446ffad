// Issue 38's targets: this product beside upstream lifecycle-manager, per runtime, in the
// topology production has. Ratios against upstream's column when upstream ran in the same bench
// (--beside-upstream), or against the figures of an earlier report's upstream run
// (--upstream-from: the 100 × 3 and 1000 × 3 runs are held to what upstream spent at 20 × 3).

/** What upstream spent, measured by the bench the same way as this product (./upstream.ts). */
export interface UpstreamFigures {
  version: string;
  /** Where the figures come from: this run, or the report named. */
  source: string;
  kymas: number;
  allReadySeconds: number;
  /** Its one process's CPU over the install, per module install. */
  installCpuMsPerModule: number;
  peakRssMB: number;
  /** The one-wave promotion: last Kyma status on the new version, last target cluster with the new manager, CPU. */
  promotion: { lastSeconds: number; inClusterLastSeconds: number; cpuSeconds: number };
  idleCpuSecondsPerMinute: number;
  /** API requests per module install (counted as this product's are). */
  requestsPerInstall: number;
}

/** What of a report the targets hold (a BenchReport, ./report.ts). */
export interface TargetInput {
  installCpuMsPerModule: number;
  klmPeakRssMB?: number;
  temporalPeakRssMB?: number;
  allReadySeconds: number;
  idleCpuSecondsPerMinute: number;
  promotion: { inClusterLastSeconds: number; cpuSeconds?: number };
  requests: { engine: { total: number } };
  historyEventsPerModuleInstall: number;
  workerRssPerRuntimeMB?: number;
  upstream?: UpstreamFigures;
}

export interface TargetRow {
  figure: string;
  value: string;
  upstream: string;
  /** value ÷ upstream, where both exist. */
  ratio?: number;
  target: string;
  /** undefined: not measurable in this run (no upstream figures). */
  met?: boolean;
}

const f = (x: number, d = 1) => x.toFixed(d);

/** A row held to `limit` × upstream's figure. */
function ratioRow(
  figure: string,
  ours: number,
  theirs: number | undefined,
  limit: number,
  show: (x: number) => string,
): TargetRow {
  const ratio = theirs === undefined || theirs <= 0 ? undefined : ours / theirs;
  return {
    figure,
    value: show(ours),
    upstream: theirs === undefined ? 'not measured' : show(theirs),
    ...(ratio === undefined ? {} : { ratio, met: ratio <= limit }),
    target: `≤ ${limit} × upstream`,
  };
}

/** `workers`: how the figures that add up all workers name them (`worker`, `2 workers (sum)`). */
export function issue38Rows(r: TargetInput, workers = 'worker'): TargetRow[] {
  const u = r.upstream;
  const ms = (x: number) => `${f(x, 0)} ms`;
  const mb = (x: number) => `${f(x, 0)} MB`;
  const s = (x: number) => `${f(x)} s`;
  const perRuntime = r.workerRssPerRuntimeMB;
  return [
    ratioRow(
      `CPU of ${workers} + bridge + Temporal per module install`,
      r.installCpuMsPerModule,
      u?.installCpuMsPerModule,
      1.0,
      ms,
    ),
    ratioRow(
      `peak RSS of ${workers} + bridge (Temporal beside: ${mb(r.temporalPeakRssMB ?? 0)})`,
      r.klmPeakRssMB ?? NaN,
      u?.peakRssMB,
      1.5,
      mb,
    ),
    ratioRow(
      'promotion: last target cluster with the new manager',
      r.promotion.inClusterLastSeconds,
      u?.promotion.inClusterLastSeconds,
      1.0,
      s,
    ),
    ratioRow('all Ready', r.allReadySeconds, u?.allReadySeconds, 0.4, s),
    ratioRow(
      `idle CPU of ${workers} + bridge`,
      r.idleCpuSecondsPerMinute,
      u?.idleCpuSecondsPerMinute,
      1.5,
      (x) => `${f(x, 2)} CPU-s/min`,
    ),
    ratioRow(
      'CPU of a promotion (one wave)',
      r.promotion.cpuSeconds ?? NaN,
      u?.promotion.cpuSeconds,
      1.5,
      (x) => `${f(x)} CPU-s`,
    ),
    ratioRow('API requests per module install', r.requests.engine.total, u?.requestsPerInstall, 0.5, (x) => f(x)),
    {
      figure: 'history events per module install',
      value: f(r.historyEventsPerModuleInstall),
      upstream: '–',
      target: '≤ 8',
      met: r.historyEventsPerModuleInstall <= 8,
    },
    {
      figure: 'worker RSS per runtime at rest (slope over the growth series)',
      value: perRuntime === undefined ? 'one fleet size: no slope' : `${f(perRuntime, 2)} MB`,
      upstream: '–',
      target: '≤ 0.5 MB',
      ...(perRuntime === undefined ? {} : { met: perRuntime <= 0.5 }),
    },
  ];
}

export function renderTargets(r: TargetInput, workers = 'worker'): string[] {
  const u = r.upstream;
  return [
    "## Issue 38's targets: this product beside upstream, per runtime",
    '',
    `| figure | this product | upstream lifecycle-manager ${u?.version ?? ''} | ratio | target | |`,
    '| --- | --- | --- | --- | --- | --- |',
    ...issue38Rows(r, workers).map(
      (x) =>
        `| ${x.figure} | ${x.value} | ${x.upstream} | ${x.ratio === undefined ? '–' : f(x.ratio, 2)} | ${x.target} | ` +
        `${x.met === undefined ? 'not measured' : x.met ? 'met' : '**missed**'} |`,
    ),
    '',
    u
      ? `Idle CPU: with all Ready. Upstream's column: ${u.source} (${u.kymas} Kymas); its CPU and peak RSS by its process id, its API ` +
        'requests from the same API server metrics, its promotion by Kyma status and by the new manager ' +
        "in each target cluster, as this product's."
      : "Idle CPU: with all Ready. Upstream's column: not measured in this run (`--beside-upstream " +
        "<binary>`, or `--upstream-from <report.json>` for an earlier run's).",
    '',
  ];
}
