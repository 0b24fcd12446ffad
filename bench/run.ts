// npm run bench [-- --kymas 1000 --modules 3 --sizes 100,1000 --samples 200 --idle 60 --soak 30 --smoke]
//   [--topology production|shared] [--clusters N] [--distinct-credentials] [--one-process]
//   a given stack instead of a local one: --kubeconfig F --temporal-address H:P --registry H:P
//   [--temporal-namespace NS] [--target-kubeconfigs F1,F2]
//   [--quiet SECONDS] [--workers N] [--bridges N] [--capacity [--step-timeout SECONDS]]
//   [--kill-worker] [--beside-upstream BINARY | --upstream-from REPORT.json] [--processing-ms MS]
// Starts the local stack with further clusters, runs `workers` workers (default 1, on one task
// queue) and the bridge as processes of their own (--one-process: `klm run`, both in one) and the
// sample managers in this one, installs N Kymas × M modules (Kyma i on cluster i mod clusters,
// through a kubeconfig Secret) and measures; writes bench/results/<date>.json and .md.
// The topology (./topology.ts): by default production's, a cluster per Kyma (up to
// MAX_LOCAL_CLUSTERS API servers; beyond, each Kyma a simulated runtime of its own on them,
// ./credentials.ts); `--topology shared`, Kymas sharing two clusters' kubeconfigs.
// --capacity measures what each runtime costs (./capacity.ts).
import { execFileSync } from 'node:child_process';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { cpus } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Client, Connection } from '@temporalio/client';
import { SampleManager } from '../src/samples/manager';
import type { Kyma } from '../src/api/kyma';
import { kymaWorkflowId } from '../src/api/names';
import { API_VERSION, ROLLOUT_POLICY_CONFIGMAP } from '../src/api/shared';
import { rolloutProgress, rolloutWaves, rolloutWorkflowId } from '../src/contract/rollout';
import { inBatches } from '../src/manifests/batches';
import { Informer } from '../src/k8s/informer';
import { kubeConfigFromFile } from '../src/k8s/kubeconfig';
import { KubeClient } from '../src/k8s/rest-client';
import { installCrds } from '../src/k8s/crds';
import {
  delta,
  lessIdle,
  openWatches,
  ours,
  perVerb,
  requestCounts,
  type MetricsSource,
  type RequestCounts,
} from './apiserver-metrics';
import { distinctKubeconfigs } from './credentials';
import { benchKyma, kubeconfigSecret, publishBenchModules } from './fleet';
import { historyBreakdown, historySample } from './history-breakdown';
import { heapUsedMB, servedShards, startKlm, type BridgeProcess } from './klm-processes';
import { renderCapacity, slope, type CapacityReport, type CapacityStep } from './capacity';
import { applyLoop } from './loop';
import { machineCpuSeconds, phase, snapshot, type PhaseCpu, type Tracked } from './processes';
import { Progress } from './progress';
import { benchStack } from './stack';
import { percentile, renderReport, type BenchReport, type WorkerFigures } from './report';
import {
  histogramDelta,
  histogramPercentile,
  shareAbove,
  taskCounts,
  workflowTaskLatency,
  localActivityLatency,
  type TaskCounts,
} from './sdk-metrics';
import { BRIDGE_SHARDS } from '../src/infra/config';
import { DEFAULT_SETTINGS } from '../src/contract/settings';
import { WorkloadWatch } from './workload-watch';
import { topology } from './topology';
import { concernCosts } from './concerns';
import type { UpstreamFigures } from './targets';
import { taskTimeoutsSince } from './task-timeouts';
import { runUpstreamBeside } from './upstream';

