// Upstream lifecycle-manager beside this product (--beside-upstream <binary>): after this
// product's run (its worker and bridge stopped), the same bench runs the upstream binary on the
// same stack with the same fleet size and modules per Kyma, and measures it the same way: its
// CPU and peak RSS by pid, API requests from the API servers' metrics (less a quiet window's
// rate), all Ready by the KCP Kymas' status, idle CPU, and a one-wave promotion (the
// ModuleReleaseMeta's channel moved: last Kyma on the new version, last target cluster with the
// new manager). What it needs on a plain API server is faked (./upstream-fixtures.ts,
// bench/UPSTREAM.md). Upstream always uses kyma-system/default in a target cluster: one Kyma per
// cluster at most.
import { spawn, execFile, type ChildProcess } from 'node:child_process';
import { openSync, closeSync } from 'node:fs';
import { mkdir, readFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import path from 'node:path';
import { promisify } from 'node:util';
import { parseAllDocuments } from 'yaml';
import type { KubeObject } from '../src/api/shared';
import { applyCrds, type Crd } from '../src/k8s/crds';
import { Informer } from '../src/k8s/informer';
import type { KubeClient } from '../src/k8s/rest-client';
import { SampleManager } from '../src/samples/manager';
import {
  delta,
  lessIdle,
  ours,
  perVerb,
  requestCounts,
  type MetricsSource,
  type RequestCounts,
} from './apiserver-metrics';
import { publishBenchModules, type BenchModule } from './fleet';
import { phase, snapshot, type PhaseCpu, type Tracked } from './processes';
import { Progress } from './progress';
import type { UpstreamFigures } from './targets';
import {
  ISTIO_NAMESPACE,
  KCP_NAMESPACE,
  UPSTREAM_CRD_FILES,
  gateway,
  gatewaySecret,
  namespaces,
  stubCrds,
  tlsSecret,
  upstreamKubeconfigSecret,
  upstreamKyma,
  type Pem,
} from './upstream-fixtures';

export interface UpstreamCluster {
  name: string;
  client: KubeClient;
  kubeconfig: string;
}

export interface UpstreamOptions {
  /** The lifecycle-manager binary; `<its dir>/../skr-webhook` must exist (it exits otherwise). */
  binary: string;
  /** Its source tree (for its CRDs); default `<binary dir>/../src/lm`. */
  sourceTree?: string;
  kcp: KubeClient;
  kcpKubeconfig: string;
  clusters: UpstreamCluster[];
  registryHost: string;
  /** The stack's directory: the log and upstream's TMPDIR go here. */
  dir: string;
  apiServers: MetricsSource[];
  /** The stack's servers (measured beside upstream's process, as in this product's phases). */
  servers: Tracked[];
  kymas: number;
  modules: number;
  /** The first module's index: modules of names, kinds and CRDs of their own. */
  moduleOffset: number;
  quietSeconds: number;
  idleSeconds: number;
  /** How long to wait for all Ready (and for the promotion). */
  timeoutSeconds?: number;
}

const LABEL = 'lifecycle-manager';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface KymaLike extends KubeObject {
  status?: { state?: string; modules?: { name: string; version?: string; state?: string }[] };
}

interface Measured<T> {
  result: T;
  seconds: number;
  procs: PhaseCpu[];
  requests: RequestCounts;
}

/** Runs upstream beside this product's run and returns its figures (`source: 'this run'`). */
export async function runUpstreamBeside(o: UpstreamOptions): Promise<UpstreamFigures> {
  if (o.clusters.length === 0) throw new Error('--beside-upstream needs target clusters (--clusters ≥ 1)');
  const count = Math.min(o.kymas, o.clusters.length);
  const stops: (() => unknown)[] = [];
  try {
    const pem = await selfSigned(o.dir);
    await setUpControlPlane(o, pem);
    await dropProductSkrKymas(o.clusters);
    console.log(`upstream: publishing ${o.modules} module(s)`);
    const modules = await publishBenchModules(o.kcp, o.registryHost, KCP_NAMESPACE, o.modules, o.moduleOffset);
    for (const c of o.clusters) {
      const manager = new SampleManager({ client: c.client, kinds: modules, processingMs: 0 });
      manager.start();
      stops.push(() => manager.stop());
    }
    const proc = await startUpstream(o);
    stops.push(() => proc.stop());
    const tracked: Tracked[] = [{ label: LABEL, pid: () => proc.child.pid }, ...o.servers];
    const kymas = new KymaWatch(o.kcp);
    await kymas.start();
    stops.push(() => kymas.stop());
    stops.push(await fakeCertManager(o.kcp, pem));
    return await measure(o, tracked, kymas, modules, count).catch(async (e: unknown) => {
      // The stack's directory (and the log in it) goes when the bench ends: its last errors now.
      const log = await readFile(path.join(o.dir, 'upstream.log'), 'utf8').catch(() => '');
      const errors = log.split('\n').filter((l) => l.includes('"level":"ERROR"'));
      console.error(`upstream: last errors in its log:\n${errors.slice(-10).join('\n')}`);
      throw e;
    });
  } finally {
    for (const s of stops.reverse()) await Promise.resolve(s()).catch((e: unknown) => console.error(String(e)));
  }
}

async function measure(
  o: UpstreamOptions,
  tracked: Tracked[],
  kymas: KymaWatch,
  modules: BenchModule[],
  count: number,
): Promise<UpstreamFigures> {
  const timeoutMs = (o.timeoutSeconds ?? 600) * 1000;
  const measured = <T>(fn: () => Promise<T>) => measuredBy(o.apiServers, tracked, fn);
  const quiet = await measured(() => sleep(o.quietSeconds * 1000));
  const names = Array.from({ length: count }, (_, i) => `up-${i}`);
  const install = await measured(() => installKymas(o, kymas, names, modules, timeoutMs));
  const idle = await measured(() => sleep(o.idleSeconds * 1000));
  const promotion = await measured(() => promote(o, kymas, names, modules, timeoutMs));
  const end = snapshot(tracked).get(LABEL);
  const cpu = (p: PhaseCpu[]) => p.find((x) => x.label === LABEL)?.cpuSeconds ?? 0;
  const installs = count * o.modules;
  const requests = lessIdle(
    ours(ownRequestsOut(install.requests, count)),
    ours(quiet.requests),
    quiet.seconds,
    install.seconds,
  );
  return {
    version: versionOf(o.binary),
    source:
      count < o.kymas
        ? `this run, with ${count} Kymas of ${o.kymas} (upstream uses kyma-system/default in each target ` +
          `cluster: one Kyma per cluster, ${o.clusters.length} clusters)`
        : 'this run',
    kymas: count,
    allReadySeconds: install.result,
    installCpuMsPerModule: (1000 * cpu(install.procs)) / installs,
    peakRssMB: Math.round(end?.peakRssMB ?? 0),
    promotion: { ...promotion.result, cpuSeconds: cpu(promotion.procs) },
    idleCpuSecondsPerMinute: (cpu(idle.procs) * 60) / idle.seconds,
    requestsPerInstall: perVerb(requests, installs).total,
  };
}

async function measuredBy<T>(sources: MetricsSource[], tracked: Tracked[], fn: () => Promise<T>): Promise<Measured<T>> {
  const [req0, procs0, t0] = [await requestCounts(sources), snapshot(tracked), Date.now()];
  const result = await fn();
  const seconds = (Date.now() - t0) / 1000;
  const procs = phase(procs0, snapshot(tracked));
  return { result, seconds, procs, requests: delta(req0, await requestCounts(sources)) };
}

/** The bench's own requests in the install: a POST per Kyma and per kubeconfig Secret, and the fake cert-manager's Secret per Kyma. */
function ownRequestsOut(counts: RequestCounts, kymas: number): RequestCounts {
  const out = new Map(counts);
  const less = (key: string, by: number) => out.has(key) && out.set(key, Math.max(0, out.get(key)! - by));
  less('kcp POST kymas ', kymas);
  less('kcp POST secrets ', 2 * kymas);
  return out;
}

function versionOf(binary: string): string {
  return /(\d+\.\d+\.\d+)/.exec(path.basename(binary))?.[1] ?? path.basename(binary);
}

/** A self-signed certificate and key (the gateway's CA and, for every Kyma, the "issued" certificate). */
async function selfSigned(dir: string): Promise<Pem> {
  const d = path.join(dir, 'upstream-pki');
  await mkdir(d, { recursive: true });
  const [cert, key] = [path.join(d, 'tls.crt'), path.join(d, 'tls.key')];
  await promisify(execFile)('openssl', [
    ...['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '2'],
    ...['-keyout', key, '-out', cert, '-subj', '/CN=klm-upstream-bench'],
  ]);
  return { cert: await readFile(cert, 'utf8'), key: await readFile(key, 'utf8') };
}

/** Upstream's CRDs (over this product's: same group, its run is over), the stubs, namespaces, Gateway and CA Secret. */
async function setUpControlPlane(o: UpstreamOptions, pem: Pem): Promise<void> {
  const tree = o.sourceTree ?? path.join(path.dirname(o.binary), '..', 'src', 'lm');
  const docs = await Promise.all(
    UPSTREAM_CRD_FILES.map(async (f) => parseAllDocuments(await readFile(path.join(tree, f), 'utf8'))),
  );
  const crds = docs.flat().map((d) => d.toJS() as Crd);
  await applyCrds(o.kcp, [...crds, ...stubCrds()]);
  for (const ns of namespaces()) await o.kcp.apply(ns);
  await o.kcp.apply(gateway());
  await o.kcp.apply(gatewaySecret(pem));
}

/**
 * This product's run left its remote Kyma `kyma-system/default` in each target cluster, and
 * upstream takes an existing one's modules and channel over its KCP Kyma's: gone first (no
 * finalizers; this product's worker and bridge are stopped).
 */
async function dropProductSkrKymas(clusters: UpstreamCluster[]): Promise<void> {
  await Promise.all(
    clusters.map(async (c) => {
      const kyma = ['operator.kyma-project.io/v1beta2', 'Kyma', 'default', 'kyma-system'] as const;
      const exists = await c.client.get(...kyma).catch(() => undefined);
      if (!exists) return;
      if (exists.metadata.finalizers?.length) await c.client.mergePatch(...kyma, { metadata: { finalizers: null } });
      await c.client.delete(...kyma);
      for (const deadline = Date.now() + 30_000; await c.client.get(...kyma); await sleep(200))
        if (Date.now() > deadline) throw new Error(`${c.name}: kyma-system/default not gone within 30 s`);
    }),
  );
}

const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });

