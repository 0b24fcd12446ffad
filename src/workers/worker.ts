// The worker: the workflows and activities on one task queue.
import { fileURLToPath } from 'node:url';
import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import {
  bundleWorkflowCode,
  DefaultLogger,
  NativeConnection,
  Runtime,
  Worker,
  type WorkerOptions,
} from '@temporalio/worker';
import { controlPlaneCache, createActivities } from '../activities';
import { TargetClusters } from '../k8s/target-cluster';
import type { KubeClient } from '../k8s/rest-client';
import { activityMetrics } from '../infra/metrics';
import type { ReconcileSettings } from '../contract/settings';
import { activityFailureLog } from './activity-failures';
import { reconcileDuration } from './reconcile-duration';
import { DEFAULT_WORKFLOW_CACHE_SIZE, type RegistryConfig } from '../infra/config';
import { registriesFromConfig, type RegistryCredentialSecret } from '../activities/registry-secret';
import { checkMaintenancePolicy } from '../activities/maintenance';
import {
  describeDeployment,
  promoteOnFirstPoll,
  type DeploymentVersion,
  type Promotion,
} from '../temporal/worker-deployment';

export const WORKFLOWS_PATH = fileURLToPath(new URL('../workflows/index.ts', import.meta.url));
/** The bundle `npm run build` writes next to the compiled processes (dist/workflow-bundle.js). */
export const PREBUILT_BUNDLE = fileURLToPath(new URL('../workflow-bundle.js', import.meta.url));

/** Bundles the workflows into `file`, for KLM_WORKFLOW_BUNDLE. */
export async function writeWorkflowBundle(file: string): Promise<void> {
  const { code } = await bundleWorkflowCode({ workflowsPath: WORKFLOWS_PATH, logger: new DefaultLogger('WARN') });
  await writeFile(file, code);
}

export interface KlmWorkerOptions {
  connection: NativeConnection;
  namespace: string;
  taskQueue: string;
  kcp: KubeClient;
  blobCacheDir: string;
  /** Deadline of one request to a target cluster (20 s by default). */
  targetRequestTimeoutMs?: number;
  /** Whether kubeconfig Secrets may run commands for their credentials (default: yes). */
  allowKubeconfigExec?: boolean;
  /** How registries are reached: extra CA, insecure hosts, the credential Secret (required: `configFromEnv().registry`). */
  registry: RegistryConfig;
  /** Where templates with `descriptor: {}` find their OCM component (KLM_OCI_REGISTRY_HOST, KLM_MODULES_REPOSITORY_SUBPATH). */
  ociRegistry?: { host: string; subPath?: string };
  /** The ConfigMap of the maintenance-window policy (KLM_MAINTENANCE_POLICY). */
  maintenancePolicy?: { namespace: string; name: string };
  /** The namespaces whose Kymas it serves (KLM_KYMA_NAMESPACES): their kubeconfig Secrets are watched there only. */
  kymaNamespaces?: string[];
  /**
   * Task polls kept open per kind (KLM_TASK_POLLERS): scaled with the server's backlog by
   * default. A fixed ten (the SDK's default) drains a burst of a thousand signalled workflows
   * at about what ten polls per round trip allow: tasks waited 81 s on average before a worker
   * took them, with half its slots free.
   */
  taskPollers?: 'autoscaling' | number;
  /** How many workflows stay in memory between their tasks (KLM_WORKFLOW_CACHE_SIZE). */
  workflowCacheSize?: number;
  /**
   * A workflow bundle built ahead of time (tests build it once; `klm bundle` writes one for
   * KLM_WORKFLOW_BUNDLE); else the workflows are bundled here, which costs the worker a few
   * hundred MB of memory that it keeps.
   */
  workflowBundle?: WorkerOptions['workflowBundle'];
  /** The reconcile settings each run of a Kyma's workflow reads at its start (and the log's retry schedule). */
  settings: ReconcileSettings;
  /** The Worker Deployment version it runs as, and whether it makes that version current (`auto`). */
  deployment: { version: DeploymentVersion; promotion: 'auto' | 'manual' };
}

type PollerBehavior = NonNullable<WorkerOptions['workflowTaskPollerBehavior']>;

function pollers(setting: 'autoscaling' | number = 'autoscaling'): PollerBehavior {
  return setting === 'autoscaling' ? { type: 'autoscaling' } : { type: 'simple-maximum', maximum: setting };
}

/** The Temporal worker and what lives as long as it runs (the kubeconfig Secret watch). */
export interface KlmWorker {
  /** Runs until shutdown; then stops the Secret watch. */
  run(): Promise<void>;
  shutdown(): void;
  /** It polls its task queue (the SDK's worker state is RUNNING): for /readyz. */
  ready(): boolean;
  /** Where its workflow code comes from: a bundle built ahead of time (its path), or bundled at start. */
  readonly workflows: string;
  /** Where registry credentials come from (the watched Secret), when one is configured. */
  readonly registryCredentials?: RegistryCredentialSecret;
  /** The Worker Deployment version it polls as. */
  readonly version: DeploymentVersion;
  /** With promotion `auto`: what became of its version once it polled (settled while `run` runs). */
  readonly promotion: Promise<Promotion | undefined>;
}

