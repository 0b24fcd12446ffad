// The bridge, configured from KlmConfig: what its process (./main.ts) and `klm run` (worker and
// bridge in one process) start. With KLM_LEADER_ELECTION_LEASE, bridges that name it share the
// fleet's shards (./shard-leases.ts).
import type { Client } from '@temporalio/client';
import type { KlmConfig } from '../infra/config';
import { controlPlaneClient } from '../k8s/control-plane';
import type { KubeClient } from '../k8s/rest-client';
import { Bridge } from './bridge';
import { ShardLeases } from './shard-leases';

export interface RunningBridge {
  /** Its watches have listed the control plane (with shards: whether it holds any or not). */
  ready(): boolean;
  /** Serves until `stopped` settles, then stops its watches (and frees its shards). */
  serve(stopped: Promise<unknown>): Promise<void>;
}

/** Starts the bridge's watches; `say` tells what it serves, `log` what goes wrong; `shared`, a control-plane client to share. */
export async function startBridge(
  config: KlmConfig,
  temporal: Client,
  say: (m: string) => void,
  log: (m: string) => void,
  shared?: KubeClient,
): Promise<RunningBridge> {
  const kcp = shared ?? (await controlPlaneClient(config.kubeconfig));
  const election = config.leaderElection;
  let ready = false;
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
  say(
    `bridge: routing events to task queue ${config.taskQueue} on Temporal ${config.temporal.describe}, namespace ${config.temporal.namespace}`,
  );
  return {
    ready: () => ready,
    async serve(stopped) {
      if (leases && election) {
        void stopped.then(() => leases.stop());
        say(
          `bridge: sharing ${election.shards} shards with the bridges of Leases ${election.namespace}/${election.name}-* as ${election.identity}`,
        );
        // Returns once stopped, having stopped serving and freed its shards.
        await leases.run();
      } else {
        say('bridge: no leader election (KLM_LEADER_ELECTION_LEASE unset): run only this one bridge');
        await stopped;
      }
      ready = false;
      await bridge.stop();
    },
  };
}
