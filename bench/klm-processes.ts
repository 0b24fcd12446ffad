// The workers and the bridge as child processes of the bench, each one pid, run from the build
// as the image runs them (`node dist/workers/main.js`; the bench builds first: under tsx a
// process pays for compiling the sources and for source maps, which production does not),
// configured through their environment as in production (src/infra/config.ts). Their
// output goes to a log file each; each worker serves the SDK's Prometheus metrics on a port of
// its own. Several workers poll the one task queue, as replicas would (they share the blob cache
// directory, which is safe: entries are written to a temp file per process and renamed).
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePorts } from '../src/localstack/ports';
import { imageEnv } from './image-env';
import { writeWorkflowBundle } from '../src/workers/worker';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

export interface KlmProcess {
  /** `bridge`, `worker`, or with several workers `worker-1` … `worker-N`. */
  label: string;
  pid(): number | undefined;
  logFile: string;
  log(): string;
  stop(): Promise<void>;
  /** SIGKILL: it ends at once, as a crash or an evicted pod would. */
  kill(): Promise<void>;
}

export interface KlmEnv {
  kubeconfig: string;
  temporalAddress: string;
  temporalNamespace: string;
  taskQueue: string;
  registryHost: string;
  blobCacheDir: string;
  defaultNamespace: string;
}

export interface WorkerProcess extends KlmProcess {
  /** The SDK's Prometheus metrics of this worker. */
  sdkMetricsUrl: string;
}