export async function createKlmWorker(o: KlmWorkerOptions): Promise<KlmWorker> {
  const targets = new TargetClusters(o.kcp, {
    ...(o.targetRequestTimeoutMs ? { requestTimeoutMs: o.targetRequestTimeoutMs } : {}),
    ...(o.allowKubeconfigExec === false ? { allowExec: false } : {}),
  });
  const reg = await registriesFromConfig(o.kcp, o.registry);
  const stopKubeconfigs = await targets.watchSecrets(o.kymaNamespaces);
  // Activities read Kymas, templates, release metas and Manifests from here, not from the API server.
  const cache = controlPlaneCache(o.kcp, (err) => {
    Runtime.instance().logger.warn(`worker: control-plane watch: ${(err as Error).message}`);
  });
  const stopSecrets = () => {
    stopKubeconfigs();
    reg.stop();
    cache.stop();
  };
  await cache.start();
  if (o.maintenancePolicy) {
    // As upstream reads its policy file at start: the gauge tells at once whether it can be used.
    const problem = await checkMaintenancePolicy(o.kcp, o.maintenancePolicy);
    if (problem) Runtime.instance().logger.warn(`worker: maintenance-window policy: ${problem}`);
  }
  const { workflowCode, workflows } = workflowSource(o.workflowBundle);
  // What every activity passes through, and each module install of a batch too (installModules).
  const observers = [activityMetrics, reconcileDuration, activityFailureLog(o.settings)];
  const worker = await Worker.create({
    connection: o.connection,
    namespace: o.namespace,
    taskQueue: o.taskQueue,
    ...workflowCode,
    activities: createActivities({
      kcp: o.kcp,
      cache,
      cacheDir: o.blobCacheDir,
      targets,
      registries: reg.registries,
      settings: o.settings,
      observers,
      currentVersion: async () =>
        (await describeDeployment(o.connection, o.namespace, o.deployment.version.deploymentName))?.current,
      ...(o.ociRegistry ? { ociRegistry: o.ociRegistry } : {}),
      ...(o.maintenancePolicy ? { maintenancePolicy: o.maintenancePolicy } : {}),
    }),
    interceptors: {
      activity: observers,
    },
    // Each run stays on the version that started it (Kyma workflows move to the current version
    // when they continue as new; rollouts follow the current version at once): docs/contributor/workflow-versioning.md.
    workerDeploymentOptions: {
      useWorkerVersioning: true,
      version: o.deployment.version,
      defaultVersioningBehavior: 'PINNED',
    },
    // Activities, local activities and the workflows' own code share the worker's CPU. After a
    // restart every Kyma's next task replays its history at once: four hundred of them started
    // together each took longer than the workflow task timeout (10 s), were timed out, retried,
    // and timed out again, the server backing off further each time (measured: a promotion of 100
    // Kymas stalled for minutes). A few dozen at a time each finish in well under a second; the
    // others wait in the task queue, where no timeout runs.
    maxConcurrentActivityTaskExecutions: 100,
    maxConcurrentWorkflowTaskExecutions: 40,
    maxConcurrentLocalActivityExecutions: 100,
    maxCachedWorkflows: o.workflowCacheSize ?? DEFAULT_WORKFLOW_CACHE_SIZE,
    workflowTaskPollerBehavior: pollers(o.taskPollers),
    activityTaskPollerBehavior: pollers(o.taskPollers),
  }).catch((err: unknown) => {
    stopSecrets();
    throw err;
  });
  let settle: (p: Promotion | undefined) => void = () => undefined;
  const promotion = new Promise<Promotion | undefined>((r) => (settle = r));
  const promote = async () => settle(await promoteVersion(o, () => worker.getState() !== 'RUNNING'));
  return {
    async run() {
      try {
        await Promise.all([worker.run(), promote()]);
      } finally {
        settle(undefined);
        stopSecrets();
      }
    },
    shutdown: () => worker.shutdown(),
    ready: () => worker.getState() === 'RUNNING',
    workflows,
    version: o.deployment.version,
    promotion,
    ...(reg.credentials ? { registryCredentials: reg.credentials } : {}),
  };
}

/** Where the workflow code comes from: a bundle given or built ahead of time, else bundled at start. */
function workflowSource(bundle: KlmWorkerOptions['workflowBundle']) {
  const workflowCode = bundle
    ? { workflowBundle: bundle }
    : existsSync(PREBUILT_BUNDLE)
      ? { workflowBundle: { codePath: PREBUILT_BUNDLE } }
      : { workflowsPath: WORKFLOWS_PATH };
  const workflows =
    'workflowsPath' in workflowCode
      ? 'bundled at start'
      : 'codePath' in workflowCode.workflowBundle
        ? `bundle ${workflowCode.workflowBundle.codePath}`
        : 'a bundle built ahead of time';
  return { workflowCode, workflows };
}

/** With promotion `auto`, makes the worker's version current once it polls (docs/operator/upgrading.md), and says what became of it. */
async function promoteVersion(o: KlmWorkerOptions, stopped: () => boolean): Promise<Promotion | undefined> {
  if (o.deployment.promotion !== 'auto') return undefined;
  const { deploymentName, buildId } = o.deployment.version;
  const said = await promoteOnFirstPoll(o.connection, o.namespace, o.deployment.version, {
    identity: `klm-worker ${buildId}`,
    stopped,
  }).catch((err: unknown) => ({ kind: 'left' as const, why: `the server refused: ${(err as Error).message}` }));
  const log = Runtime.instance().logger;
  if (said.kind === 'promoted') log.info(`worker: version ${deploymentName}/${buildId} is current now`);
  if (said.kind === 'left') log.info(`worker: version ${deploymentName}/${buildId} not made current: ${said.why}`);
  if (said.kind === 'unseen')
    log.warn(`worker: the server did not list version ${deploymentName}/${buildId} after ${said.afterMs} ms`);
  return said;
}
