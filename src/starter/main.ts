// Bridge process: `tsx src/starter/main.ts`. Configuration from the environment.
import { Client, Connection } from '@temporalio/client';
import { configFromEnv } from '../infra/config';
import { TemporalConfigError } from '../infra/temporal-env';
import { serveMetrics } from '../infra/metrics';
import { controlPlaneClient } from '../k8s/control-plane';
import { requireSearchAttributes, SearchAttributesMissingError } from '../temporal/search-attributes';
import { Bridge } from './bridge';

async function main(): Promise<void> {
  const config = configFromEnv();
  // Ready once its watches have listed the control plane, until it stops.
  let ready = false;
  if (config.metricsPort) console.log(`bridge: metrics and probes on :${(await serveMetrics(config.metricsPort, '0.0.0.0', () => ready)).port} (/metrics, /healthz, /readyz)`);
  const connection = await Connection.connect(config.temporal.connectionOptions);
  await requireSearchAttributes(connection, config.temporal.namespace);
  const bridge = new Bridge({
    kcp: await controlPlaneClient(config.kubeconfig),
    temporal: new Client({ connection, namespace: config.temporal.namespace }),
    taskQueue: config.taskQueue,
    settings: config.settings,
    probeMs: config.targetProbeIntervalMs,
    targetRequestTimeoutMs: config.targetRequestTimeoutMs,
    allowKubeconfigExec: config.allowKubeconfigExec,
    log: (m) => console.error(`bridge: ${m}`),
  });
  await bridge.start();
  ready = true;
  console.log(`bridge: routing events to task queue ${config.taskQueue} on Temporal ${config.temporal.describe}, namespace ${config.temporal.namespace}`);
  await new Promise<void>((resolve) => {
    for (const s of ['SIGINT', 'SIGTERM'] as const) process.once(s, () => resolve());
  });
  ready = false;
  await bridge.stop();
  await connection.close();
}

main().catch((err: unknown) => {
  // A start-up problem the operator fixes by hand is told in one message, without a stack.
  console.error(`bridge: ${err instanceof SearchAttributesMissingError || err instanceof TemporalConfigError ? err.message : err instanceof Error ? err.stack : String(err)}`);
  process.exit(1);
});