interface UpstreamProcess {
  child: ChildProcess;
  stop(): Promise<void>;
}

/** Starts the binary (flags as bench/UPSTREAM.md explains), logging to `<dir>/upstream.log`; waits for /readyz. */
async function startUpstream(o: UpstreamOptions): Promise<UpstreamProcess> {
  const [metrics, probe, listener] = [await freePort(), await freePort(), await freePort()];
  const tmp = path.join(o.dir, 'upstream-tmp');
  await mkdir(tmp, { recursive: true });
  const log = path.join(o.dir, 'upstream.log');
  const fd = openSync(log, 'a');
  const child = spawn(
    o.binary,
    [
      '--leader-elect=false',
      '--enable-webhooks=false',
      `--metrics-bind-address=127.0.0.1:${metrics}`,
      `--health-probe-bind-address=127.0.0.1:${probe}`,
      `--kyma-skr-listener-bind-address=127.0.0.1:${listener}`,
      '--pprof=false',
      '--cert-management=cert-manager.io/v1',
      '--skr-watcher-image-tag=1.4.3',
      `--oci-registry-host=http://${o.registryHost}`,
      '--drop-crd-stored-version-map=',
      '--purge-finalizer-timeout=5s',
      // One wave, as this product's one-wave promotion: every Kyma requeued at once (default: spread over 5 min).
      '--module-upgrade-rollout-max-delay=0s',
      '--log-level=1',
    ],
    { env: { ...process.env, KUBECONFIG: o.kcpKubeconfig, TMPDIR: tmp }, stdio: ['ignore', fd, fd] },
  );
  closeSync(fd);
  let exited: number | null | undefined;
  const exit = new Promise<void>((r) => child.once('exit', (code) => ((exited = code), r())));
  console.log(`upstream: started ${o.binary} (pid ${child.pid}), log ${log}`);
  for (const deadline = Date.now() + 60_000; ; await sleep(500)) {
    if (exited !== undefined) throw new Error(`upstream exited with ${exited} at startup: see ${log}`);
    if (
      await fetch(`http://127.0.0.1:${probe}/readyz`).then(
        (r) => r.ok,
        () => false,
      )
    )
      break;
    if (Date.now() > deadline) throw new Error(`upstream not ready within 60 s: see ${log}`);
  }
  return {
    child,
    stop: async () => {
      if (exited !== undefined) return;
      child.kill('SIGTERM');
      await Promise.race([exit, sleep(15_000)]);
      if (exited === undefined) child.kill('SIGKILL');
    },
  };
}