const RESULTS = fileURLToPath(new URL('./results/', import.meta.url));
const ROOT = fileURLToPath(new URL('..', import.meta.url));

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      kymas: { type: 'string' },
      modules: { type: 'string' },
      sizes: { type: 'string' },
      samples: { type: 'string' },
      idle: { type: 'string' },
      smoke: { type: 'boolean' },
      out: { type: 'string' },
      clusters: { type: 'string' },
      'distinct-credentials': { type: 'boolean' },
      quiet: { type: 'string' },
      soak: { type: 'string' },
      kubeconfig: { type: 'string' },
      'temporal-address': { type: 'string' },
      'temporal-namespace': { type: 'string' },
      registry: { type: 'string' },
      'target-kubeconfigs': { type: 'string' },
      workers: { type: 'string' },
      bridges: { type: 'string' },
      capacity: { type: 'boolean' },
      'step-timeout': { type: 'string' },
      'kill-worker': { type: 'boolean' },
      topology: { type: 'string' },
      'one-process': { type: 'boolean' },
      'upstream-from': { type: 'string' },
      'beside-upstream': { type: 'string' },
      'processing-ms': { type: 'string' },
    },
  });
  const smoke = values.smoke ?? false;
  const n = Number(values.kymas ?? (smoke ? 5 : 1000));
  const m = Number(values.modules ?? (smoke ? 2 : 3));
  // By default the growth series is 100 and N (only sizes up to N).
  const sizes = values.sizes
    ? values.sizes.split(',').map(Number)
    : [...new Set([...(smoke ? [2] : [100]).filter((s) => s < n), n])];
  const samples = Number(values.samples ?? (smoke ? 10 : 200));
  const idleSeconds = Number(values.idle ?? (smoke ? 5 : 60));
  const quietSeconds = Number(values.quiet ?? (smoke ? 5 : 20));
  const out = values.out ?? RESULTS;
  const { clusterCount, distinctCredentials } = topology({
    kind: values.topology,
    kymas: Math.max(n, ...sizes),
    smoke,
    ...(values.clusters !== undefined ? { clusters: Number(values.clusters) } : {}),
    ...(values['distinct-credentials'] ? { distinctCredentials: true } : {}),
  });
  const oneProcess = values['one-process'] ?? false;
  // How long the sample managers hold a module CR in Processing (0: they write its final state at once).
  const processingMs = Number(values['processing-ms'] ?? 0);
  // Upstream's figures from an earlier run beside it (the larger fleets are held to them).
  const upstream = values['upstream-from'] ? await upstreamFrom(values['upstream-from']) : undefined;
  // Or upstream run beside this product in this bench, after its run (./upstream.ts).
  const besideUpstream = values['beside-upstream'];
  if (besideUpstream && upstream) throw new Error('--beside-upstream and --upstream-from exclude each other');
  /** The staged promotion's soak (the default policy's is 10 min: each wave adds one soak, nothing else). */
  const soakSeconds = Number(values.soak ?? (smoke ? 1 : 30));
  /** Worker processes on the one task queue. */
  const workerCount = Number(values.workers ?? 1);
  if (!Number.isInteger(workerCount) || workerCount < 1)
    throw new Error(`--workers: not a whole number ≥ 1: ${values.workers}`);
  /** Bridge processes: one alone, or several sharing the shards (as the deploy's three replicas). */
  const bridgeCount = Number(values.bridges ?? 1);
  if (!Number.isInteger(bridgeCount) || bridgeCount < 1)
    throw new Error(`--bridges: not a whole number ≥ 1: ${values.bridges}`);
  const capacity = values.capacity ?? false;
  /** A capacity step waits this long for its Kymas, then records those not Ready and goes on. */
  const stepTimeoutSeconds = Number(values['step-timeout'] ?? 900);

  // Worker and bridge run from the build, as the image runs them (./klm-processes.ts): made afresh.
  execFileSync(process.execPath, ['scripts/build.mjs'], { cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit'] });
  const stack = await benchStack(values, clusterCount);
  if (distinctCredentials && (!stack.pkiDir || stack.targets.length === 0))
    throw new Error('--distinct-credentials needs the local stack and --clusters ≥ 1');
  // On a given stack, earlier runs' objects may still be there: this run's get a prefix.
  const run = stack.given ? `r${Date.now().toString(36)}-` : '';
  const stops: (() => Promise<unknown> | void)[] = [];
  try {
    const kcp = await KubeClient.fromKubeConfig(kubeConfigFromFile(stack.kubeconfig));
    if (stack.given) await installCrds(kcp);
    const ns = `${run}bench`;
    await kcp.apply({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
    const modules = await publishBenchModules(kcp, stack.registryHost, ns, m);
    const connection = await Connection.connect({ address: stack.temporalAddress });
    stops.push(() => connection.close());
    const client = new Client({ connection, namespace: stack.temporalNamespace });
    // Workers and bridge: processes of their own, configured as in production.
    const klm = await startKlm(
      {
        kubeconfig: stack.kubeconfig,
        temporalAddress: stack.temporalAddress,
        temporalNamespace: stack.temporalNamespace,
        taskQueue: `${run}bench`,
        registryHost: stack.registryHost,
        blobCacheDir: path.join(stack.dir, 'blobs'),
        defaultNamespace: '{kyma}',
      },
      stack.dir,
      workerCount,
      {
        count: bridgeCount,
        leaseNamespace: ns,
        ...(distinctCredentials ? { targetWatchScope: 'context-namespace' as const } : {}),
        oneProcess,
      },
    );
    stops.push(...klm.workers.map((w) => () => w.stop()), ...klm.bridges.map((b) => () => b.stop()));
    const bridgeLabels = klm.bridges.map((b) => b.label);
    // One process: its heap is the bridge's and the worker's together.
    const heapSources = klm.oneProcess ? [klm.oneProcess] : klm.bridges;
    const bridgesHeapMB = async () =>
      (await Promise.all(heapSources.map((b) => heapUsedMB(b.metricsUrl)))).reduce((a, b) => a + b, 0);
    if (bridgeCount > 1) await allShardsServed(klm.bridges);
    const workerLabels = klm.workers.map((w) => w.label);
    const sdkMetricsUrls = klm.workers.map((w) => w.sdkMetricsUrl);
    // Where the Kymas' modules go: the further clusters, each through kubeconfig Secrets (or,
    // with --clusters 0, the control plane itself).
    const clusters =
      stack.targets.length === 0
        ? [{ name: 'kcp', client: kcp, kubeconfig: undefined as string | undefined, url: '' }]
        : await Promise.all(
            stack.targets.map(async (file, i) => ({
              name: `cluster-${i + 1}`,
              client: await KubeClient.fromKubeConfig(kubeConfigFromFile(file)),
              kubeconfig: await readFile(file, 'utf8'),
              url: stack.targetUrls[i] ?? '',
            })),
          );
    const clusterOf = (kyma: string) => clusters[Number(kyma.slice(kyma.lastIndexOf('-') + 1)) % clusters.length]!;
    for (const c of clusters) {
      const manager = new SampleManager({
        client: c.client,
        kinds: modules.map((x) => ({ apiVersion: x.apiVersion, kind: x.kind })),
        processingMs,
      });
      manager.start();
      stops.push(() => manager.stop());
    }
    const apiServers: MetricsSource[] = [
      { name: 'kcp', kubeconfig: kubeConfigFromFile(stack.kubeconfig) },
      ...stack.targets.map((file, i) => ({ name: `cluster-${i + 1}`, kubeconfig: kubeConfigFromFile(file) })),
    ];
    const tracked: Tracked[] = [
      ...klm.workers,
      ...klm.bridges,
      { label: 'bench', pid: () => process.pid },
      ...stack.servers,
    ];

    // Every Kyma state change, timestamped, from a watch of our own.
    const listeners = new Set<(k: Kyma) => void>();
    const kymaWatch = new Informer(kcp, {
      apiVersion: API_VERSION,
      kind: 'Kyma',
      namespace: ns,
      onEvent: (_t, o) => listeners.forEach((l) => l(o as unknown as Kyma)),
    });
    await kymaWatch.start();
    stops.push(() => kymaWatch.stop());

    // The Kymas' kubeconfigs: the cluster's own, or with --distinct-credentials one per Kyma.
    const fleetNames = sizes.map((size, i) => Array.from({ length: size }, (_, j) => `${run}k${i}-${j}`));
    const kubeconfigs = distinctCredentials
      ? await distinctKubeconfigs(stack.pkiDir!, fleetNames.flat(), (k) => clusterOf(k).url)
      : undefined;
    const kubeconfigOf = (kyma: string) => kubeconfigs?.get(kyma) ?? clusterOf(kyma).kubeconfig;

    /** Runs `fn` and measures around it: wall time, CPU by pid, API requests, the machine's CPU. */
    async function measured<T>(
      fn: () => Promise<T>,
    ): Promise<{ result: T; seconds: number; procs: PhaseCpu[]; requests: RequestCounts; machineCpuSeconds: number }> {
      const [req0, procs0, machine0, t0] = [
        await requestCounts(apiServers),
        snapshot(tracked),
        machineCpuSeconds(),
        Date.now(),
      ];
      const result = await fn();
      const seconds = (Date.now() - t0) / 1000;
      const procs = phase(procs0, snapshot(tracked));
      return {
        result,
        seconds,
        procs,
        machineCpuSeconds: machineCpuSeconds() - machine0,
        requests: delta(req0, await requestCounts(apiServers)),
      };
    }

    /** Creates `count` Kymas and waits until all are Ready (a capacity run: at most --step-timeout, then goes on); per-Kyma times in ms. */
    async function installFleet(
      names: string[],
    ): Promise<{ totalMs: number; perKymaMs: number[]; names: string[]; notReady: string[] }> {
      const count = names.length;
      const created = new Map<string, number>();
      const ready = new Map<string, number>();
      const progress = new Progress(`${names[0]!.replace(/-\d+$/, '')}: Kymas Ready`, count);
      const done = new Promise<void>((resolve) => {
        const l = (k: Kyma) => {
          if (created.has(k.metadata.name) && !ready.has(k.metadata.name) && k.status?.state === 'Ready') {
            ready.set(k.metadata.name, Date.now());
            progress.update(ready.size);
            if (ready.size === count) {
              listeners.delete(l);
              resolve();
            }
          }
        };
        listeners.add(l);
      });
      const t0 = Date.now();
      await inBatches(
        names,
        async (name) => {
          created.set(name, Date.now());
          const kubeconfig = kubeconfigOf(name);
          if (kubeconfig) await kcp.create(kubeconfigSecret(ns, name, kubeconfig));
          await kcp.create(benchKyma(ns, name, modules));
        },
        16,
      );
      let timer: NodeJS.Timeout | undefined;
      await (capacity
        ? Promise.race([done, new Promise<void>((r) => (timer = setTimeout(r, stepTimeoutSeconds * 1000)))])
        : done);
      clearTimeout(timer);
      const totalMs = Date.now() - t0;
      progress.finish();
      const notReady = names.filter((x) => !ready.has(x));
      if (notReady.length) console.log(`not Ready after ${stepTimeoutSeconds} s, going on: ${notReady.join(', ')}`);
      return {
        totalMs,
        perKymaMs: names.filter((x) => ready.has(x)).map((x) => ready.get(x)! - created.get(x)!),
        names,
        notReady,
      };
    }

    // The background: API requests in a quiet window before any Kyma exists.
    const quiet = await measured(() => new Promise((r) => setTimeout(r, quietSeconds * 1000)));
    const beforeInstall = snapshot(tracked);
    const watchesBefore = await openWatches(apiServers);
    const bridgeHeapBeforeMB = await bridgesHeapMB();
    const growth: { kymas: number; allReadyMs: number }[] = [];
    const steps: CapacityStep[] = [];
    const rssOf = (snap: ReturnType<typeof snapshot>, labels: string[]) =>
      labels.reduce((a, l) => a + (snap.get(l)?.rssMB ?? 0), 0);
    let main!: Awaited<ReturnType<typeof measured<Awaited<ReturnType<typeof installFleet>>>>>;
    let wfTasks = new Map<number, number>();
    let localActivities = new Map<number, number>();
    for (const [i, names] of fleetNames.entries()) {
      const wf0 = await workflowTaskLatency(sdkMetricsUrls);
      const la0 = await localActivityLatency(sdkMetricsUrls);
      const r = await measured(() => installFleet(names));
      growth.push({ kymas: names.length, allReadyMs: r.result.totalMs });
      const now = snapshot(tracked);
      steps.push({
        runtimes: fleetNames.slice(0, i + 1).flat().length,
        allReadySeconds: r.result.totalMs / 1000,
        notReady: r.result.notReady,
        bridgeHeapMB: await bridgesHeapMB(),
        bridgeRssMB: rssOf(now, bridgeLabels),
        workerRssMB: rssOf(now, workerLabels),
        temporalRssMB: rssOf(now, ['temporal']),
        watches: await openWatches(apiServers),
      });
      // A capacity run may be stopped where the machine gives out: the steps so far are kept.
      if (capacity)
        await mkdir(out, { recursive: true }).then(() =>
          writeFile(path.join(out, 'capacity-steps.partial.json'), JSON.stringify(steps, null, 2)),
        );
      if (i === fleetNames.length - 1) {
        main = r;
        wfTasks = histogramDelta(wf0, await workflowTaskLatency(sdkMetricsUrls));
        localActivities = histogramDelta(la0, await localActivityLatency(sdkMetricsUrls));
      }
    }
    const kymaNames = main.result.names;

    // History events per module install, from a sample of Kymas: the whole history of each
    // Kyma's workflow (which runs its modules) over its modules.
    // Up to 100, spread evenly over the fleet: a cluster's one runtime-Kyma owner (which syncs
    // the catalog and mirrors the status) is in the sample as often as in the fleet.
    const sampled = historySample(kymaNames, 100);
    const historyLengths = await Promise.all(
      sampled.map(
        async (k) => (await client.workflow.getHandle(kymaWorkflowId(ns, k)).describe()).historyLength / modules.length,
      ),
    );
    const historyKinds = await historyBreakdown(
      client,
      sampled.map((k) => kymaWorkflowId(ns, k)),
      modules.length,
      process.env.KLM_BENCH_HISTORIES,
    );

    // Idle cost, with all Ready.
    const tasks0 = await Promise.all(sdkMetricsUrls.map(taskCounts));
    const idle = await measured(() => new Promise((r) => setTimeout(r, idleSeconds * 1000)));
    const tasks1 = await Promise.all(sdkMetricsUrls.map(taskCounts));
    const bridgeHeapAfterMB = await bridgesHeapMB();
    const watchesAfter = await openWatches(apiServers);
    const cores = cpus().length;
    const byLabel = (p: PhaseCpu[], label: string) => p.find((x) => x.label === label);
    const cpuOf = (p: PhaseCpu[], ...labels: string[]) =>
      labels.reduce((a, l) => a + (byLabel(p, l)?.cpuSeconds ?? 0), 0);
    if (capacity) {
      const runtimes = steps.at(-1)!.runtimes;
      const atRest = (k: keyof TaskCounts) =>
        ((tasks1.reduce((a, t) => a + t[k], 0) - tasks0.reduce((a, t) => a + t[k], 0)) * (3600 / idle.seconds)) /
        runtimes;
      const perMinute = (...labels: string[]) => (cpuOf(idle.procs, ...labels) * 60) / idle.seconds / runtimes;
      const perInstall = (...labels: string[]) =>
        (1000 * cpuOf(main.procs, ...labels)) / (fleetNames.at(-1)!.length * m);
      const end = snapshot(tracked);
      const report: CapacityReport = {
        date: new Date().toISOString(),
        machine: { cores, node: process.version },
        modulesPerKyma: m,
        bridges: bridgeCount,
        workers: workerCount,
        targetServers: stack.targets.length,
        steps,
        perRuntime: {
          bridgeHeapMB: slope(steps, (x) => x.bridgeHeapMB),
          bridgeRssMB: slope(steps, (x) => x.bridgeRssMB),
          workerRssMB: slope(steps, (x) => x.workerRssMB),
          temporalRssMB: slope(steps, (x) => x.temporalRssMB),
          targetWatches: slope(steps, (x) =>
            Object.entries(x.watches)
              .filter(([server]) => server !== 'kcp')
              .reduce((a, [, w]) => a + w, 0),
          ),
        },
        install: {
          cpuMsPerModule: {
            workers: perInstall(...workerLabels),
            bridges: perInstall(...bridgeLabels),
            temporal: perInstall('temporal'),
          },
          historyEventsPerModuleInstall: historyLengths.reduce((a, b) => a + b, 0) / historyLengths.length,
        },
        idle: {
          seconds: idle.seconds,
          cpuSecondsPerRuntimeMinute: {
            workers: perMinute(...workerLabels),
            bridges: perMinute(...bridgeLabels),
            temporal: perMinute('temporal'),
          },
          perRuntimeHour: {
            workflowTasks: atRest('workflowTasks'),
            activities: atRest('activities'),
            localActivities: atRest('localActivities'),
          },
          driftIntervalMinutes: DEFAULT_SETTINGS.driftIntervalMs / 60_000,
        },
        peakRssMB: Object.fromEntries([...end].map(([label, x]) => [label, x.peakRssMB])),
        shared:
          (distinctCredentials
            ? 'Each Kyma is a simulated runtime: a client certificate of its own and a namespace of its ' +
              "own on one of the target API servers, its kubeconfig's context naming that namespace; the " +
              'bridges watch that namespace only (KLM_TARGET_WATCH_SCOPE=context-namespace), so each ' +
              "runtime's watches see its own objects, as in a cluster of its own. "
            : "Kymas share their target clusters' kubeconfigs (without --distinct-credentials): " +
              'per-runtime figures are per Kyma. ') +
          `The API servers, etcd, Temporal (dev server, SQLite) and the registry run on the same ` +
          `machine.`,
      };
      await writeResults(out, report.date, renderCapacity(report), report, '-capacity');
      return;
    }

    // Status propagation: a module CR changes state → the Kyma's status shows it.
    const propagation: number[] = [];
    const target = modules[0]!;
    const progress = new Progress('status propagation samples', samples);
    for (let s = 0; s < samples;) {
      const offset = s % kymaNames.length;
      const batch = kymaNames.slice(offset, offset + Math.min(50, samples - s));
      const flip = Math.floor(s / kymaNames.length) % 2 === 0 ? 'Error' : 'Ready';
      await Promise.all(
        batch.map(async (k) => {
          const seen = new Promise<number>((resolve) => {
            const l = (ky: Kyma) => {
              if (ky.metadata.name === k && ky.status?.modules?.find((x) => x.name === target.name)?.state === flip) {
                listeners.delete(l);
                resolve(Date.now());
              }
            };
            listeners.add(l);
          });
          const t = Date.now();
          await clusterOf(k).client.mergePatch(target.apiVersion, target.kind, 'default', k, {
            spec: { simulateState: flip === 'Error' ? 'Error' : null },
          });
          propagation.push((await seen) - t);
        }),
      );
      s += batch.length;
      progress.update(s);
    }
    progress.finish();
    await Promise.all(
      kymaNames.map((k) =>
        clusterOf(k).client.mergePatch(target.apiVersion, target.kind, 'default', k, { spec: { simulateState: null } }),
      ),
    );

    // Promotions: the regular channel of one module moves for the whole fleet; seen in the
    // Kymas' status and, where it happens, as the new manager image in each target cluster.
    // First all at once (a one-wave rollout policy), then by the default staged policy.
    const promoted = modules[1] ?? modules[0]!;
    // Every Kyma of the runs (the growth series' too): all of them follow the channel.
    const allNames = new Set(fleetNames.flat());
    const rolloutPolicy = async (regular: string) =>
      await kcp.apply({
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: ROLLOUT_POLICY_CONFIGMAP, namespace: ns },
        data: { regular },
      });
    /** `onFirst`: called once the first Kyma shows the new version (the promotion is under way). */
    async function promote(
      version: string,
      channels: { channel: string; version: string }[],
      onFirst?: () => Promise<void>,
    ) {
      let hook: Promise<void> | undefined;
      const onNew = new Map<string, number>();
      const workloads = new WorkloadWatch(
        clusters.map((c) => c.client),
        `${promoted.name}-manager`,
        `:${version}`,
        allNames,
      );
      await workloads.start();
      const promo = new Progress(`promotion of ${promoted.name} to ${version}`, allNames.size);
      const done = new Promise<void>((resolve) => {
        const l = (k: Kyma) => {
          const st = k.status?.modules?.find((x) => x.name === promoted.name);
          if (
            allNames.has(k.metadata.name) &&
            !onNew.has(k.metadata.name) &&
            st?.version === version &&
            st.state === 'Ready'
          ) {
            onNew.set(k.metadata.name, Date.now());
            if (onNew.size === 1 && onFirst) hook = onFirst();
            promo.update(onNew.size);
            if (onNew.size === allNames.size) {
              listeners.delete(l);
              resolve();
            }
          }
        };
        listeners.add(l);
      });
      const t0 = Date.now();
      const m = await measured(async () => {
        await kcp.mergePatch(API_VERSION, 'ModuleReleaseMeta', promoted.name, ns, { spec: { channels } });
        await Promise.all([done, workloads.all()]);
        await hook;
      });
      promo.finish();
      workloads.stop();
      const times = [...onNew.values()].map((t) => t - t0);
      const inCluster = [...workloads.seen.values()].map((t) => t - t0);
      return {
        ...m,
        onNew,
        t0,
        firstSeconds: Math.min(...times) / 1000,
        lastSeconds: Math.max(...times) / 1000,
        inClusterFirstSeconds: Math.min(...inCluster) / 1000,
        inClusterLastSeconds: Math.max(...inCluster) / 1000,
      };
    }
    // Everyone at once, as before rollouts: one wave, no soak, no cap, no budget.
    await rolloutPolicy('waves: []\nsoak: 0s\nmaxConcurrent: 1000000\nfailureBudget: "100%"');
    const promotion = await promote('1.1.0', [
      { channel: 'regular', version: '1.1.0' },
      { channel: 'fast', version: '1.1.0' },
    ]);
    // The default staged policy, its soak shortened (each wave adds one soak, nothing else).
    await rolloutPolicy(`soak: ${soakSeconds}s`);
    const staged = await promote('1.2.0', [
      { channel: 'regular', version: '1.2.0' },
      { channel: 'fast', version: '1.2.0' },
    ]);
    const rollout = client.workflow.getHandle(
      rolloutWorkflowId({ namespace: ns, module: promoted.name, channel: 'regular' }),
    );
    // The rollout completes one soak after its last wave is Ready.
    let progressAfter = await rollout.query(rolloutProgress);
    for (
      const deadline = Date.now() + (soakSeconds + 60) * 1000;
      progressAfter.phase !== 'Completed' && Date.now() < deadline;
    ) {
      await new Promise((r) => setTimeout(r, 500));
      progressAfter = await rollout.query(rolloutProgress);
    }
    const completedSeconds = (Date.now() - staged.t0) / 1000;
    const waves = await rollout.query(rolloutWaves);
    const stagedWaves = waves.map((w) => ({
      size: w.length,
      lastSeconds: Math.max(...w.map((k) => staged.onNew.get(k)! - staged.t0)) / 1000,
    }));

    // A worker SIGKILLed while a one-wave promotion moves the fleet (its first Kyma on the new
    // version), and started again at once: what the kill costs, beside the one-wave promotion above.
    let killAt = 0;
    const killed = values['kill-worker']
      ? await killedPromotion(
          () =>
            promote(
              '1.3.0',
              [
                { channel: 'regular', version: '1.3.0' },
                { channel: 'fast', version: '1.3.0' },
              ],
              async () => {
                killAt = Date.now();
                await klm.restartWorker(klm.workers[0]!);
              },
            ),
          () => rolloutPolicy('waves: []\nsoak: 0s\nmaxConcurrent: 1000000\nfailureBudget: "100%"'),
        )
      : undefined;
    async function killedPromotion(run: () => ReturnType<typeof promote>, policy: () => Promise<unknown>) {
      await policy();
      const p = await run();
      const timeouts = await taskTimeoutsSince(
        client,
        [...allNames].map((k) => kymaWorkflowId(ns, k)),
        killAt,
      );
      return {
        killAtSeconds: (killAt - p.t0) / 1000,
        lastSeconds: p.lastSeconds,
        baselineLastSeconds: promotion.lastSeconds,
        delaySeconds: p.lastSeconds - promotion.lastSeconds,
        ...timeouts,
      };
    }

    // The limit: a plain concurrent loop server-side-applies the same rendered objects, then the
    // promoted module's new version into the same namespaces; alone, with workers and bridge
    // stopped, so that their last requests do not count as the loop's. Before they stop: each
    // worker's peak RSS and what it executed over the run.
    const beforeStop = snapshot(tracked);
    const workers: WorkerFigures[] = await Promise.all(
      klm.workers.map(async (w) => ({
        label: w.label,
        pid: beforeStop.get(w.label)?.pid ?? 0,
        peakRssMB: Math.round(beforeStop.get(w.label)?.peakRssMB ?? 0),
        ...(await taskCounts(w.sdkMetricsUrl)),
      })),
    );
    await Promise.all([...klm.workers.map((w) => w.stop()), ...klm.bridges.map((b) => b.stop())]);
    const loopTarget = {
      kcp,
      registryHost: stack.registryHost,
      templateNamespace: ns,
      targets: clusters.map((c) => c.client),
    };
    const loop = await measured(() => applyLoop(loopTarget, modules, '1.0.0', kymaNames.length, `${run}loop`));
    const loopPromotion = await measured(() =>
      applyLoop(loopTarget, [promoted], '1.1.0', kymaNames.length, `${run}loop`, false),
    );

    // Upstream lifecycle-manager on the same stack, with this product's worker and bridge stopped.
    const upstreamFigures =
      upstream ??
      (besideUpstream
        ? await runUpstreamBeside({
            binary: besideUpstream,
            kcp,
            kcpKubeconfig: stack.kubeconfig,
            clusters: clusters.flatMap((c) => (c.kubeconfig ? [{ ...c, kubeconfig: c.kubeconfig }] : [])),
            registryHost: stack.registryHost,
            dir: stack.dir,
            apiServers,
            servers: stack.servers,
            kymas: n,
            modules: m,
            moduleOffset: m,
            quietSeconds,
            idleSeconds,
          }).catch((e: unknown) => {
            console.error(`upstream beside: ${e instanceof Error ? e.message : String(e)}`);
            return undefined;
          })
        : undefined);

    const installs = n * m;
    const engineRequestCounts = lessIdle(
      ours(ownRequestsOut(main.requests, n, kubeconfigs !== undefined || clusters[0]!.kubeconfig !== undefined)),
      ours(quiet.requests),
      quiet.seconds,
      main.seconds,
    );
    const engineRequests = perVerb(engineRequestCounts, installs);
    const klmLabels = [...workerLabels, ...bridgeLabels];
    const lifeCpu = klmLabels.reduce((a, l) => a + (beforeStop.get(l)?.cpuSeconds ?? 0), 0);
    const concerns = concernCosts({
      historyKinds,
      requests: engineRequestCounts,
      installs,
      ...(process.env.KLM_BENCH_CPU_PROF ? { profiles: process.env.KLM_BENCH_CPU_PROF } : {}),
      installShare: lifeCpu > 0 ? cpuOf(main.procs, ...klmLabels) / lifeCpu : 1,
    });
    const loopRequests = perVerb(
      lessIdle(ours(loop.requests), ours(quiet.requests), quiet.seconds, loop.seconds),
      installs,
    );
    const distinctKubeconfigCount = new Set(fleetNames.flat().map(kubeconfigOf).filter(Boolean)).size;
    // The bridge settled: its RSS at the end of the idle minute, all clusters watched.
    const bridgeSettledMB = bridgeLabels.reduce((a, l) => a + (byLabel(idle.procs, l)?.rssMB ?? 0), 0);
    const bridgeRssBeforeMB = bridgeLabels.reduce((a, l) => a + (beforeInstall.get(l)?.rssMB ?? 0), 0);
    const bridgeGrowthMB = bridgeSettledMB - bridgeRssBeforeMB;
    const wfP99 = histogramPercentile(wfTasks, 99);
    const [laP50, laP99] = [histogramPercentile(localActivities, 50), histogramPercentile(localActivities, 99)];
    const klmProcesses = oneProcess
      ? 'worker and bridge in one process (`klm run`; the report lists it as the worker, labelled klm, and its bridge figures are 0)'
      : workerCount === 1
        ? 'worker and bridge'
        : `${workerCount} workers (one task queue) and the bridge`;
    const eachKlm = workerCount === 1 ? 'worker and bridge' : 'each worker and the bridge';
    const report: BenchReport = {
      date: new Date().toISOString(),
      machine: { cores, node: process.version },
      targetClusters: stack.targets.length,
      distinctCredentials,
      kymas: n,
      modulesPerKyma: m,
      allReadySeconds: main.result.totalMs / 1000,
      perKymaReadySeconds: {
        p50: percentile(main.result.perKymaMs, 50) / 1000,
        p95: percentile(main.result.perKymaMs, 95) / 1000,
        p99: percentile(main.result.perKymaMs, 99) / 1000,
      },
      promotion: {
        firstSeconds: promotion.firstSeconds,
        lastSeconds: promotion.lastSeconds,
        inClusterFirstSeconds: promotion.inClusterFirstSeconds,
        inClusterLastSeconds: promotion.inClusterLastSeconds,
        loopSeconds: loopPromotion.result / 1000,
        cpuSeconds: cpuOf(promotion.procs, ...workerLabels, ...bridgeLabels, 'temporal'),
      },
      ...(killed ? { killedPromotion: killed } : {}),
      stagedPromotion: {
        firstSeconds: staged.firstSeconds,
        lastSeconds: staged.lastSeconds,
        inClusterLastSeconds: staged.inClusterLastSeconds,
        soakSeconds,
        waves: stagedWaves,
        phase: progressAfter.phase,
        completedSeconds,
        cpuSeconds: cpuOf(staged.procs, ...workerLabels, ...bridgeLabels, 'temporal'),
      },
      statusPropagation: {
        samples: propagation.length,
        p50Seconds: percentile(propagation, 50) / 1000,
        p95Seconds: percentile(propagation, 95) / 1000,
      },
      historyEventsPerModuleInstall: historyLengths.reduce((a, b) => a + b, 0) / historyLengths.length,
      historyKinds,
      growth: growth.map((g) => ({ kymas: g.kymas, allReadySeconds: g.allReadyMs / 1000 })),
      loop: { seconds: loop.result / 1000, ratio: main.result.totalMs / loop.result },
      requests: {
        engine: engineRequests,
        loop: loopRequests,
        ratio: engineRequests.total / loopRequests.total,
        quietSeconds: quiet.seconds,
        raw: {
          install: Object.fromEntries(main.requests),
          loop: Object.fromEntries(loop.requests),
          quiet: Object.fromEntries(quiet.requests),
        },
      },
      cpu: { install: main.procs, idle: idle.procs, promotion: promotion.procs, loop: loop.procs },
      phaseSeconds: { install: main.seconds, idle: idle.seconds, promotion: promotion.seconds, loop: loop.seconds },
      machineCpuSeconds: {
        install: main.machineCpuSeconds,
        idle: idle.machineCpuSeconds,
        promotion: promotion.machineCpuSeconds,
        loop: loop.machineCpuSeconds,
      },
      installCpuMsPerModule: (1000 * cpuOf(main.procs, ...workerLabels, ...bridgeLabels, 'temporal')) / installs,
      idleCpuSecondsPerMinute: (cpuOf(idle.procs, ...workerLabels, ...bridgeLabels) * 60) / idle.seconds,
      workerPeakRssMB: workers.reduce((a, w) => a + w.peakRssMB, 0),
      klmPeakRssMB: klmLabels.reduce((a, l) => a + (beforeStop.get(l)?.peakRssMB ?? 0), 0),
      temporalPeakRssMB: beforeStop.get('temporal')?.peakRssMB ?? 0,
      oneProcess,
      ...(processingMs ? { sampleProcessingMs: processingMs } : {}),
      ...(steps.length >= 2 ? { workerRssPerRuntimeMB: slope(steps, (x) => x.workerRssMB) } : {}),
      concerns,
      ...(upstreamFigures ? { upstream: upstreamFigures } : {}),
      workers,
      bridgePerCluster: {
        kubeconfigs: distinctKubeconfigCount,
        rssBeforeMB: bridgeRssBeforeMB,
        rssAfterMB: bridgeSettledMB,
        rssMB: bridgeGrowthMB / Math.max(1, distinctKubeconfigCount),
        heapBeforeMB: bridgeHeapBeforeMB,
        heapAfterMB: bridgeHeapAfterMB,
        heapMB: (bridgeHeapAfterMB - bridgeHeapBeforeMB) / Math.max(1, distinctKubeconfigCount),
        idleCpuSecondsPerMinute:
          (cpuOf(idle.procs, ...bridgeLabels) * 60) / idle.seconds / Math.max(1, distinctKubeconfigCount),
      },
      watches: Object.fromEntries(
        Object.keys(watchesAfter).map((server) => [
          server,
          { before: watchesBefore[server] ?? 0, after: watchesAfter[server]! },
        ]),
      ),
      workflowTasks: {
        count: wfP99.count,
        p99Seconds: wfP99.seconds,
        p99Above: wfP99.above,
        shareOverOneSecond: shareAbove(wfTasks, 1),
        slowWarnings: slowWarnings(klm.workers.map((w) => w.log()).join('\n')),
        localActivities: {
          count: laP50.count,
          p50Seconds: laP50.seconds,
          p99Seconds: laP99.seconds,
          p99Above: laP99.above,
        },
      },
      shared: stack.given
        ? `A given stack (control plane ${stack.kubeconfig}, Temporal ${stack.temporalAddress}, ` +
          `registry ${stack.registryHost}, ${stack.targets.length} target cluster(s)): what its ` +
          `servers share is up to it. The bench runs ${klmProcesses} as processes of their own on ` +
          `this machine (${cores} cores), a sample manager per cluster and the measuring watches in ` +
          `the bench process; Kyma i targets cluster i mod ${stack.targets.length || 1} through a ` +
          `kubeconfig Secret of its own.`
        : clusterCount === 0
          ? `One machine (${cores} cores) runs everything: API server, etcd, controller-manager, ` +
            `scheduler, kwok, the Temporal dev server (SQLite, WAL, no fsync), the registry, ` +
            `${klmProcesses}${oneProcess ? '' : ' (a process each)'}, and the bench process (sample manager, the measuring ` +
            `watches). All Kymas target the control-plane cluster itself (no kubeconfig Secrets), each ` +
            `with a namespace of its own.`
          : `One machine (${cores} cores) runs everything: the control plane (API server, etcd, ` +
            `controller-manager, scheduler, kwok), ${clusterCount} further cluster(s) as Kyma targets ` +
            `(each its own kube-apiserver, controller-manager, scheduler and kwok node, all on the one ` +
            `etcd under a key prefix each), the Temporal dev server (SQLite, WAL, no fsync), the ` +
            `registry, ${klmProcesses}${oneProcess ? '' : ' (a process each)'}, and the bench process (a sample manager per ` +
            `cluster, the measuring watches). Kyma i targets cluster i mod ${clusterCount} through a ` +
            `kubeconfig Secret of its own; ` +
            (distinctCredentials
              ? `each Secret carries a client certificate of its own, so ${eachKlm} hold one client and one ` +
                `set of watches per Kyma, as per real cluster. `
              : `Secrets holding the same kubeconfig share one client and one set of watches in ${eachKlm} ` +
                `(in production every cluster has its own; --distinct-credentials gives each Kyma its own). `) +
            `Each Kyma's namespaced objects go to a namespace of its own.`,
    };
    await writeResults(out, report.date, renderReport(report), report);
  } finally {
    for (const s of stops.reverse())
      await Promise.resolve(s()).catch((e: unknown) => console.error(`stopping: ${(e as Error).message}`));
    await stack.stop();
  }
}

/** The upstream figures of an earlier report (one run with --beside-upstream). */
async function upstreamFrom(file: string): Promise<UpstreamFigures> {
  const earlier = JSON.parse(await readFile(file, 'utf8')) as BenchReport;
  if (!earlier.upstream) throw new Error(`--upstream-from ${file}: that report has no upstream figures`);
  return { ...earlier.upstream, source: `${earlier.upstream.source}, as reported in ${path.basename(file)}` };
}

/** Writes a report as `<date><suffix>.json` and `.md` in `out`, and shows it. */
async function writeResults(out: string, date: string, markdown: string, json: unknown, suffix = ''): Promise<void> {
  await mkdir(out, { recursive: true });
  const stamp = `${date.replace(/[:.]/g, '-')}${suffix}`;
  await writeFile(path.join(out, `${stamp}.json`), JSON.stringify(json, null, 2));
  await writeFile(path.join(out, `${stamp}.md`), markdown);
  console.log(markdown);
  console.log(`written: ${path.join(out, `${stamp}.json`)} and .md`);
}

/** Until every shard is served by one of the bridges (they spread them over a lease duration or two). */
async function allShardsServed(bridges: BridgeProcess[]): Promise<void> {
  const progress = new Progress('bridge shards served', BRIDGE_SHARDS);
  for (;;) {
    const served = new Set((await servedShards(bridges)).flat());
    progress.update(served.size);
    if (served.size >= BRIDGE_SHARDS) break;
    await new Promise((r) => setTimeout(r, 1000));
  }
  progress.finish();
}

/** The bench's own requests in the install window are not the engine's: one POST per Kyma, and one per kubeconfig Secret. */
function ownRequestsOut(counts: RequestCounts, kymas: number, secrets: boolean): RequestCounts {
  const out = new Map(counts);
  const less = (key: string, by: number) => out.has(key) && out.set(key, Math.max(0, out.get(key)! - by));
  less('kcp POST kymas ', kymas);
  if (secrets) less('kcp POST secrets ', kymas);
  return out;
}

/**
 * Lines of the workers' output that warn of slow or stuck workflow tasks: the SDK core's
 * `[TMPRL1104] Workflow task duration exceeded 5 seconds`, a task that timed out before it
 * completed (`Workflow task not found`), and deadlock reports.
 */
function slowWarnings(log: string): number {
  return log.split('\n').filter((l) => /TMPRL1104|task duration exceeded|Workflow task not found|deadlock/i.test(l))
    .length;
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(`bench: ${err instanceof Error ? err.stack : String(err)}`);
    process.exit(1);
  },
);
