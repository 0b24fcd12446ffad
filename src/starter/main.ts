// Bridge process: `node dist/starter/main.js` (or `tsx src/starter/main.ts`). Configuration from
// the environment; the bridge itself: ./start-bridge.ts.
import { Client, Connection } from '@temporalio/client';
import { configFromEnv } from '../infra/config';
import { stopSignals } from '../infra/stop-signals';
import { TemporalConfigError } from '../infra/temporal-env';
import { countKubeRequest, serveMetrics } from '../infra/metrics';
import { NoKubeconfigError } from '../k8s/kubeconfig';
import { observeRequests } from '../k8s/transport';
import { requireSearchAttributes, SearchAttributesMissingError } from '../temporal/search-attributes';
import { startBridge, type RunningBridge } from './start-bridge';

async function main(): Promise<void> {
  const config = configFromEnv();
  observeRequests(countKubeRequest);
  const log = (m: string) => console.error(`bridge: ${m}`);
  const started: { bridge?: RunningBridge } = {};
  const probes = config.metricsPort
    ? await serveMetrics(config.metricsPort, '0.0.0.0', () => started.bridge?.ready() ?? false)
    : undefined;
  if (probes) console.log(`bridge: metrics and probes on :${probes.port} (/metrics, /healthz, /readyz)`);
  const stopped = stopSignals({
    name: 'bridge',
    timeoutMs: config.shutdownTimeoutMs,
    onStop: () => probes?.stopping(),
    log: (m) => console.error(m),
  });
  const connection = await Connection.connect(config.temporal.connectionOptions);
  await requireSearchAttributes(connection, config.temporal.namespace);
  const temporal = new Client({ connection, namespace: config.temporal.namespace });
  started.bridge = await startBridge(config, temporal, (m) => console.log(m), log);
  await started.bridge.serve(stopped);
  await connection.close();
  // Nothing is left to keep the process alive once its probes stop answering.
  await probes?.close();
}

/** Start-up problems the operator fixes by hand. */
const ONE_LINE = [SearchAttributesMissingError, TemporalConfigError, NoKubeconfigError];

main().catch((err: unknown) => {
  // A start-up problem the operator fixes by hand is told in one message, without a stack.
  console.error(
    `bridge: ` +
      `${ONE_LINE.some((c) => err instanceof c) ? (err as Error).message : err instanceof Error ? err.stack : String(err)}`,
  );
  process.exit(1);
});