/** cert-manager's part: for every Certificate upstream applies in istio-system, the Secret it would issue. */
async function fakeCertManager(kcp: KubeClient, pem: Pem): Promise<() => void> {
  const issued = new Set<string>();
  const inf = new Informer(kcp, {
    apiVersion: 'cert-manager.io/v1',
    kind: 'Certificate',
    namespace: ISTIO_NAMESPACE,
    onEvent: (type, c) => {
      const name = (c.spec as { secretName?: string } | undefined)?.secretName ?? c.metadata.name;
      if (type === 'DELETED' || issued.has(name)) return;
      issued.add(name);
      kcp.apply(tlsSecret(name, ISTIO_NAMESPACE, pem)).catch((e: unknown) => {
        issued.delete(name);
        console.error(`upstream: fake cert-manager: ${String(e)}`);
      });
    },
  });
  await inf.start();
  return () => inf.stop();
}

/** The KCP Kymas of kcp-system, each change passed to the listeners. */
class KymaWatch {
  readonly listeners = new Set<(k: KymaLike) => void>();
  private readonly informer: Informer;

  constructor(kcp: KubeClient) {
    this.informer = new Informer(kcp, {
      apiVersion: 'operator.kyma-project.io/v1beta2',
      kind: 'Kyma',
      namespace: KCP_NAMESPACE,
      onEvent: (_t, o) => this.listeners.forEach((l) => l(o)),
    });
  }