function start(
  label: string,
  main: string,
  env: NodeJS.ProcessEnv,
  dir: string,
  readyLine: string,
  args: string[] = [],
): Promise<KlmProcess> {
  const logFile = path.join(dir, `${label}.log`);
  const out = openSync(logFile, 'a');
  let child: ChildProcess;
  try {
    // KLM_BENCH_CPU_PROF=DIR: each process writes a V8 CPU profile there when it stops.
    const profile = process.env.KLM_BENCH_CPU_PROF
      ? ['--cpu-prof', `--cpu-prof-dir=${path.join(process.env.KLM_BENCH_CPU_PROF, label)}`]
      : [];
    child = spawn(process.execPath, [...profile, main, ...args], {
      cwd: ROOT,
      env: { ...process.env, ...imageEnv(), ...env },
      stdio: ['ignore', out, out],
    });
  } finally {
    closeSync(out);
  }
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  const log = () => readFileSync(logFile, 'utf8');
  const proc: KlmProcess = {
    label,
    pid: () => (child.exitCode === null ? child.pid : undefined),
    logFile,
    log,
    async stop() {
      if (child.exitCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      await exited;
      clearTimeout(timer);
    },
    async kill() {
      if (child.exitCode !== null) return;
      child.kill('SIGKILL');
      await exited;
    },
  };
  return new Promise((resolve, reject) => {
    const poll = setInterval(() => {
      if (log().includes(readyLine)) {
        clearInterval(poll);
        resolve(proc);
      } else if (child.exitCode !== null) {
        clearInterval(poll);
        reject(new Error(`${label} exited (${child.exitCode}):\n${log().split('\n').slice(-20).join('\n')}`));
      }
    }, 200);
  });
}

/** What the bench asks of the bridges. */
export interface BridgeSetup {
  /** Bridge processes: one alone, or several sharing the fleet's shards through Leases in `leaseNamespace`. */
  count: number;
  leaseNamespace: string;
  /** KLM_TARGET_WATCH_SCOPE: `context-namespace` for simulated runtimes (a namespace each on shared API servers). */
  targetWatchScope?: 'cluster' | 'context-namespace';
  /** `klm run`: worker and bridge in one process (with one worker and one bridge only). */
  oneProcess?: boolean;
}

/** A bridge process and the URL of its own metrics. */
export interface BridgeProcess extends KlmProcess {
  metricsUrl: string;
}

/** Starts `workers` workers and the bridges. */
export async function startKlm(
  e: KlmEnv,
  dir: string,
  workers: number,
  bridges: BridgeSetup,
): Promise<{
  workers: WorkerProcess[];
  bridges: BridgeProcess[];
  /** Kills a worker (SIGKILL) and starts it again in its place (same label, metrics port, log file). */
  restartWorker(w: WorkerProcess): Promise<void>;
  /** With `oneProcess`: the one process, listed as the worker (no bridge listed). */
  oneProcess?: WorkerProcess & BridgeProcess;
}> {
  const ports = await freePorts(workers + bridges.count);
  const bridgePorts = ports.slice(0, bridges.count);
  const sdkPorts = ports.slice(bridges.count);
  const bundle = path.join(dir, 'workflow-bundle.js');
  await writeWorkflowBundle(bundle);
  const env = {
    KUBECONFIG: e.kubeconfig,
    TEMPORAL_ADDRESS: e.temporalAddress,
    TEMPORAL_NAMESPACE: e.temporalNamespace,
    KLM_TASK_QUEUE: e.taskQueue,
    KLM_OCI_REGISTRY_HOST: e.registryHost,
    KLM_BLOB_CACHE_DIR: e.blobCacheDir,
    KLM_DEFAULT_NAMESPACE: e.defaultNamespace,
    // Built ahead of time, as in production: bundling at start would add its own memory to the worker's.
    KLM_WORKFLOW_BUNDLE: bundle,
  };
  const startWorker = async (port: number, i: number): Promise<WorkerProcess> => {
    const address = `127.0.0.1:${port}`;
    const label = workers === 1 ? 'worker' : `worker-${i + 1}`;
    return {
      ...(await start(
        label,
        'dist/workers/main.js',
        { ...env, KLM_SDK_METRICS_ADDRESS: address },
        dir,
        'worker: task queue',
      )),
      sdkMetricsUrl: `http://${address}/metrics`,
    };
  };
  const startBridge = async (port: number, i: number): Promise<BridgeProcess> => {
    const label = bridges.count === 1 ? 'bridge' : `bridge-${i + 1}`;
    const sharded =
      bridges.count === 1 ? {} : { KLM_LEADER_ELECTION_LEASE: `${bridges.leaseNamespace}/klm-bench`, POD_NAME: label };
    const scope = bridges.targetWatchScope ? { KLM_TARGET_WATCH_SCOPE: bridges.targetWatchScope } : {};
    return {
      ...(await start(
        label,
        'dist/starter/main.js',
        { ...env, ...sharded, ...scope, KLM_METRICS_PORT: String(port) },
        dir,
        'bridge: routing events',
      )),
      metricsUrl: `http://127.0.0.1:${port}/metrics`,
    };
  };
  if (bridges.oneProcess) {
    if (workers !== 1 || bridges.count !== 1) throw new Error('one process: one worker and one bridge');
    const [port, sdkPort] = ports as [number, number];
    const scope = bridges.targetWatchScope ? { KLM_TARGET_WATCH_SCOPE: bridges.targetWatchScope } : {};
    const startOne = async (): Promise<WorkerProcess & BridgeProcess> => ({
      ...(await start(
        'klm',
        'dist/cli/klm.js',
        {
          ...env,
          ...scope,
          KLM_METRICS_PORT: String(port),
          KLM_SDK_METRICS_ADDRESS: `127.0.0.1:${sdkPort}`,
        },
        dir,
        'bridge: routing events',
        ['run'],
      )),
      sdkMetricsUrl: `http://127.0.0.1:${sdkPort}/metrics`,
      metricsUrl: `http://127.0.0.1:${port}/metrics`,
    });
    // One process in both roles: the figures name it once (as a worker), the bridge's heap from its /metrics.
    const one = await startOne();
    return {
      workers: [one],
      bridges: [],
      oneProcess: one,
      async restartWorker(w) {
        await w.kill();
        Object.assign(w, await startOne());
      },
    };
  }
  const started = await Promise.allSettled([...bridgePorts.map(startBridge), ...sdkPorts.map(startWorker)]);
  const ok = started.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
  const failed = started.find((s) => s.status === 'rejected');
  if (failed) {
    await Promise.all(ok.map((p) => p.stop()));
    throw failed.reason;
  }
  const startedWorkers = ok.slice(bridges.count) as WorkerProcess[];
  return {
    bridges: ok.slice(0, bridges.count) as BridgeProcess[],
    workers: startedWorkers,
    async restartWorker(w) {
      const i = startedWorkers.indexOf(w);
      await w.kill();
      Object.assign(w, await startWorker(sdkPorts[i]!, i));
    },
  };
}

/** The shards (`klm_bridge_shard_clusters{shard}`) each bridge serves, from their metrics. */
export async function servedShards(bridges: BridgeProcess[]): Promise<string[][]> {
  return await Promise.all(
    bridges.map(async (b) =>
      [...(await (await fetch(b.metricsUrl)).text()).matchAll(/^klm_bridge_shard_clusters\{shard="(\d+)"\}/gm)].map(
        (m) => m[1]!,
      ),
    ),
  );
}

/** The V8 heap in use (prom-client's `nodejs_heap_size_used_bytes`) of a process serving /metrics, MB. */
export async function heapUsedMB(metricsUrl: string): Promise<number> {
  const text = await (await fetch(metricsUrl)).text();
  return Number(/^nodejs_heap_size_used_bytes(?:\{[^}]*\})? (\S+)/m.exec(text)?.[1] ?? NaN) / 1e6;
}
