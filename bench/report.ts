// The benchmark's report: the figures, and issue 38's targets they are held against (./targets.ts).
import type { PerVerb } from './apiserver-metrics';
import type { PhaseCpu } from './processes';
import type { TaskCounts } from './sdk-metrics';
import { renderConcerns, type ConcernCosts } from './concerns';
import { renderTargets, type UpstreamFigures } from './targets';

type Phases<T> = { install: T; idle: T; promotion: T; loop: T };

/** One worker process: its peak RSS and what it executed over the run (until the workers stopped, before the loop). */
export interface WorkerFigures extends TaskCounts {
  label: string;
  pid: number;
  peakRssMB: number;
}

export interface BenchReport {
  date: string;
  machine: { cores: number; node: string };
  kymas: number;
  modulesPerKyma: number;
  /** Clusters the Kymas target through kubeconfig Secrets (0: the control plane itself). */
  targetClusters: number;
  /** Whether every Kyma's Secret carried a client certificate of its own. */
  distinctCredentials: boolean;
  allReadySeconds: number;
  perKymaReadySeconds: { p50: number; p95: number; p99: number };
  /**
   * Seconds after the channel moved: first/last Kyma whose status shows the new version Ready;
   * first/last target cluster namespace holding the new manager image; the loop applying the new version.
   */
  promotion: {
    firstSeconds: number;
    lastSeconds: number;
    inClusterFirstSeconds: number;
    inClusterLastSeconds: number;
    loopSeconds: number;
    /** CPU of worker + bridge + Temporal over the promotion (absent in reports before issue 38). */
    cpuSeconds?: number;
  };
  /**
   * The next promotion by the default staged policy (its soak shortened to `soakSeconds`):
   * seconds after the channel moved, per wave the last Kyma Ready on the new version.
   */
  stagedPromotion: {
    firstSeconds: number;
    lastSeconds: number;
    inClusterLastSeconds: number;
    soakSeconds: number;
    waves: { size: number; lastSeconds: number }[];
    phase: string;
    completedSeconds: number;
    cpuSeconds: number;
  };
  /**
   * `--kill-worker`: a one-wave promotion during which the worker is SIGKILLed (once the first
   * Kyma shows the new version) and started again at once: its last Kyma Ready on the new version,
   * beside the one-wave promotion without a kill; workflow task timeouts after the kill.
   */
  killedPromotion?: {
    killAtSeconds: number;
    lastSeconds: number;
    baselineLastSeconds: number;
    delaySeconds: number;
    taskTimeouts: number;
    taskTimeoutsBeyondFirst: number;
    /** By kind (absent in reports before it). */
    taskTimeoutsByKind?: Record<string, number>;
  };
  statusPropagation: { samples: number; p50Seconds: number; p95Seconds: number };
  historyEventsPerModuleInstall: number;
  /** The sampled Kymas' history events per module install by kind (absent in reports before it). */
  historyKinds?: { kind: string; perInstall: number }[];
  growth: { kymas: number; allReadySeconds: number }[];
  loop: { seconds: number; ratio: number };
  /** API requests per module install by verb (engine: install phase; loop: its apply), and engine / loop. */
  requests: {
    engine: PerVerb;
    loop: PerVerb;
    ratio: number;
    quietSeconds: number;
    raw: { install: Record<string, number>; loop: Record<string, number>; quiet: Record<string, number> };
  };
  /** CPU seconds and memory by process id, per phase. */
  cpu: Phases<PhaseCpu[]>;
  phaseSeconds: Phases<number>;
  /** CPU seconds the whole machine spent per phase (everything on it, other users included). */
  machineCpuSeconds: Phases<number>;
  /** CPU of the workers (all of them) + bridge + Temporal during the install, per module install. */
  installCpuMsPerModule: number;
  /** The workers (all of them) + bridge with all Ready. */
  idleCpuSecondsPerMinute: number;
  /** The sum of the workers' peaks (one worker: its peak). */
  workerPeakRssMB: number;
  /** The worker processes on the one task queue (absent in reports before --workers: one worker, labelled `worker`). */
  workers?: WorkerFigures[];
  /** The bridge's cost per watched cluster (distinct kubeconfig): RSS before the first Kyma and at the end of the idle phase. */
  bridgePerCluster: {
    kubeconfigs: number;
    rssBeforeMB: number;
    rssAfterMB: number;
    rssMB: number;
    heapBeforeMB: number;
    heapAfterMB: number;
    heapMB: number;
    idleCpuSecondsPerMinute: number;
  };
  /** Watches open per API server before the first Kyma and at the end of the idle phase (absent in reports before they were counted). */
  watches?: Record<string, { before: number; after: number }>;
  /** Workflow task execution latency during the install, from the workers' SDK metrics (all of them); warnings in their output. */
  workflowTasks: {
    count: number;
    p99Seconds: number;
    p99Above: boolean;
    shareOverOneSecond: number;
    slowWarnings: number;
    /** The local activities those tasks ran (each one's own latency), absent in reports before it. */
    localActivities?: { count: number; p50Seconds: number; p99Seconds: number; p99Above: boolean };
  };
  shared: string;
  /** Upstream lifecycle-manager's figures, from this run or an earlier report (absent in reports before issue 38). */
  upstream?: UpstreamFigures;
  /** Peak RSS of worker(s) + bridge(s), or of the one process (`--one-process`); Temporal's beside it. */
  klmPeakRssMB?: number;
  temporalPeakRssMB?: number;
  /** Whether worker and bridge ran as one process (`klm run`). */
  oneProcess?: boolean;
  /** How long the sample managers held each module CR in Processing (`--processing-ms`; absent: 0). */
  sampleProcessingMs?: number;
  /** The workers' RSS growth per runtime across the growth series' steps (two sizes or more). */
  workerRssPerRuntimeMB?: number;
  /** Where an install's cost goes, by concern (./concerns.ts). */
  concerns?: ConcernCosts;
}