  start(): Promise<void> {
    return this.informer.start();
  }

  stop(): void {
    this.informer.stop();
  }

  /** Resolves with each Kyma's time when `test` first holds for it, once it holds for all `names`. */
  until(
    names: string[],
    what: string,
    test: (k: KymaLike) => boolean,
    timeoutMs: number,
  ): Promise<Map<string, number>> {
    const at = new Map<string, number>();
    const progress = new Progress(what, names.length);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.listeners.delete(l);
        progress.finish();
        reject(new Error(`upstream: ${what}: ${at.size} of ${names.length} after ${timeoutMs / 1000} s`));
      }, timeoutMs);
      const l = (k: KymaLike) => {
        if (!names.includes(k.metadata.name) || at.has(k.metadata.name) || !test(k)) return;
        at.set(k.metadata.name, Date.now());
        progress.update(at.size);
        if (at.size < names.length) return;
        clearTimeout(timer);
        this.listeners.delete(l);
        progress.finish();
        resolve(at);
      };
      this.listeners.add(l);
    });
  }
}

/** Creates the Kymas (Kyma i on cluster i) with their kubeconfig Secrets; seconds until all are Ready. */
async function installKymas(
  o: UpstreamOptions,
  kymas: KymaWatch,
  names: string[],
  modules: BenchModule[],
  timeoutMs: number,
): Promise<number> {
  const ready = kymas.until(names, 'upstream: Kymas Ready', (k) => k.status?.state === 'Ready', timeoutMs);
  const t0 = Date.now();
  await Promise.all(
    names.map(async (name, i) => {
      await o.kcp.create(upstreamKubeconfigSecret(name, o.clusters[i % o.clusters.length]!.kubeconfig));
      await o.kcp.create(
        upstreamKyma(
          name,
          modules.map((m) => m.name),
        ),
      );
    }),
  );
  await ready;
  return (Date.now() - t0) / 1000;
}

