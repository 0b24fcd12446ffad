// `klm run`: worker and bridge in one process, for a fleet that fits one machine (the image's
// default). They share what two processes would each pay for: one Node.js, one connection to
// Temporal (the bridge's client speaks through the worker's native connection), one set of
// probes and metrics. For scale-out the two stay apart (dist/workers/main.js and
// dist/starter/main.js, the Deployments of deploy/kustomize): same configuration, same code.
import { Client } from '@temporalio/client';
import { NativeConnection, type Runtime } from '@temporalio/worker';
import type { KlmConfig } from '../infra/config';
import { countKubeRequest, serveMetrics } from '../infra/metrics';
import { stopSignals } from '../infra/stop-signals';
import { controlPlaneClient } from '../k8s/control-plane';
import { observeRequests } from '../k8s/transport';
import { startBridge, type RunningBridge } from '../starter/start-bridge';
import { requireSearchAttributes } from '../temporal/search-attributes';
import { installRuntime, startWorker, workerStartLine } from '../workers/start-worker';
import type { KlmWorker } from '../workers/worker';

/** Runs worker and bridge until SIGINT or SIGTERM; both stopped, it returns. */
export async function runInOneProcess(config: KlmConfig): Promise<void> {
  observeRequests(countKubeRequest);
  const runtime: Runtime = installRuntime(config);
  const log = runtime.logger;
  const started: { worker?: KlmWorker; bridge?: RunningBridge } = {};
  // Ready once the worker polls and the bridge's watches have listed.
  const probes = config.metricsPort
    ? await serveMetrics(
        config.metricsPort,
        '0.0.0.0',
        () => (started.worker?.ready() ?? false) && (started.bridge?.ready() ?? false),
      )
    : undefined;
  if (probes) log.info(`klm run: metrics and probes on :${probes.port} (/metrics, /healthz, /readyz)`);
  // The SDK's runtime stops the worker on SIGINT and SIGTERM itself; the bridge stops with it.
  const stopped = stopSignals({
    name: 'klm run',
    timeoutMs: config.shutdownTimeoutMs,
    onStop: () => probes?.stopping(),
    log: (m) => {
      log.warn(m);
    },
  });
  const connection = await NativeConnection.connect(config.temporal.connectionOptions);
  try {
    await requireSearchAttributes(connection, config.temporal.namespace);
    // One control-plane client for both: one kubeconfig read, one pool of connections.
    const kcp = await controlPlaneClient(config.kubeconfig);
    const worker = (started.worker = await startWorker(config, connection, kcp));
    log.info(workerStartLine(config, worker));
    const temporal = new Client({ connection, namespace: config.temporal.namespace });
    const bridge = (started.bridge = await startBridge(
      config,
      temporal,
      (m) => {
        log.info(m);
      },
      (m) => {
        log.warn(`bridge: ${m}`);
      },
      kcp,
    ));
    // A worker that ends (stopped, or failed) ends the bridge too.
    const working = worker.run();
    const workerEnded = working.then(
      () => undefined,
      () => undefined,
    );
    await Promise.all([working, bridge.serve(Promise.race([stopped, workerEnded]))]);
  } finally {
    await connection.close();
    // Nothing is left to keep the process alive once its probes stop answering.
    await probes?.close();
  }
}
