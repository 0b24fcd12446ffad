// The local control plane: etcd + kube-apiserver (+ controller-manager, scheduler and kwok
// in the full profile), the Temporal dev server and an OCI registry, each on free loopback
// ports in its own directory. Used by the tests' global setup and by `klm up`.
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { installCrds } from '../k8s/crds';
import { kubeConfigFromFile } from '../k8s/kubeconfig';
import { KubeClient } from '../k8s/rest-client';
import { startEtcd } from './etcd';
import { KWOK_NODE, startKwok } from './kwok';
import { startApiServer, startControllerManager, startScheduler, type ApiServer } from './kube';
import { log } from './log';
import { generatePki, type Pki } from './pki';
import type { ManagedProcess } from './process';
import { startRegistry } from './registry';
import { startTemporal } from './temporal';
import { ensureTools, type Profile, type ToolPaths } from './tools';

/** Everything a client needs to reach the stack; serialisable (written to stack.json). */
export interface StackInfo {
  profile: Profile;
  dir: string;
  kubeconfig: string;
  kubeApiUrl: string;
  temporalAddress: string;
  temporalNamespace: string;
  temporalUiUrl?: string;
  registryHost: string;
  /** etcd and the PKI, for further API servers a test starts on its own. */
  etcdUrl: string;
  pkiDir: string;
  tools: ToolPaths;
  /** Further clusters (own API server, controllers and kwok; the one etcd): targets for Kymas. */
  targetClusters: TargetClusterInfo[];
}

export interface TargetClusterInfo {
  name: string;
  kubeconfig: string;
  kubeApiUrl: string;
}

export interface Stack {
  info: StackInfo;
  /** The stack's servers, labelled (`kube-apiserver`, `cluster-1 kube-apiserver`, …): their pids, for measuring. */
  servers: { label: string; process: ManagedProcess }[];
  stop(): Promise<void>;
}

export interface StackOptions {
  profile?: Profile;
  /** Serve the Temporal Web UI (the main command does; tests need not). */
  temporalUi?: boolean;
  /** Working directory for data and logs; a fresh temp dir by default, removed on stop. */
  dir?: string;
  /** How many further clusters to start as Kyma targets (full profile only). */
  targetClusters?: number;
}

async function timed<T>(what: string, fn: () => Promise<T>): Promise<T> {
  const t = Date.now();
  const r = await fn();
  log('stack', `${what} ready in ${((Date.now() - t) / 1000).toFixed(1)}s`);
  return r;
}

/** What makes Deployments roll out: controller-manager, scheduler, and kwok with its node. */
async function startWorkloads(
  tools: ToolPaths,
  dir: string,
  api: ApiServer,
  pki: Pki,
  kube: KubeClient,
  named: (label: string, p: ManagedProcess) => ManagedProcess,
  label = '',
): Promise<ManagedProcess[]> {
  const procs = await Promise.all([
    timed(`${label}kube-controller-manager`, () => startControllerManager(tools.kubeControllerManager, dir, api, pki)),
    timed(`${label}kube-scheduler`, () => startScheduler(tools.kubeScheduler, dir, api)),
    timed(`${label}kwok`, () => startKwok(tools.kwok, dir, api.kubeconfig)),
  ]);
  for (const p of procs) named(`${label}${p.name}`, p);
  await kube.apply(KWOK_NODE);
  return procs;
}

export async function startStack(opts: StackOptions = {}): Promise<Stack> {
  const profile = opts.profile ?? 'full';
  const tools = await ensureTools(profile);
  const ownDir = !opts.dir;
  const dir = opts.dir ?? (await mkdtemp(path.join(tmpdir(), 'klm-stack-')));
  await mkdir(dir, { recursive: true });
  // Started in tiers (storage, API server, its clients); stopped tier by tier in reverse, so
  // that nothing loses its backend while it is still shutting down.
  const tiers: ManagedProcess[][] = [];
  const servers: { label: string; process: ManagedProcess }[] = [];
  const named = (label: string, p: ManagedProcess) => (servers.push({ label, process: p }), p);
  const stop = async () => {
    for (const tier of tiers.reverse()) await Promise.all(tier.map((p) => p.stop()));
    if (ownDir && process.env.KLM_KEEP_STACK_DIR !== '1') await rm(dir, { recursive: true, force: true });
  };
  try {
    log('stack', `starting the ${profile} local stack in ${dir}`);
    const pkiDir = path.join(dir, 'pki');
    await mkdir(pkiDir);
    const [pki, etcd, temporal, registry] = await Promise.all([
      generatePki(pkiDir),
      timed('etcd', () => startEtcd(tools.etcd, dir)),
      timed('temporal', () => startTemporal(tools.temporal, dir, { ui: opts.temporalUi ?? false })),
      timed('registry', () => startRegistry(tools.registry, dir)),
    ]);
    tiers.push([named('etcd', etcd.process), named('temporal', temporal.process), named('registry', registry.process)]);
    const api = await timed('kube-apiserver', () => startApiServer(tools.kubeApiserver, dir, etcd.url, pki));
    tiers.push([named('kube-apiserver', api.process)]);
    const kube = await KubeClient.fromKubeConfig(kubeConfigFromFile(api.kubeconfig));
    await timed('CRDs', () => installCrds(kube));
    if (profile === 'full') tiers.push(await startWorkloads(tools, dir, api, pki, kube, named));
    const targetClusters: TargetClusterInfo[] = [];
    for (let i = 0; i < (profile === 'full' ? (opts.targetClusters ?? 0) : 0); i++) {
      const name = `cluster-${i + 1}`;
      const cdir = path.join(dir, name);
      await mkdir(cdir);
      // Its own API server on the shared etcd, under a key prefix of its own.
      const capi = await timed(`${name} kube-apiserver`, () =>
        startApiServer(tools.kubeApiserver, cdir, etcd.url, pki, `/${name}`),
      );
      tiers.splice(1, 0, [named(`${name} kube-apiserver`, capi.process)]);
      tiers.push(
        await startWorkloads(
          tools,
          cdir,
          capi,
          pki,
          await KubeClient.fromKubeConfig(kubeConfigFromFile(capi.kubeconfig)),
          named,
          `${name} `,
        ),
      );
      targetClusters.push({ name, kubeconfig: capi.kubeconfig, kubeApiUrl: capi.url });
    }
    const info: StackInfo = {
      profile,
      dir,
      kubeconfig: api.kubeconfig,
      kubeApiUrl: api.url,
      temporalAddress: temporal.address,
      temporalNamespace: temporal.namespace,
      temporalUiUrl: temporal.uiUrl,
      registryHost: registry.host,
      etcdUrl: etcd.url,
      pkiDir,
      tools,
      targetClusters,
    };
    await writeFile(path.join(dir, 'stack.json'), JSON.stringify(info, null, 2));
    return { info, servers, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}