/** One wave: the last module's regular channel to 1.1.0; the last Kyma on it, Ready, and the last cluster with its new manager. */
async function promote(
  o: UpstreamOptions,
  kymas: KymaWatch,
  names: string[],
  modules: BenchModule[],
  timeoutMs: number,
): Promise<{ lastSeconds: number; inClusterLastSeconds: number }> {
  const promoted = modules[1] ?? modules[0]!;
  const version = '1.1.0';
  const clusters = names.map((_, i) => o.clusters[i % o.clusters.length]!);
  const inCluster = await managerImages(clusters, `${promoted.name}-manager`, `:${version}`);
  const onNew = kymas.until(
    names,
    `upstream: promotion of ${promoted.name} to ${version}`,
    (k) =>
      k.status?.modules?.some((x) => x.name === promoted.name && x.version === version && x.state === 'Ready') ?? false,
    timeoutMs,
  );
  const t0 = Date.now();
  try {
    await o.kcp.mergePatch('operator.kyma-project.io/v1beta2', 'ModuleReleaseMeta', promoted.name, KCP_NAMESPACE, {
      spec: {
        channels: [
          { channel: 'regular', version },
          { channel: 'fast', version },
        ],
      },
    });
    const [kymaTimes, clusterTimes] = await Promise.all([onNew, inCluster.all]);
    return {
      lastSeconds: (Math.max(...kymaTimes.values()) - t0) / 1000,
      inClusterLastSeconds: (Math.max(...clusterTimes) - t0) / 1000,
    };
  } finally {
    inCluster.stop();
  }
}

interface Deployment extends KubeObject {
  spec?: { template?: { spec?: { containers?: { image?: string }[] } } };
}

/** When each cluster first holds Deployment `name` (any namespace: upstream renders into `default`) with an image ending in `suffix`. */
async function managerImages(
  clusters: UpstreamCluster[],
  name: string,
  suffix: string,
): Promise<{ all: Promise<number[]>; stop(): void }> {
  const seen = new Map<string, number>();
  let done!: () => void;
  const all = new Promise<void>((r) => (done = r));
  const informers = clusters.map(
    (c) =>
      new Informer(c.client, {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        fieldSelector: `metadata.name=${name}`,
        onEvent: (type, d) => {
          const images = (d as Deployment).spec?.template?.spec?.containers?.map((x) => x.image ?? '') ?? [];
          if (type === 'DELETED' || seen.has(c.name) || !images.some((i) => i.endsWith(suffix))) return;
          seen.set(c.name, Date.now());
          if (seen.size === clusters.length) done();
        },
      }),
  );
  await Promise.all(informers.map((i) => i.start()));
  return { all: all.then(() => [...seen.values()]), stop: () => informers.forEach((i) => i.stop()) };
}