export function percentile(values: number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

const f = (x: number, d = 2) => x.toFixed(d);

/** How the figures that add up all workers name them: `worker`, or `2 workers (sum)`. */
function workersWord(r: BenchReport): string {
  const n = r.workers?.length ?? 1;
  return n === 1 ? 'worker' : `${n} workers (sum)`;
}

const SHARED_KUBECONFIGS =
  '; without --distinct-credentials many Kymas share a kubeconfig, so the per-cluster figure holds all their Kymas';

/** Which clusters the Kymas target, as the report's first line says it. */
function targeting(r: BenchReport): string {
  if (!r.targetClusters) return 'targeting the control-plane cluster';
  const own = r.distinctCredentials ? ', each Kyma with a client certificate of its own' : '';
  return `targeting ${r.targetClusters} further API server(s) through kubeconfig Secrets${own}`;
}

/** A process's peak RSS over the phases (0 when it is not in the report). */
function peakOf(r: BenchReport, label: string): number {
  return Math.max(
    0,
    ...(['install', 'idle', 'promotion', 'loop'] as const).map(
      (ph) => r.cpu[ph].find((c) => c.label === label)?.peakRssMB ?? 0,
    ),
  );
}

function cpuTable(r: BenchReport): string[] {
  const labels = r.cpu.install.map((c) => c.label);
  const cell = (p: PhaseCpu[], label: string) => f(p.find((c) => c.label === label)?.cpuSeconds ?? 0, 1);
  const peak = (label: string) => peakOf(r, label);
  return [
    `| process (pid) | install ${f(r.phaseSeconds.install, 0)} s | idle ` +
      `${f(r.phaseSeconds.idle, 0)} s | promotion ${f(r.phaseSeconds.promotion, 0)} s | loop ` +
      `${f(r.phaseSeconds.loop, 0)} s | peak RSS |`,
    '| --- | --- | --- | --- | --- | --- |',
    ...labels.map(
      (l) =>
        `| ${l} (${r.cpu.install.find((c) => c.label === l)!.pid}) | ${cell(r.cpu.install, l)} | ` +
        `${cell(r.cpu.idle, l)} | ${cell(r.cpu.promotion, l)} | ${cell(r.cpu.loop, l)} | ${peak(l)} ` +
        `MB |`,
    ),
    `| *whole machine (context: all processes, other users included)* | ` +
      `${f(r.machineCpuSeconds.install, 1)} | ${f(r.machineCpuSeconds.idle, 1)} | ` +
      `${f(r.machineCpuSeconds.promotion, 1)} | ${f(r.machineCpuSeconds.loop, 1)} | |`,
  ];
}

/** Each worker's CPU, peak RSS and share of the tasks (nothing for reports before --workers). */
function workersTable(r: BenchReport): string[] {
  if (!r.workers) return [];
  const ws = r.workers;
  const cpu = (p: PhaseCpu[], label: string) => p.find((c) => c.label === label)?.cpuSeconds ?? 0;
  const sum = (g: (w: WorkerFigures) => number) => ws.reduce((a, w) => a + g(w), 0);
  const share = (g: (w: WorkerFigures) => number, w: WorkerFigures) => {
    const all = sum(g);
    return `${g(w)} (${all ? f((100 * g(w)) / all, 1) : '–'} %)`;
  };
  const kinds = [
    (w: WorkerFigures) => w.workflowTasks,
    (w: WorkerFigures) => w.activities,
    (w: WorkerFigures) => w.localActivities,
  ];
  return [
    '## Workers',
    '',
    '| worker (pid) | CPU-s install | CPU-s promotion | peak RSS | workflow tasks | activities | local activities |',
    '| --- | --- | --- | --- | --- | --- | --- |',
    ...ws.map(
      (w) =>
        `| ${w.label} (${w.pid}) | ${f(cpu(r.cpu.install, w.label), 1)} | ` +
        `${f(cpu(r.cpu.promotion, w.label), 1)} | ${f(w.peakRssMB, 0)} MB | ` +
        `${kinds.map((g) => share(g, w)).join(' | ')} |`,
    ),
    ...(ws.length > 1
      ? [
          `| all ${ws.length} (sum) | ${f(
            sum((w) => cpu(r.cpu.install, w.label)),
            1,
          )} | ${f(
            sum((w) => cpu(r.cpu.promotion, w.label)),
            1,
          )} | ${f(
            sum((w) => w.peakRssMB),
            0,
          )} MB | ${kinds.map((g) => sum(g)).join(' | ')} |`,
        ]
      : []),
    '',
    `${ws.length} worker process(es) on the one task queue. Tasks each worker executed over the ` +
      `run (from its start until the workers stopped, before the loop), with its share of all ` +
      `workers', from its own SDK metrics: the counts of the histograms ` +
      `\`temporal_workflow_task_execution_latency\`, \`temporal_activity_execution_latency\` and ` +
      `\`temporal_local_activity_execution_latency\`. A workflow's tasks go to the worker that ` +
      `holds it in its cache (the SDK's sticky queue; a task that waits there too long goes back ` +
      `to the shared queue), so the workflow task shares mostly follow which worker took each ` +
      `Kyma's first task; activities go to whichever worker polls first; local activities run in ` +
      `the worker that runs their workflow's task. CPU by pid from /proc; peak RSS is each ` +
      `worker's VmHWM, and the sum of the peaks (an upper bound: they need not coincide) is the ` +
      `figure the targets above hold. Figures above that name the workers add up all of them.`,
    '',
  ];
}

function requestTable(r: BenchReport): string[] {
  const verbs = Object.keys(r.requests.engine.byVerb).filter(
    (v) => r.requests.engine.byVerb[v]! >= 0.05 || (r.requests.loop.byVerb[v] ?? 0) >= 0.05,
  );
  return [
    '| verb | engine | loop |',
    '| --- | --- | --- |',
    ...verbs.map((v) => `| ${v} | ${f(r.requests.engine.byVerb[v]!, 1)} | ${f(r.requests.loop.byVerb[v] ?? 0, 1)} |`),
    `| all | ${f(r.requests.engine.total, 1)} | ${f(r.requests.loop.total, 1)} |`,
  ];
}

/** Where a module install's history events go, by kind (nothing for reports before it was measured). */
function historyTable(r: BenchReport): string[] {
  if (!r.historyKinds) return [];
  return [
    '## History events per module install, by kind',
    '',
    '| kind | events |',
    '| --- | --- |',
    ...r.historyKinds.map((k) => `| ${k.kind} | ${f(k.perInstall, 2)} |`),
    '',
    "Over the sampled Kymas' whole histories (install, then whatever came before the sample was " +
      "taken). An activity's and a workflow task's events (scheduled, started, completed) count " +
      'with it; a local activity leaves one marker.',
    '',
  ];
}

export function renderReport(r: BenchReport): string {
  const installs = r.kymas * r.modulesPerKyma;
  const b = r.bridgePerCluster;
  return [
    `# Fleet benchmark, ${r.date}`,
    '',
    `${r.kymas} Kymas × ${r.modulesPerKyma} modules on ${r.machine.cores} cores (Node ` +
      `${r.machine.node}), ` +
      `${targeting(r)}.` +
      (r.sampleProcessingMs
        ? ` The sample managers held each module CR in Processing for ${r.sampleProcessingMs} ms (--processing-ms).`
        : ''),
    '',
    ...renderTargets({ ...r, klmPeakRssMB: r.klmPeakRssMB ?? r.workerPeakRssMB + peakOf(r, 'bridge') }, workersWord(r)),
    ...renderConcerns(r),
    '## Other figures',
    '',
    '| figure | value |',
    '| --- | --- |',
    `| ${workersWord(r)} peak RSS (VmHWM) | ${f(r.workerPeakRssMB, 0)} MB${
      r.workers && r.workers.length > 1 ? ` (${r.workers.map((w) => f(w.peakRssMB, 0)).join(' + ')})` : ''
    } |`,
    `| per-Kyma time to Ready p50 / p95 / p99 | ${f(r.perKymaReadySeconds.p50)} / ${f(r.perKymaReadySeconds.p95)} / ${f(r.perKymaReadySeconds.p99)} s |`,
    `| promotion, Kyma status: first / last Kyma on the new version | ${f(r.promotion.firstSeconds)} / ${f(r.promotion.lastSeconds)} s |`,
    `| promotion, target clusters: first / last new manager Deployment | ${f(r.promotion.inClusterFirstSeconds)} / ${f(r.promotion.inClusterLastSeconds)} s |`,
    `| staged promotion (default waves, soak ${r.stagedPromotion.soakSeconds} s), Kyma status: ` +
      `first / last Kyma on the new version | ${f(r.stagedPromotion.firstSeconds)} / ` +
      `${f(r.stagedPromotion.lastSeconds)} s (rollout ${r.stagedPromotion.phase} after ` +
      `${f(r.stagedPromotion.completedSeconds, 1)} s) |`,
    `| staged promotion, each wave's last Kyma Ready (size: seconds) | ${r.stagedPromotion.waves.map((w) => `${w.size}: ${f(w.lastSeconds, 1)}`).join(', ')} |`,
    `| staged promotion, last target cluster with the new manager / CPU of ${workersWord(r)} + ` +
      `bridge + Temporal | ${f(r.stagedPromotion.inClusterLastSeconds)} s / ` +
      `${f(r.stagedPromotion.cpuSeconds, 1)} CPU-s |`,
    `| status propagation p50 | ${f(r.statusPropagation.p50Seconds, 3)} s |`,
    ...(r.workflowTasks.localActivities
      ? [
          `| local activities during the install (${r.workflowTasks.localActivities.count}): p50 / p99 of one's own ` +
            `latency | ${f(r.workflowTasks.localActivities.p50Seconds, 3)} / ` +
            `${r.workflowTasks.localActivities.p99Above ? '> ' : '≤ '}${f(r.workflowTasks.localActivities.p99Seconds, 3)} s |`,
        ]
      : []),
    `| slow or stuck workflow task warnings in the ` +
      `${r.workers && r.workers.length > 1 ? "workers' output (all)" : "worker's output"} | ` +
      `${r.workflowTasks.slowWarnings} |`,
    `| bridge RSS before the first Kyma / after the idle minute | ${f(b.rssBeforeMB, 0)} / ${f(b.rssAfterMB, 0)} MB |`,
    `| bridge V8 heap in use before the first Kyma / after the idle minute | ${f(b.heapBeforeMB, 1)} / ${f(b.heapAfterMB, 1)} MB |`,
    `| bridge per watched cluster (${b.kubeconfigs} distinct kubeconfigs): heap growth / RSS ` +
      `growth / idle CPU | ${f(b.heapMB, 2)} MB / ${f(b.rssMB, 2)} MB / ` +
      `${f(b.idleCpuSecondsPerMinute, 3)} CPU-s/min |`,
    ...(r.watches
      ? [
          `| watches open per API server, before the first Kyma → after the idle phase (the clusters' own controllers' included) | ${Object.entries(
            r.watches,
          )
            .map(([server, w]) => `${server}: ${w.before} → ${w.after}`)
            .join('; ')} |`,
        ]
      : []),
    '',
    "Workflow task execution latency is the SDK's `temporal_workflow_task_execution_latency` " +
      '(milliseconds; buckets 1 ms … 1 s, then +Inf) over the Kyma workflows (which run their ' +
      "modules): a task's execution includes the local activities it runs (control-plane reads " +
      'and status writes), so a slow API server shows here too.',
    '',
    `The bridge's figures per cluster are upper bounds: its growth includes what it holds per ` +
      `Kyma (Kymas, Manifests, Secrets in its caches), not only per ` +
      `cluster${r.distinctCredentials ? '' : SHARED_KUBECONFIGS}. ` +
      `Its RSS is mostly what start-up left behind and moves by tens of MB as the garbage ` +
      `collector returns pages; the heap in use (from its own /metrics) is the steadier figure.`,
    '',
    ...historyTable(r),
    `## API requests per module install (${installs} module installs)`,
    '',
    ...requestTable(r),
    '',
    `From the kube-apiservers' \`apiserver_request_total\` (control plane and every target API ` +
      `server), as the difference around the install (creating the Kymas until all Ready) and ` +
      `around the loop. Counted: every resource but those only the clusters' own controllers and ` +
      `kwok write (pods, ReplicaSets, nodes, leases, endpoints, ControllerRevisions, LimitRanges, ` +
      `APIServices) and, in target clusters, Events, status subresources and the ConfigMap and ` +
      `ServiceAccount the controller-manager creates in each new namespace (all the controllers' ` +
      `and the sample module managers', for the engine and the loop alike; the engine neither ` +
      `writes nor reads any of them); the bench's own POSTs of the Kymas and their Secrets are ` +
      `taken out. What remains of the background is removed by subtracting each (server, verb, ` +
      `resource) key's rate in a quiet window of ${f(r.requests.quietSeconds, 0)} s before the ` +
      `first Kyma. A WATCH is counted when it ends, so watches show up where their timeout falls. ` +
      `Server-side apply shows as APPLY. The loop's figure is per module it applied (its ` +
      `namespace included); the loop runs with workers and bridge stopped.`,
    '',
    '## CPU seconds and memory by process',
    '',
    ...cpuTable(r),
    '',
    `By pid, from /proc (utime + stime; peak RSS = VmHWM). Each worker and the bridge are ` +
      `processes of their own; "bench" holds the sample module managers, the measuring watches ` +
      `and, in the loop phase, the loop itself (workers and bridge are stopped by then). A ` +
      `supervised server that restarted counts only from its new pid.`,
    '',
    ...workersTable(r),
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
