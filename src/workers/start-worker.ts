// The worker, configured from KlmConfig: what its process (./main.ts) and `klm run` (worker and
// bridge in one process) start. The caller owns the connection and the SDK's Runtime.
import { Runtime, type NativeConnection } from '@temporalio/worker';
import { LineLog } from '../infra/log';
import { controlPlaneClient } from '../k8s/control-plane';
import type { KubeClient } from '../k8s/rest-client';
import type { KlmConfig } from '../infra/config';
import { deploymentVersion } from './build-id';
import { withLogPass } from './log-pass';
import { workflowStackTraces } from './workflow-stack-traces';
import { createKlmWorker, type KlmWorker } from './worker';

/**
 * The SDK's Runtime, once per process: one log, one line per entry (ours, the SDK's and its
 * Core's, forwarded) at KLM_LOG_LEVEL, and the SDK's own metrics (task latencies, pollers, sticky
 * cache) on a Prometheus port of their own when KLM_SDK_METRICS_ADDRESS names one. Its log
 * collector passes over its buffer once a second (./log-pass.ts).
 */
export function installRuntime(config: KlmConfig, env: NodeJS.ProcessEnv = process.env): Runtime {
  const level = config.logLevel ?? 'INFO';
  return withLogPass(() =>
    Runtime.install({
      logger: new LineLog(level),
      telemetryOptions: {
        logging: { filter: { core: level }, forward: {} },
        ...(env.KLM_SDK_METRICS_ADDRESS
          ? { metrics: { prometheus: { bindAddress: env.KLM_SDK_METRICS_ADDRESS } } }
          : {}),
      },
    }),
  );
}

/** Creates the worker of `config` on `connection` (not yet polling: `run()` it); `kcp`, a control-plane client to share. */
export async function startWorker(
  config: KlmConfig,
  connection: NativeConnection,
  kcp?: KubeClient,
): Promise<KlmWorker> {
  workflowStackTraces(config.workflowStackTraces);
  return await createKlmWorker({
    connection,
    namespace: config.temporal.namespace,
    taskQueue: config.taskQueue,
    kcp: kcp ?? (await controlPlaneClient(config.kubeconfig)),
    blobCacheDir: config.blobCacheDir,
    registry: config.registry,
    targetRequestTimeoutMs: config.targetRequestTimeoutMs,
    allowKubeconfigExec: config.allowKubeconfigExec,
    workflowCacheSize: config.workflowCacheSize,
    taskPollers: config.taskPollers,
    settings: config.settings,
    deployment: { version: deploymentVersion(config), promotion: config.deployment.promotion },
    ...(config.workflowBundle ? { workflowBundle: { codePath: config.workflowBundle } } : {}),
    ...(config.ociRegistry ? { ociRegistry: config.ociRegistry } : {}),
    ...(config.maintenancePolicy ? { maintenancePolicy: config.maintenancePolicy } : {}),
    ...(config.kymaNamespaces ? { kymaNamespaces: config.kymaNamespaces } : {}),
  });
}

/** The worker's start line: what it polls, where, as which version. */
export function workerStartLine(config: KlmConfig, worker: KlmWorker): string {
  return (
    `worker: task queue ${config.taskQueue} on Temporal ${config.temporal.describe}, namespace ${config.temporal.namespace}; ` +
    `version ${worker.version.deploymentName}/${worker.version.buildId}; workflows: ${worker.workflows}`
  );
}
