// `klm up`: the main job. Runs the worker and the bridge against a control plane and a
// Temporal server: the local stack with sample modules and a sample fleet (default), or a
// given kubeconfig and Temporal address.
import { mkdir, mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import type { Kyma } from '../api/kyma';
import { API_VERSION, type KubeObject } from '../api/shared';
import type { KlmConfig } from '../infra/config';
import { serveMetrics } from '../infra/metrics';
import { describeTemporal } from '../infra/temporal-env';
import { installCrds } from '../k8s/crds';
import { controlPlaneClient } from '../k8s/control-plane';
import { KubeClient } from '../k8s/rest-client';
import { kubeConfigFromFile } from '../k8s/kubeconfig';
import { startStack, type Stack } from '../localstack/stack';
import type { Profile } from '../localstack/tools';
import { SampleManager } from '../samples/manager';
import { newcomerKyma, SAMPLE_DEFAULT_NAMESPACE, SAMPLE_NAMESPACE, sampleFleet } from '../samples/fleet';
import { publishSamples, SAMPLE_KINDS } from '../samples/modules';
import { Bridge } from '../starter/bridge';
import { ensureSearchAttributes } from '../temporal/search-attributes';
import { startWorkerProcess, type WorkerProcess } from './worker-process';

export interface UpOptions {
  config: KlmConfig;
  profile: Profile;
  dir?: string;
  /** Use this control plane and Temporal instead of starting the local stack. */
  /** An existing control plane; Temporal is then the one `config.temporal` names. */
  external?: { kubeconfig: string };
  fleetSize: number;
}

function waitForSignal(): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    for (const s of ['SIGINT', 'SIGTERM'] as const) process.once(s, () => resolve(s));
  });
}

/** Prints the fleet's states whenever they change, until stopped. */
function watchFleet(kcp: KubeClient): () => void {
  let last = '';
  const timer = setInterval(() => {
    void kcp.list<Kyma & KubeObject>(API_VERSION, 'Kyma').then(
      ({ items }) => {
        const lines = items.map((k) => {
          const mods = (k.status?.modules ?? []).map((m) => `${m.name}@${m.version ?? '?'}=${m.state}`).join(' ');
          // Why a module is not Ready (a blocked removal, an error) is worth a line of its own.
          const why = (k.status?.modules ?? [])
            .filter((m) => m.state !== 'Ready' && m.state !== 'Unmanaged' && m.message)
            .map((m) => `\n      ${m.name}: ${m.message}`)
            .join('');
          return (
            `  ${`${k.metadata.namespace}/${k.metadata.name}`.padEnd(28)} ` +
            `${(k.status?.state || '-').padEnd(11)} ${k.spec.channel.padEnd(8)} ${mods}${why}`
          );
        });
        const text = lines.join('\n');
        if (text !== last) {
          last = text;
          console.log(`[${new Date().toISOString().slice(11, 19)}] Kymas:\n${text}`);
        }
      },
      () => undefined,
    );
  }, 1000);
  return () => clearInterval(timer);
}

