// Worker process: `tsx src/workers/main.ts`. Configuration from the environment (config.ts).
import { NativeConnection, type Runtime } from '@temporalio/worker';
import { NoKubeconfigError } from '../k8s/kubeconfig';
import { observeRequests } from '../k8s/transport';
import { configFromEnv } from '../infra/config';
import { stopSignals } from '../infra/stop-signals';
import { TemporalConfigError } from '../infra/temporal-env';
import { countKubeRequest, serveMetrics } from '../infra/metrics';
import { requireSearchAttributes, SearchAttributesMissingError } from '../temporal/search-attributes';
import { BuildIdUnknownError } from './build-id';
import { installRuntime, startWorker, workerStartLine } from './start-worker';
import type { KlmWorker } from './worker';

let runtime: Runtime | undefined;

async function main(): Promise<void> {
  const config = configFromEnv();
  observeRequests(countKubeRequest);
  runtime = installRuntime(config);
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
  const worker = (started.worker = await startWorker(config, connection));
  log.info(workerStartLine(config, worker));
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
