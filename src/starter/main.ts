// Bridge process: `node dist/starter/main.js` (or `tsx src/starter/main.ts`). Configuration from
// the environment. With KLM_LEADER_ELECTION_LEASE, bridges that share the Lease elect one that
// watches and signals; the others stand by and take over, relisting everything, when it goes.
import { Client, Connection } from '@temporalio/client';
import { configFromEnv } from '../infra/config';
import { TemporalConfigError } from '../infra/temporal-env';
import { bridgeLeader, countKubeRequest, serveMetrics } from '../infra/metrics';
import { controlPlaneClient } from '../k8s/control-plane';
import { observeRequests } from '../k8s/rest-client';
import { LeaderElector } from '../k8s/leader-election';
import { requireSearchAttributes, SearchAttributesMissingError } from '../temporal/search-attributes';
import { Bridge } from './bridge';

async function main(): Promise<void> {
  const config = configFromEnv();
  observeRequests(countKubeRequest);
  const log = (m: string) => console.error(`bridge: ${m}`);
  // Ready while standing by, and while leading once its watches have listed the control plane.
  let ready = false;
  if (config.metricsPort) console.log(`bridge: metrics and probes on :${(await serveMetrics(config.metricsPort, '0.0.0.0', () => ready)).port} (/metrics, /healthz, /readyz)`);
  const connection = await Connection.connect(config.temporal.connectionOptions);
  await requireSearchAttributes(connection, config.temporal.namespace);
  const kcp = await controlPlaneClient(config.kubeconfig);
  const temporal = new Client({ connection, namespace: config.temporal.namespace });
  const election = config.leaderElection;

  /** Watches and signals until `until` aborts. */
  const lead = async (until: AbortSignal): Promise<void> => {
    ready = false;
    bridgeLeader.set(1);
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
      log,
    });
    try {
      await bridge.start();
      ready = true;
      console.log(`bridge: routing events to task queue ${config.taskQueue} on Temporal ${config.temporal.describe}, namespace ${config.temporal.namespace}`);
      if (!until.aborted) await new Promise((resolve) => until.addEventListener('abort', resolve, { once: true }));
    } finally {
      await bridge.stop();
      bridgeLeader.set(0);
      ready = election !== undefined;
    }
  };

  const stopping = new AbortController();
  for (const s of ['SIGINT', 'SIGTERM'] as const) process.once(s, () => stopping.abort());
  if (election) {
    const elector = new LeaderElector({ client: kcp, ...election, log });
    stopping.signal.addEventListener('abort', () => elector.stop(), { once: true });
    ready = true;
    console.log(`bridge: standing by for Lease ${election.namespace}/${election.name} as ${election.identity}`);
    await elector.run(lead);
  } else {
    console.log('bridge: no leader election (KLM_LEADER_ELECTION_LEASE unset): run only this one bridge');
    await lead(stopping.signal);
  }
  ready = false;
  await connection.close();
}

main().catch((err: unknown) => {
  // A start-up problem the operator fixes by hand is told in one message, without a stack.
  console.error(`bridge: ${err instanceof SearchAttributesMissingError || err instanceof TemporalConfigError ? err.message : err instanceof Error ? err.stack : String(err)}`);
  process.exit(1);
});
