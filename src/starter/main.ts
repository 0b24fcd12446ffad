// Bridge process: `node dist/starter/main.js` (or `tsx src/starter/main.ts`). Configuration from
// the environment. With KLM_LEADER_ELECTION_LEASE, bridges that name it share the fleet's shards
// (./shard-leases.ts): each watches and signals for the Kymas of the shards it holds, and takes
// over, listing afresh, the shards of a replica that went.
import { Client, Connection } from '@temporalio/client';
import { configFromEnv } from '../infra/config';
import { stopSignals } from '../infra/stop-signals';
import { TemporalConfigError } from '../infra/temporal-env';
import { countKubeRequest, serveMetrics } from '../infra/metrics';
import { controlPlaneClient } from '../k8s/control-plane';
import { NoKubeconfigError } from '../k8s/kubeconfig';
import { observeRequests } from '../k8s/transport';
import { requireSearchAttributes, SearchAttributesMissingError } from '../temporal/search-attributes';
import { Bridge } from './bridge';
import { ShardLeases } from './shard-leases';

async function main(): Promise<void> {
  const config = configFromEnv();
  observeRequests(countKubeRequest);
  const log = (m: string) => console.error(`bridge: ${m}`);
  // Ready once its watches have listed the control plane (with shards: whether it holds any or not).
  let ready = false;
  const probes = config.metricsPort ? await serveMetrics(config.metricsPort, '0.0.0.0', () => ready) : undefined;
  if (probes) console.log(`bridge: metrics and probes on :${probes.port} (/metrics, /healthz, /readyz)`);
  const stopped = stopSignals({
    name: 'bridge',
    timeoutMs: config.shutdownTimeoutMs,
    onStop: () => probes?.stopping(),
    log: (m) => console.error(m),
  });
  const connection = await Connection.connect(config.temporal.connectionOptions);
  await requireSearchAttributes(connection, config.temporal.namespace);
  const kcp = await controlPlaneClient(config.kubeconfig);
  const temporal = new Client({ connection, namespace: config.temporal.namespace });
  const election = config.leaderElection;
  const bridge = new Bridge({
    kcp,
    temporal,
    taskQueue: config.taskQueue,
    settings: config.settings,
    probeMs: config.targetProbeIntervalMs,
    newsWindowMs: config.newsWindowMs,
    targetRequestTimeoutMs: config.targetRequestTimeoutMs,
    allowKubeconfigExec: config.allowKubeconfigExec,
    ...(config.kymaNamespaces ? { kymaNamespaces: config.kymaNamespaces } : {}),
    targetWatchScope: config.targetWatchScope,
    ...(election ? { shards: election.shards } : {}),
    log,
  });
  const leases = election
    ? new ShardLeases({ client: kcp, ...election, onGain: (s) => bridge.gain(s), onLose: (s) => bridge.lose(s), log })
    : undefined;
  // Counted by the other replicas before its watches have listed, so that none takes its share meanwhile.
  await leases?.join();
  await bridge.start();
  ready = true;
  console.log(
    `bridge: routing events to task queue ${config.taskQueue} on Temporal ${config.temporal.describe}, namespace ${config.temporal.namespace}`,
  );
  if (leases && election) {
    void stopped.then(() => leases.stop());
    console.log(
      `bridge: sharing ${election.shards} shards with the bridges of Leases ${election.namespace}/${election.name}-* as ${election.identity}`,
    );
    // Returns once stopped, having stopped serving and freed its shards.
    await leases.run();
  } else {
    console.log('bridge: no leader election (KLM_LEADER_ELECTION_LEASE unset): run only this one bridge');
    await stopped;
  }
  ready = false;
  await bridge.stop();
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
