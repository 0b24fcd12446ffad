// npm run bench [-- --kymas 1000 --modules 3 --clusters 2 --sizes 100,1000 --samples 200 --idle 60 --smoke]
//   a given stack instead of a local one: --kubeconfig F --temporal-address H:P --registry H:P
//   [--temporal-namespace NS] [--target-kubeconfigs F1,F2]
// Starts the local stack with `clusters` further clusters, runs worker, bridge and sample
// managers in this process, installs N Kymas × M modules (Kyma i on cluster i mod clusters,
// through a kubeconfig Secret) and measures; writes bench/results/<date>.json and .md.
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { cpus } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Client, Connection } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime } from '@temporalio/worker';
import { SampleManager } from '../src/samples/manager';
import type { Kyma } from '../src/api/kyma';
import { moduleWorkflowId } from '../src/api/names';
import { API_VERSION } from '../src/api/shared';
import { renderObjects } from '../src/activities/install/render';
import { inBatches } from '../src/activities/install/apply';
import { Informer } from '../src/k8s/informer';
import { kubeConfigFromFile } from '../src/k8s/kubeconfig';
import type { KubeObject } from '../src/api/shared';
import { KubeApiError, KubeClient } from '../src/k8s/rest-client';
import { installCrds } from '../src/k8s/crds';
import { Bridge } from '../src/starter/bridge';
import { createKlmWorker } from '../src/workers/worker';
import { DEFAULT_SETTINGS } from '../src/contract/settings';
import { benchKyma, kubeconfigSecret, publishBenchModules, type BenchModule } from './fleet';
import { cpuByProcess, cpuSince } from './cpu';
import { Progress } from './progress';
import { benchStack } from './stack';
import { percentile, renderReport, type BenchReport } from './report';

