// Worker process: `tsx src/workers/main.ts`. Configuration from the environment (config.ts).
import { NativeConnection, Runtime } from '@temporalio/worker';
import { controlPlaneClient } from '../k8s/control-plane';
import { NoKubeconfigError } from '../k8s/kubeconfig';
import { observeRequests } from '../k8s/transport';
import { configFromEnv } from '../infra/config';
import { LineLog } from '../infra/log';
import { stopSignals } from '../infra/stop-signals';
import { TemporalConfigError } from '../infra/temporal-env';
import { countKubeRequest, serveMetrics } from '../infra/metrics';
import { requireSearchAttributes, SearchAttributesMissingError } from '../temporal/search-attributes';
import { BuildIdUnknownError, deploymentVersion } from './build-id';
import { createKlmWorker, type KlmWorker } from './worker';

let runtime: Runtime | undefined;

async function main(): Promise<void> {
  const config = configFromEnv();
  observeRequests(countKubeRequest);
  // One log, one line per entry: ours, the SDK's and its Core's (forwarded), at KLM_LOG_LEVEL.
  const level = config.logLevel ?? 'INFO';
  runtime = Runtime.install({
    logger: new LineLog(level),
    telemetryOptions: {
      logging: { filter: { core: level }, forward: {} },
      // The SDK's own metrics (task latencies, pollers, sticky cache) on a Prometheus port of their own.
      ...(process.env.KLM_SDK_METRICS_ADDRESS
        ? { metrics: { prometheus: { bindAddress: process.env.KLM_SDK_METRICS_ADDRESS } } }
        : {}),
    },
  });
  const log = runtime.logger;
  // The probes answer before the worker exists: not ready until it polls.
  const started: { worker?: KlmWorker } = {};
  const probes = config.metricsPort
    ? await serveMetrics(config.metricsPort, '0.0.0.0', () => started.worker?.ready() ?? false)
    : undefined;
  if (probes) log.info(`worker: metrics and probes on :${probes.port} (/metrics, /healthz, /readyz)`);
  // The SDK's runtime stops the worker gracefully on SIGINT and SIGTERM; the probes fail meanwhile.
  void stopSignals({
    name: 'worker',
    timeoutMs: config.shutdownTimeoutMs,
    onStop: () => probes?.stopping(),
    log: (m) => {
      log.warn(m);
    },
  });
  const connection = await NativeConnection.connect(config.temporal.connectionOptions);
  await requireSearchAttributes(connection, config.temporal.namespace);
  const worker = (started.worker = await createKlmWorker({
    connection,
    namespace: config.temporal.namespace,
    taskQueue: config.taskQueue,
    kcp: await controlPlaneClient(config.kubeconfig),
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
  }));
  log.info(
    `worker: task queue ${config.taskQueue} on Temporal ${config.temporal.describe}, namespace ${config.temporal.namespace}; ` +
      `version ${worker.version.deploymentName}/${worker.version.buildId}; workflows: ${worker.workflows}`,
  );
  await worker.run();
  await connection.close();
  // Nothing is left to keep the process alive once its probes stop answering.
  await probes?.close();
}

/** Start-up problems the operator fixes by hand. */
const ONE_LINE = [SearchAttributesMissingError, TemporalConfigError, NoKubeconfigError, BuildIdUnknownError];

main().catch((err: unknown) => {
  runtime?.flushLogs();
  // A start-up problem the operator fixes by hand is told in one message, without a stack.
  console.error(
    `worker: ` +
      `${ONE_LINE.some((c) => err instanceof c) ? (err as Error).message : err instanceof Error ? err.stack : String(err)}`,
  );
  process.exit(1);
});
