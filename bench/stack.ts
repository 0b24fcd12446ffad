// Where the benchmark runs: a local stack of its own (the default), or a given one named by
// flags. A given stack must not run a bridge of its own (it would start the bench Kymas'
// workflows on its task queue); the bench installs the CRDs there and leaves everything it
// created in place, in a namespace of its own.
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startStack } from '../src/localstack/stack';
import type { Tracked } from './processes';

export interface BenchStack {
  kubeconfig: string;
  temporalAddress: string;
  temporalNamespace: string;
  registryHost: string;
  /** Kubeconfig files of the clusters the Kymas target through Secrets (none: the control plane). */
  targets: string[];
  /** Working directory (the worker's blob cache goes here). */
  dir: string;
  given: boolean;
  /** The local stack's servers (pids to measure); none for a given stack. */
  servers: Tracked[];
  /** The local stack's PKI (for --distinct-credentials) and the target clusters' URLs. */
  pkiDir?: string;
  targetUrls: string[];
  stop(): Promise<void>;
}

export interface GivenStack {
  kubeconfig?: string;
  'temporal-address'?: string;
  'temporal-namespace'?: string;
  registry?: string;
  'target-kubeconfigs'?: string;
}

export async function benchStack(given: GivenStack, clusters: number): Promise<BenchStack> {
  if (!given.kubeconfig && !given['temporal-address'] && !given.registry) {
    const stack = await startStack({ profile: 'full', targetClusters: clusters });
    const { info } = stack;
    return {
      ...info,
      targets: info.targetClusters.map((c) => c.kubeconfig),
      targetUrls: info.targetClusters.map((c) => c.kubeApiUrl),
      given: false,
      servers: stack.servers.map((s) => ({ label: s.label, pid: () => s.process.pid() })),
      stop: () => stack.stop(),
    };
  }
  if (!given.kubeconfig || !given['temporal-address'] || !given.registry) {
    throw new Error('a given stack needs --kubeconfig, --temporal-address and --registry (HOST:PORT) together');
  }
  return {
    kubeconfig: given.kubeconfig,
    temporalAddress: given['temporal-address'],
    temporalNamespace: given['temporal-namespace'] ?? 'default',
    registryHost: given.registry,
    targets: given['target-kubeconfigs']?.split(',').filter(Boolean) ?? [],
    dir: await mkdtemp(path.join(tmpdir(), 'klm-bench-')),
    given: true,
    servers: [],
    targetUrls: [],
    stop: () => Promise.resolve(),
  };
}
