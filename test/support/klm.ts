// Runs the product against the shared stack, in this process: worker, bridge and the sample
// module manager, with the sample modules published into a namespace of the test's own.
import { mkdtemp, readFile } from 'node:fs/promises';
import { afterAll, beforeAll, expect } from 'vitest';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { bundleWorkflowCode, NativeConnection, Runtime, DefaultLogger } from '@temporalio/worker';
import { kubeconfigSecret } from '../../bench/fleet';
import { SampleManager } from '../../src/samples/manager';
import { publishSamples, SAMPLE_KINDS } from '../../src/samples/modules';
import type { Kyma } from '../../src/api/kyma';
import { kymaWorkflowId } from '../../src/api/names';
import { API_VERSION, ROLLOUT_POLICY_CONFIGMAP } from '../../src/api/shared';
import { kubeConfigFromFile } from '../../src/k8s/kubeconfig';
import type { KubeObject } from '../../src/api/shared';
import { KubeClient } from '../../src/k8s/rest-client';
import { Bridge } from '../../src/starter/bridge';
import { buildId } from '../../src/workers/build-id';
import { createKlmWorker, WORKFLOWS_PATH, type KlmWorker } from '../../src/workers/worker';
import { DEFAULT_SETTINGS, type ReconcileSettings } from '../../src/contract/settings';
import { LineLog } from '../../src/infra/log';
import type { RegistryConfig } from '../../src/infra/config';
import type { OciRegistryClient } from '../../src/oci/registry-client';
import { stackInfo, uniqueName } from './stack';

let bundle: Promise<{ code: string }> | undefined;
let runtimeQuiet = false;

export interface Klm {
  namespace: string;
  taskQueue: string;
  /** The settings worker and bridge run with. */
  settings: ReconcileSettings;
  kube: KubeClient;
  client: Client;
  /** Absent when the test runs the bridge as a process of its own. */
  bridge?: Bridge;
  /** Absent when the test runs the worker as a process of its own. */
  worker?: KlmWorker;
  manager: SampleManager;
  stop(): Promise<void>;
}

/** Starts worker, bridge and sample manager for one test file. */
export interface KlmOptions {
  settings?: Partial<ReconcileSettings>;
  worker?: boolean;
  /** false: the test runs its own bridge processes. */
  bridge?: boolean;
  /** How the worker reaches registries (CA, insecure hosts, credential Secret). */
  registry?: RegistryConfig;
  /** Where the sample modules go: the shared stack's plain registry unless given (a client with push access). */
  samples?: { registryHost: string; client: OciRegistryClient };
  /** Where templates with `descriptor: {}` find their components: where the samples are, by default. */
  ociRegistry?: { host: string; subPath?: string };
  /** The ConfigMap of the maintenance-window policy (none by default). */
  maintenancePolicy?: { namespace: string; name: string };
  /** Where the bridge's log lines go (none by default). */
  bridgeLog?: (line: string) => void;
  /** How often the bridge looks for workflows the server ended (5 s by default in tests). */
  endedWorkflowsPollMs?: number;
  /** The control-plane client the worker uses (one that counts requests, say); the test's own by default. */
  workerKcp?: KubeClient;
  /**
   * The namespace's rollout policies (ConfigMap klm-rollout-policy): all Kymas at once by
   * default, so that tests that promote a version to several Kymas need not wait for waves.
   */
  rolloutPolicy?: Record<string, string>;
}