/** A value as a POSIX shell reads it back: quoted unless it is plain. */
function shellWord(value: string): string {
  return /^[\w@%+=:,./-]+$/.test(value) ? value : `'${value.replaceAll("'", `'\\''`)}'`;
}

/** The settings klm reads for the running stack, as `NAME=value` pairs, a line for each group. */
function exportLines(
  kubeconfig: string,
  temporalAddress: string,
  namespace: string,
  stack: { registryHost: string; temporalUiUrl?: string } | undefined,
): string[] {
  const pairs = (entries: [string, string | undefined][]) =>
    entries
      .filter((e): e is [string, string] => e[1] !== undefined)
      .map(([k, v]) => `${k}=${shellWord(v)}`)
      .join(' ');
  return [
    pairs([
      ['KUBECONFIG', kubeconfig],
      ['TEMPORAL_ADDRESS', temporalAddress],
      ['TEMPORAL_NAMESPACE', namespace === 'default' ? undefined : namespace],
    ]),
    pairs([
      ['KLM_TEMPORAL_UI_URL', stack?.temporalUiUrl],
      ['KLM_OCI_REGISTRY_HOST', stack?.registryHost],
    ]),
  ].filter((l) => l !== '');
}

type Stops = (() => Promise<void> | void)[];

/**
 * The worker runs as its Deployment runs it, a process of its own: configured by its
 * environment (the stack's addresses; the local stack's registry holds the sample modules'
 * components, unless one is configured), its log quieter by default (the fleet's states are
 * printed here), restarted when it dies.
 */
async function startWorker(
  o: UpOptions,
  stack: Stack | undefined,
  temporal: { address: string; namespace: string },
  kubeconfig: string,
): Promise<WorkerProcess> {
  const dir = stack?.info.dir ?? o.dir ?? (await mkdtemp(path.join(tmpdir(), 'klm-up-')));
  await mkdir(dir, { recursive: true });
  return await startWorkerProcess({
    dir,
    env: {
      ...process.env,
      KLM_LOG_LEVEL: o.config.logLevel ?? 'WARN',
      TEMPORAL_ADDRESS: temporal.address,
      TEMPORAL_NAMESPACE: temporal.namespace,
      KUBECONFIG: kubeconfig,
      KLM_TASK_QUEUE: o.config.taskQueue,
      ...(stack && !o.config.ociRegistry ? { KLM_OCI_REGISTRY_HOST: stack.info.registryHost } : {}),
    },
  });
}

/** The sample modules, their manager and the sample fleet, on the local stack. */
async function startSamples(kcp: KubeClient, stack: Stack, fleetSize: number, stops: Stops): Promise<void> {
  // The sample catalog where the fleet is, and where the newcomer's Kyma is (klm's default --kyma).
  const newcomer = newcomerKyma();
  for (const ns of [SAMPLE_NAMESPACE, newcomer.metadata.namespace!]) {
    await kcp.apply({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
    const published = await publishSamples(kcp, stack.info.registryHost, ns);
    console.log(`Published sample modules to ${ns}: ${published.join(', ')}`);
  }
  const manager = new SampleManager({ client: kcp, kinds: SAMPLE_KINDS });
  manager.start();
  stops.push(() => manager.stop());
  for (const k of [newcomer, ...sampleFleet(fleetSize)]) await kcp.apply(k);
  stops.push(watchFleet(kcp));
}

/** Where everything runs, and what another shell needs to reach it. */
function printRunning(p: {
  stack: Stack | undefined;
  temporal: Parameters<typeof describeTemporal>[0] & { address: string };
  namespace: string;
  taskQueue: string;
  kubeconfig: string;
  metricsPort: number;
  worker: WorkerProcess;
}): void {
  const { stack, temporal, namespace, kubeconfig, worker } = p;
  console.log('');
  console.log('klm is running.');
  if (stack) console.log(`  Temporal UI:      ${stack.info.temporalUiUrl}/namespaces/${namespace}/workflows`);
  console.log(`  Temporal:         ${describeTemporal(temporal)} (namespace ${namespace}, task queue ${p.taskQueue})`);
  console.log(`  kubeconfig:       ${kubeconfig}`);
  console.log(
    `  metrics:          http://127.0.0.1:${p.metricsPort}/metrics (bridge), ` +
      `http://127.0.0.1:${worker.metricsPort}/metrics (worker; dashboard: deploy/grafana/klm-dashboard.json)`,
  );
  console.log(`  worker log:       ${worker.process.logFile}`);
  if (stack) {
    console.log(`  kubectl:          ${stack.info.tools.kubectl} --kubeconfig ${kubeconfig} get kymas -A`);
    console.log(`  OCI registry:     ${stack.info.registryHost}`);
    console.log(`  logs and data:    ${stack.info.dir}`);
  }
  // What klm and kubectl in another shell need: paste these lines there.
  console.log(`Paste into another shell for klm (\`npx klm module list\`) and kubectl:`);
  for (const line of exportLines(kubeconfig, temporal.address, namespace, stack?.info)) console.log(`  export ${line}`);
  console.log('Press Ctrl-C to stop.');
}

export async function up(o: UpOptions): Promise<void> {
  const stack = o.external ? undefined : await startStack({ profile: o.profile, temporalUi: true, dir: o.dir });
  const kubeconfig = o.external?.kubeconfig ?? stack!.info.kubeconfig;
  const temporal = o.external ? o.config.temporal.connectionOptions : { address: stack!.info.temporalAddress };
  const namespace = o.config.temporal.namespace;
  const kcp = o.external
    ? await controlPlaneClient(kubeconfig)
    : await KubeClient.fromKubeConfig(kubeConfigFromFile(kubeconfig));
  const stops: Stops = [];
  try {
    if (o.external) await installCrds(kcp);
    const connection = await Connection.connect(temporal);
    stops.push(() => connection.close());
    await ensureSearchAttributes(connection, namespace);
    // Every sample Kyma targets the one local cluster: give each its own namespace.
    const settings = stack ? { ...o.config.settings, defaultNamespace: SAMPLE_DEFAULT_NAMESPACE } : o.config.settings;
    // The worker stops after the bridge.
    const worker = await startWorker(o, stack, { address: temporal.address, namespace }, kubeconfig);
    stops.push(() => worker.process.stop());
    const metrics = await serveMetrics(o.config.metricsPort);
    stops.push(() => metrics.close());
    const bridge = new Bridge({
      kcp,
      temporal: new Client({ connection, namespace }),
      taskQueue: o.config.taskQueue,
      settings,
      probeMs: o.config.targetProbeIntervalMs,
      newsWindowMs: o.config.newsWindowMs,
      targetRequestTimeoutMs: o.config.targetRequestTimeoutMs,
      allowKubeconfigExec: o.config.allowKubeconfigExec,
      log: (m) => console.error(`bridge: ${m}`),
    });
    await bridge.start();
    stops.push(() => bridge.stop());
    if (stack) await startSamples(kcp, stack, o.fleetSize, stops);
    printRunning({
      stack,
      temporal,
      namespace,
      taskQueue: o.config.taskQueue,
      kubeconfig,
      metricsPort: metrics.port,
      worker,
    });
    const signal = await waitForSignal();
    console.log(`\n${signal}: stopping ...`);
  } finally {
    for (const s of stops.reverse()) {
      try {
        await s();
      } catch (err) {
        console.error(`while stopping: ${(err as Error).message}`);
      }
    }
    await stack?.stop();
  }
}