const RESULTS = fileURLToPath(new URL('./results/', import.meta.url));

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      kymas: { type: 'string' }, modules: { type: 'string' }, sizes: { type: 'string' },
      samples: { type: 'string' }, idle: { type: 'string' }, smoke: { type: 'boolean' }, out: { type: 'string' }, clusters: { type: 'string' },
      kubeconfig: { type: 'string' }, 'temporal-address': { type: 'string' }, 'temporal-namespace': { type: 'string' },
      registry: { type: 'string' }, 'target-kubeconfigs': { type: 'string' },
    },
  });
  const smoke = values.smoke ?? false;
  const n = Number(values.kymas ?? (smoke ? 5 : 1000));
  const m = Number(values.modules ?? (smoke ? 2 : 3));
  const sizes = (values.sizes ?? (smoke ? `2,${n}` : `100,${n}`)).split(',').map(Number);
  const samples = Number(values.samples ?? (smoke ? 10 : 200));
  const idleSeconds = Number(values.idle ?? (smoke ? 5 : 60));
  const out = values.out ?? RESULTS;
  const clusterCount = Number(values.clusters ?? (smoke ? 1 : 2));
  Runtime.install({ logger: new DefaultLogger('WARN'), shutdownSignals: [] });

  const stack = await benchStack(values, clusterCount);
  // On a given stack, earlier runs' objects may still be there: this run's get a prefix.
  const run = stack.given ? `r${Date.now().toString(36)}-` : '';
  const stops: (() => Promise<unknown> | void)[] = [];
  let peakRss = 0;
  const rssTimer = setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage().rss)), 500);
  stops.push(() => clearInterval(rssTimer));
  try {
    const kcp = await KubeClient.fromKubeConfig(kubeConfigFromFile(stack.kubeconfig));
    if (stack.given) await installCrds(kcp);
    const ns = `${run}bench`;
    await kcp.apply({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
    const modules = await publishBenchModules(kcp, stack.registryHost, ns, m);
    const settings = { ...DEFAULT_SETTINGS, defaultNamespace: '{kyma}' };
    const connection = await Connection.connect({ address: stack.temporalAddress });
    const client = new Client({ connection, namespace: stack.temporalNamespace });
    const native = await NativeConnection.connect({ address: stack.temporalAddress });
    const worker = await createKlmWorker({ connection: native, namespace: stack.temporalNamespace, taskQueue: `${run}bench`, kcp, blobCacheDir: path.join(stack.dir, 'blobs'), registry: { insecureHosts: [] }, ociRegistry: { host: stack.registryHost } });
    const running = worker.run();
    stops.push(async () => { worker.shutdown(); await running; await native.close(); await connection.close(); });
    const bridge = new Bridge({ kcp, temporal: client, taskQueue: `${run}bench`, settings });
    await bridge.start();
    stops.push(() => bridge.stop());
    // Where the Kymas' modules go: the further clusters, each through kubeconfig Secrets (or,
    // with --clusters 0, the control plane itself).
    const clusters = stack.targets.length === 0
      ? [{ client: kcp, kubeconfig: undefined }]
      : await Promise.all(stack.targets.map(async (file) => ({ client: await KubeClient.fromKubeConfig(kubeConfigFromFile(file)), kubeconfig: await readFile(file, 'utf8') })));
    const clusterOf = (kyma: string) => clusters[Number(kyma.slice(kyma.lastIndexOf('-') + 1)) % clusters.length]!;
    for (const c of clusters) {
      const manager = new SampleManager({ client: c.client, kinds: modules.map((x) => ({ apiVersion: x.apiVersion, kind: x.kind })), processingMs: 0 });
      manager.start();
      stops.push(() => manager.stop());
    }

    // Every Kyma state change, timestamped, from a watch of our own.
    const listeners = new Set<(k: Kyma) => void>();
    const kymaWatch = new Informer(kcp, { apiVersion: API_VERSION, kind: 'Kyma', namespace: ns, onEvent: (_t, o) => listeners.forEach((l) => l(o as unknown as Kyma)) });
    await kymaWatch.start();
    stops.push(() => kymaWatch.stop());

    /** Creates `count` Kymas and waits until all are Ready; per-Kyma times in ms. */
    async function installFleet(prefix: string, count: number): Promise<{ totalMs: number; perKymaMs: number[]; names: string[]; cpu: ReturnType<typeof cpuSince> }> {
      const names = Array.from({ length: count }, (_, i) => `${prefix}-${i}`);
      const created = new Map<string, number>();
      const ready = new Map<string, number>();
      const progress = new Progress(`${prefix}: Kymas Ready`, count);
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
      const cpu0 = await cpuByProcess();
      const t0 = Date.now();
      await inBatches(names, async (name) => {
        created.set(name, Date.now());
        const { kubeconfig } = clusterOf(name);
        if (kubeconfig) await kcp.create(kubeconfigSecret(ns, name, kubeconfig));
        await kcp.create(benchKyma(ns, name, modules));
      }, 16);
      await done;
      const totalMs = Date.now() - t0;
      progress.finish();
      return { totalMs, perKymaMs: names.map((x) => ready.get(x)! - created.get(x)!), names, cpu: cpuSince(cpu0, await cpuByProcess()) };
    }

    const growth: { kymas: number; allReadyMs: number }[] = [];
    let main!: Awaited<ReturnType<typeof installFleet>>;
    for (const [i, size] of sizes.entries()) {
      const r = await installFleet(`${run}k${i}`, size);
      growth.push({ kymas: size, allReadyMs: r.totalMs });
      if (size === n) main = r;
    }
    main ??= await installFleet(`${run}main`, n);

    // History events per module install, from a sample of module workflows.
    const historySample = main.names.slice(0, Math.min(20, main.names.length));
    const historyLengths = await Promise.all(historySample.flatMap((k) => modules.map(async (mod) => (await client.workflow.getHandle(moduleWorkflowId(ns, k, mod.name)).describe()).historyLength)));

    // Idle cost: CPU of this process (worker, bridge, the idle sample manager) with all Ready.
    const cpu0 = process.cpuUsage();
    await new Promise((r) => setTimeout(r, idleSeconds * 1000));
    const cpu = process.cpuUsage(cpu0);
    const idleCpuSecondsPerMinute = ((cpu.user + cpu.system) / 1e6) * (60 / idleSeconds);

    // Status propagation: a module CR changes state → the Kyma's status shows it.
    const propagation: number[] = [];
    const target = modules[0]!;
    const progress = new Progress('status propagation samples', samples);
    for (let s = 0; s < samples; ) {
      const offset = s % main.names.length;
      const batch = main.names.slice(offset, offset + Math.min(50, samples - s));
      const flip = Math.floor(s / main.names.length) % 2 === 0 ? 'Error' : 'Ready';
      await Promise.all(batch.map(async (k) => {
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
        await clusterOf(k).client.mergePatch(target.apiVersion, target.kind, 'default', k, { spec: { simulateState: flip === 'Error' ? 'Error' : null } });
        propagation.push((await seen) - t);
      }));
      s += batch.length;
      progress.update(s);
    }
    progress.finish();
    await Promise.all(main.names.map((k) => clusterOf(k).client.mergePatch(target.apiVersion, target.kind, 'default', k, { spec: { simulateState: null } })));

    // Promotion: the regular channel of one module moves to 1.1.0 for the whole fleet.
    const promoted = modules[1] ?? modules[0]!;
    const allNames = new Set(main.names);
    const onNew = new Map<string, number>();
    const promo = new Progress(`promotion of ${promoted.name} to 1.1.0`, allNames.size);
    const promotionDone = new Promise<void>((resolve) => {
      const l = (k: Kyma) => {
        const st = k.status?.modules?.find((x) => x.name === promoted.name);
        if (allNames.has(k.metadata.name) && !onNew.has(k.metadata.name) && st?.version === '1.1.0' && st.state === 'Ready') {
          onNew.set(k.metadata.name, Date.now());
          promo.update(onNew.size);
          if (onNew.size === allNames.size) {
            listeners.delete(l);
            resolve();
          }
        }
      };
      listeners.add(l);
    });
    const p0 = Date.now();
    await kcp.mergePatch(API_VERSION, 'ModuleReleaseMeta', promoted.name, ns, { spec: { channels: [{ channel: 'regular', version: '1.1.0' }, { channel: 'fast', version: '1.1.0' }] } });
    await promotionDone;
    promo.finish();
    const promoTimes = [...onNew.values()].map((t) => t - p0);

    // The limit: a plain concurrent loop server-side-applies the same rendered objects.
    const loopMs = await applyLoop(kcp, stack.registryHost, ns, clusters.map((c) => c.client), modules, main.names.length, `${run}loop`);

    const cores = cpus().length;
    const report: BenchReport = {
      date: new Date().toISOString(),
      machine: { cores, node: process.version },
      targetClusters: stack.targets.length,
      kymas: n,
      modulesPerKyma: m,
      allReadySeconds: main.totalMs / 1000,
      installCpu: main.cpu,
      perKymaReadySeconds: { p50: percentile(main.perKymaMs, 50) / 1000, p95: percentile(main.perKymaMs, 95) / 1000, p99: percentile(main.perKymaMs, 99) / 1000 },
      promotion: { firstSeconds: Math.min(...promoTimes) / 1000, lastSeconds: Math.max(...promoTimes) / 1000 },
      statusPropagation: { samples: propagation.length, p50Seconds: percentile(propagation, 50) / 1000, p95Seconds: percentile(propagation, 95) / 1000 },
      idleCpuSecondsPerMinute,
      historyEventsPerModuleInstall: historyLengths.reduce((a, b) => a + b, 0) / historyLengths.length,
      peakRssMB: peakRss / 1e6,
      growth: growth.map((g) => ({ kymas: g.kymas, allReadySeconds: g.allReadyMs / 1000 })),
      loop: { seconds: loopMs / 1000, ratio: main.totalMs / loopMs },
      shared: stack.given
        ? `A given stack (control plane ${stack.kubeconfig}, Temporal ${stack.temporalAddress}, registry ${stack.registryHost}, ${stack.targets.length} target cluster(s)): what its servers share is up to it. This process (${cores} cores) runs worker, bridge, a sample manager per cluster and the measuring watch; Kyma i targets cluster i mod ${stack.targets.length || 1} through a kubeconfig Secret of its own.`
        : clusterCount === 0
        ? `One machine (${cores} cores) runs everything: API server, etcd, controller-manager, scheduler, kwok, the Temporal dev server (SQLite, WAL, no fsync), the registry, and this process (worker, bridge, sample manager, the measuring watch). All Kymas target the control-plane cluster itself (no kubeconfig Secrets), each with a namespace of its own.`
        : `One machine (${cores} cores) runs everything: the control plane (API server, etcd, controller-manager, scheduler, kwok), ${clusterCount} further cluster(s) as Kyma targets (each its own kube-apiserver, controller-manager, scheduler and kwok node, all on the one etcd under a key prefix each), the Temporal dev server (SQLite, WAL, no fsync), the registry, and this process (worker, bridge, a sample manager per cluster, the measuring watch). Kyma i targets cluster i mod ${clusterCount} through a kubeconfig Secret of its own; Secrets holding the same kubeconfig share one client and one set of watches in worker and bridge (in production every cluster has its own). Each Kyma's namespaced objects go to a namespace of its own.`,
    };
    await mkdir(out, { recursive: true });
    const stamp = report.date.replace(/[:.]/g, '-');
    await writeFile(path.join(out, `${stamp}.json`), JSON.stringify(report, null, 2));
    await writeFile(path.join(out, `${stamp}.md`), renderReport(report));
    console.log(renderReport(report));
    console.log(`written: ${path.join(out, `${stamp}.json`)} and .md`);
  } finally {
    for (const s of stops.reverse()) await Promise.resolve(s()).catch((e: unknown) => console.error(`stopping: ${(e as Error).message}`));
    await stack.stop();
  }
}

/**
 * Applies what the engine applies (rendered bench modules + default CRs) for `count` fresh
 * namespaces, spread over the same clusters as the Kymas.
 */
async function applyLoop(kcp: KubeClient, registryHost: string, templateNamespace: string, targets: KubeClient[], modules: BenchModule[], count: number, prefix: string): Promise<number> {
  const docs = await Promise.all(modules.map(async (mod) => (await kcp.get<KubeObject & { spec: { descriptor: unknown } }>(API_VERSION, 'ModuleTemplate', `${mod.name}-1.0.0`, templateNamespace))!));
  const layers = await Promise.all(docs.map(async (t, i) => {
    const { blobLocation, componentLocation, configuredComponentLocation, namesComponent, pullDescriptor, rawManifestResource } = await import('../src/oci/ocm');
    const { Registries } = await import('../src/oci/registries');
    const { extractSingleYaml } = await import('../src/oci/tar');
    const loc = namesComponent(t.spec.descriptor) ? componentLocation(t.spec.descriptor, 'bench') : configuredComponentLocation({ host: registryHost }, `kyma-project.io/module/${modules[i]!.name}`, '1.0.0', 'bench');
    const oci = Registries.unconfigured().client(loc.registry);
    const descriptor = await pullDescriptor(oci, loc);
    const res = rawManifestResource(descriptor, blobLocation(descriptor, loc, 'bench'), 'bench');
    return extractSingleYaml(await oci.pullBlob(res.repository, res.digest), 'bench');
  }));
  const objects: { client: KubeClient; o: KubeObject }[] = [];
  for (let i = 0; i < count; i++) {
    const ns = `${prefix}-${i}`;
    const client = targets[i % targets.length]!;
    objects.push({ client, o: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } } });
    for (const [j, yaml] of layers.entries()) {
      const mod = modules[j]!;
      const rendered = renderObjects(yaml, { kymaNamespace: templateNamespace, kymaName: ns, module: mod.name, defaultNamespace: ns }).filter((o) => o.kind !== 'Namespace');
      objects.push(...rendered.map((o) => ({ client, o })));
      objects.push({ client, o: { apiVersion: mod.apiVersion, kind: mod.kind, metadata: { name: 'default', namespace: ns }, spec: {} } });
    }
  }
  // A plain loop applies each distinct object once: the CRDs (and other cluster-scoped objects)
  // that every Kyma's modules share go to each cluster once.
  const seen = new Set<string>();
  const distinct = objects.filter(({ client, o }) => {
    const key = `${targets.indexOf(client)}/${o.apiVersion}/${o.kind}/${o.metadata.namespace ?? ''}/${o.metadata.name}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
  const t0 = Date.now();
  const progress = new Progress('loop baseline: objects applied', distinct.length);
  let doneCount = 0;
  const isFirst = ({ o }: { o: KubeObject }) => o.kind === 'CustomResourceDefinition' || o.kind === 'Namespace';
  for (const batch of [distinct.filter(isFirst), distinct.filter((x) => !isFirst(x))]) {
    await inBatches(batch, async ({ client, o }) => {
      // Like the engine's activities, a timeout or a server error is tried again.
      for (let attempt = 1; ; attempt++) {
        try {
          await client.apply(o);
          break;
        } catch (err) {
          const status = err instanceof KubeApiError ? err.status : 0;
          if (attempt >= 5 || (status >= 400 && status < 500 && status !== 409 && status !== 429)) throw err;
          await new Promise((r) => setTimeout(r, 1000 * attempt));
        }
      }
      progress.update(++doneCount);
    }, 64);
  }
  progress.finish();
  return Date.now() - t0;
}

main().then(() => process.exit(0), (err: unknown) => {
  console.error(`bench: ${err instanceof Error ? err.stack : String(err)}`);
  process.exit(1);
});