export async function startKlm(opts: KlmOptions = {}): Promise<Klm> {
  const info = stackInfo();
  if (!runtimeQuiet) {
    Runtime.install({ logger: new LineLog('WARN') });
    runtimeQuiet = true;
  }
  if (opts.worker !== false)
    bundle ??= bundleWorkflowCode({ workflowsPath: WORKFLOWS_PATH, logger: new DefaultLogger('WARN') });
  const kube = await KubeClient.fromKubeConfig(kubeConfigFromFile(info.kubeconfig));
  const namespace = uniqueName('t');
  await kube.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } });
  await kube.create({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: ROLLOUT_POLICY_CONFIGMAP, namespace },
    data: opts.rolloutPolicy ?? { default: 'waves: []\nsoak: 0s\nmaxConcurrent: 1000000\nfailureBudget: "100%"' },
  });
  await publishSamples(
    kube,
    opts.samples?.registryHost ?? info.registryHost,
    namespace,
    opts.samples ? { client: opts.samples.client } : {},
  );
  const taskQueue = uniqueName('klm');
  // Worker and bridge serve the test's namespace only (KLM_KYMA_NAMESPACES), as an installation
  // serves its own: the Kymas earlier test files left in the shared stack are no work of this one's.
  const served = { kymaNamespaces: [namespace] };
  // Every Kyma of the tests targets the one local cluster: give each its own namespace.
  const settings: ReconcileSettings = {
    ...DEFAULT_SETTINGS,
    defaultNamespace: '{kyma}-system',
    driftIntervalMs: 5 * 60_000,
    crdEstablishedTimeoutMs: 20_000,
    ...opts.settings,
  };
  const connection = await Connection.connect({ address: info.temporalAddress });
  const client = new Client({ connection, namespace: info.temporalNamespace });
  const native = await NativeConnection.connect({ address: info.temporalAddress });
  const worker =
    opts.worker === false
      ? undefined
      : await createKlmWorker({
          connection: native,
          namespace: info.temporalNamespace,
          taskQueue,
          kcp: opts.workerKcp ?? kube,
          blobCacheDir: await mkdtemp(path.join(tmpdir(), 'klm-blobs-')),
          workflowBundle: await bundle!,
          registry: opts.registry ?? { insecureHosts: [] },
          settings,
          // As a worker process of these settings would (processEnv): one deployment per task queue.
          deployment: { version: { deploymentName: taskQueue, buildId: buildId({ settings }) }, promotion: 'auto' },
          // The registry that holds the sample components (the shared stack's plain one unless given).
          ociRegistry: opts.ociRegistry ?? { host: opts.samples?.registryHost ?? info.registryHost },
          ...(opts.maintenancePolicy ? { maintenancePolicy: opts.maintenancePolicy } : {}),
          ...served,
        });
  const running = worker?.run();
  // Workflows start once the worker's version is current.
  if (worker) expect(await worker.promotion, 'the worker version made current').toEqual({ kind: 'promoted' });
  const bridge =
    opts.bridge === false
      ? undefined
      : new Bridge({
          kcp: kube,
          temporal: client,
          taskQueue,
          settings,
          relistMs: 60_000,
          endedWorkflowsPollMs: opts.endedWorkflowsPollMs ?? 5_000,
          ...served,
          ...(opts.bridgeLog ? { log: opts.bridgeLog } : {}),
        });
  await bridge?.start();
  const manager = new SampleManager({ client: kube, kinds: SAMPLE_KINDS });
  manager.start();
  return {
    namespace,
    taskQueue,
    settings,
    kube,
    client,
    bridge,
    worker,
    manager,
    async stop() {
      manager.stop();
      await bridge?.stop();
      worker?.shutdown();
      await running;
      await native.close();
      await connection.close();
    },
  };
}

/** Runs the product for the enclosing describe block; call the returned function in tests. */
export function useKlm(opts: KlmOptions | (() => KlmOptions) = {}): () => Klm {
  let klm: Klm | undefined;
  beforeAll(async () => {
    klm = await startKlm(typeof opts === 'function' ? opts() : opts);
  });
  afterAll(async () => {
    // No workflow of the file may have crashed: failures are statuses, never failed workflows.
    const failed: string[] = [];
    if (klm)
      for await (const wf of klm.client.workflow.list({
        query: `TaskQueue = '${klm.taskQueue}' AND ExecutionStatus = 'Failed'`,
      }))
        failed.push(wf.workflowId);
    await klm?.stop();
    expect(failed, 'workflows that failed').toEqual([]);
  });
  return () => klm!;
}

export function kymaObject(namespace: string, name: string, spec: Kyma['spec']): KubeObject {
  return { apiVersion: API_VERSION, kind: 'Kyma', metadata: { name, namespace }, spec };
}

export async function getKyma(klm: Klm, name: string): Promise<Kyma | undefined> {
  return await klm.kube.get<Kyma & KubeObject>(API_VERSION, 'Kyma', name, klm.namespace);
}

/** Polls until `check` returns a value (the Kyma's status converging, say); fails with the last state seen. */
export async function eventually<T>(
  what: string,
  check: () => Promise<T | undefined | false>,
  timeoutMs = 60_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await check();
      if (v) return v;
      last = v;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline)
      throw new Error(
        `timed out after ${timeoutMs / 1000}s waiting for ${what}; last: ${last instanceof Error ? last.message : JSON.stringify(last)}`,
      );
    await new Promise((r) => setTimeout(r, 100));
  }
}

export async function kymaInState(klm: Klm, name: string, state: string, timeoutMs?: number): Promise<Kyma> {
  let seen: Kyma | undefined;
  try {
    return await eventually(
      `Kyma ${name} to be ${state}`,
      async () => {
        seen = await getKyma(klm, name);
        return seen?.status?.state === state ? seen : undefined;
      },
      timeoutMs,
    );
  } catch (err) {
    throw new Error(`${(err as Error).message}\nlast status: ${JSON.stringify(seen?.status, null, 1)}`, {
      cause: err,
    });
  }
}

export { kymaWorkflowId };

/** A Kyma whose kubeconfig Secret holds no kubeconfig: its installs fail with InvalidKubeconfig. */
export async function createKymaWithBrokenSecret(
  klm: Klm,
  name: string,
  modules: Kyma['spec']['modules'],
): Promise<void> {
  await klm.kube.create({ ...kubeconfigSecret(klm.namespace, name, ''), data: { other: 'eA==' } });
  await klm.kube.create(kymaObject(klm.namespace, name, { channel: 'regular', modules }));
}

/** Puts the local cluster's kubeconfig into that Kyma's Secret. */
export async function fixKubeconfigSecret(klm: Klm, name: string): Promise<void> {
  await klm.kube.apply(kubeconfigSecret(klm.namespace, name, await readFile(stackInfo().kubeconfig, 'utf8')));
}
