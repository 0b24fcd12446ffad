// Prometheus metrics of the worker and the bridge, with upstream's names, labels and label
// values where upstream has them (lifecycle_mgr_*, reconcile_duration_seconds; what each means
// here: docs/operator/metrics-and-alerts.md), served on /metrics. The Temporal SDK exports its own
// metrics on a port of its own (KLM_SDK_METRICS_ADDRESS, docs/operator/configuration.md).
import http from 'node:http';
import type { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import type { ActivityInterceptorsFactory } from '@temporalio/worker';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

export const registry = new Registry();
/**
 * Node's default metrics; the event loop's lag sampled once a second, not prom-client's default
 * every 10 ms: that timer woke each idle process a hundred times a second, most of what an idle
 * worker or bridge spent (bench: idle CPU). A stall still shows: it delays the next sample.
 */
collectDefaultMetrics({ register: registry, eventLoopMonitoringPrecision: 1000 });

/** Upstream's runtime identity of a Kyma, the `shoot` and `instance_id` labels (absent: not set on the Kyma). */
export interface RuntimeIds {
  shoot?: string;
  instanceId?: string;
}

/** The fleet's states as the control plane has them (src/starter/fleet-states.ts). */
export interface FleetStates {
  kymas: ({ namespace: string; name: string; state: string } & RuntimeIds)[];
  /** Each module in a Kyma's status, with the Kyma's runtime identity. */
  modules: ({ namespace: string; kyma: string; module: string; state: string } & RuntimeIds)[];
  /** Each mandatory module of a Kyma, by its Manifest. */
  mandatoryModules: { namespace: string; kyma: string; module: string; state: string }[];
  /** Mandatory ModuleReleaseMetas per namespace. */
  mandatoryModuleCounts: { namespace: string; count: number }[];
}

/** Upstream's values of the `state` label per gauge (shared.AllKymaStates, AllModuleStates, AllMandatoryModuleStates). */
export const KYMA_STATES = ['Ready', 'Processing', 'Error', 'Deleting', 'Warning'] as const;
export const MODULE_STATES = [...KYMA_STATES, 'Unmanaged'] as const;
export const MANDATORY_MODULE_STATES = KYMA_STATES;

/** The `shoot` and `instance_id` labels, those the Kyma has. */
function runtimeLabels(k: RuntimeIds): Record<string, string> {
  return { ...(k.shoot ? { shoot: k.shoot } : {}), ...(k.instanceId ? { instance_id: k.instanceId } : {}) };
}

/** What gauges read at each scrape, from whoever exported it last in this process. */
class ScrapeSource<T> {
  private read?: () => T;

  /** Exports `read` until the returned function is called (unless another exporter took over meanwhile). */
  export(read: () => T): () => void {
    this.read = read;
    return () => {
      if (this.read === read) this.read = undefined;
    };
  }

  get(): T | undefined {
    return this.read?.();
  }
}

const fleetStates = new ScrapeSource<FleetStates>();

/**
 * The state gauges are read from `read` at each scrape (the bridge's informers), so that they are
 * exported by one process for the whole fleet, however many workers run, and a deleted Kyma or
 * module leaves no series. Returns the function that stops exporting them.
 */
export function exportFleetStates(read: () => FleetStates): () => void {
  return fleetStates.export(read);
}

// Registered by construction; filled at each scrape.
new Gauge({
  name: 'lifecycle_mgr_kyma_state',
  help: 'State of a Kyma (its status.state): 1 for its current state, 0 for the others (exported by the bridge)',
  labelNames: ['kyma_name', 'kyma_namespace', 'shoot', 'instance_id', 'state'],
  registers: [registry],
  collect() {
    this.reset();
    for (const k of fleetStates.get()?.kymas ?? [])
      setOneHot(this, { kyma_name: k.name, kyma_namespace: k.namespace, ...runtimeLabels(k) }, k.state, KYMA_STATES);
  },
});

new Gauge({
  name: 'lifecycle_mgr_module_state',
  help: "State of a module of a Kyma (its entry in the Kyma's status.modules): 1 for its current state, 0 for the others (exported by the bridge)",
  labelNames: ['kyma_name', 'kyma_namespace', 'module_name', 'shoot', 'instance_id', 'state'],
  registers: [registry],
  collect() {
    this.reset();
    for (const m of fleetStates.get()?.modules ?? [])
      setOneHot(
        this,
        { kyma_name: m.kyma, kyma_namespace: m.namespace, module_name: m.module, ...runtimeLabels(m) },
        m.state,
        MODULE_STATES,
      );
  },
});

new Gauge({
  name: 'lifecycle_mgr_mandatory_module_state',
  help: 'State of a mandatory module of a Kyma (its Manifest status.state): 1 for its current state, 0 for the others (exported by the bridge)',
  labelNames: ['kyma_name', 'kyma_namespace', 'module_name', 'state'],
  registers: [registry],
  collect() {
    this.reset();
    for (const m of fleetStates.get()?.mandatoryModules ?? [])
      setOneHot(
        this,
        { kyma_name: m.kyma, kyma_namespace: m.namespace, module_name: m.module },
        m.state,
        MANDATORY_MODULE_STATES,
      );
  },
});

new Gauge({
  name: 'lifecycle_mgr_mandatory_modules',
  help: 'Mandatory ModuleReleaseMetas (those being deleted too) of a namespace, for each namespace with Kymas or ModuleReleaseMetas (exported by the bridge)',
  labelNames: ['kyma_namespace'],
  registers: [registry],
  collect() {
    this.reset();
    for (const c of fleetStates.get()?.mandatoryModuleCounts ?? []) this.set({ kyma_namespace: c.namespace }, c.count);
  },
});

export const bridgeLeader = new Gauge({
  name: 'klm_bridge_leader',
  help:
    'Whether this bridge does the fleet-wide duties (1: it holds shard 0, or is the only ' +
    'bridge): promotions, the mandatory finalizer, ended workflows, the fleet state gauges',
  registers: [registry],
});

const shardClusters = new ScrapeSource<ReadonlyMap<number, number>>();

/** Exports the target clusters a bridge watches per shard it serves, read at each scrape; returns the function that stops it. */
export function exportShardClusters(read: () => ReadonlyMap<number, number>): () => void {
  return shardClusters.export(read);
}

// Registered by construction; filled at each scrape: one series per shard this bridge serves.
new Gauge({
  name: 'klm_bridge_shard_clusters',
  help: 'Target clusters this bridge watches, by the shard of their Kymas; a series for each shard it serves (one bridge alone: shard 0)',
  labelNames: ['shard'],
  registers: [registry],
  collect() {
    this.reset();
    for (const [shard, clusters] of shardClusters.get() ?? []) this.set({ shard: String(shard) }, clusters);
  },
});

const kubeRequestDuration = new Histogram({
  name: 'klm_kube_request_duration_seconds',
  help:
    'Requests to Kubernetes API servers by cluster (control-plane or target), HTTP method ' +
    '(WATCH: the opening of a watch, until its answer begins) and status code (0: no answer), and their latency',
  labelNames: ['cluster', 'method', 'code'],
  buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
  registers: [registry],
});

/** For `observeRequests` (src/k8s/transport.ts): every Kubernetes request of the process, counted. */
export function countKubeRequest(r: { cluster: string; method: string; code: number; seconds: number }): void {
  kubeRequestDuration.observe({ cluster: r.cluster, method: r.method, code: String(r.code) }, r.seconds);
}

/** Upstream counts requeues by reason; here an activity failure is the requeue. */
const requeues = new Counter({
  name: 'lifecycle_mgr_requeue_reason_total',
  help: 'Activity failures by reason: "intended" ones are typed and end the step (the module shows them), "unexpected" ones are retried by Temporal',
  labelNames: ['requeue_reason', 'requeue_type', 'activity'],
  registers: [registry],
});

const activityDuration = new Histogram({
  name: 'klm_activity_duration_seconds',
  help: 'Activity execution time by activity type and outcome',
  labelNames: ['activity', 'outcome'],
  buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
  registers: [registry],
});

const reconcileDuration = new Gauge({
  name: 'reconcile_duration_seconds',
  help:
    "Seconds the last install of a Manifest's module on this worker took (fetch, render, apply, " +
    'default CR, prune, readiness check), kept while it takes a minute or more, as upstream ' +
    "keeps a Manifest reconciliation's",
  labelNames: ['manifest_name', 'kyma_namespace'],
  registers: [registry],
});

/** For src/workers/reconcile-duration.ts: a Manifest's install duration shown (`seconds`), or its series removed (none). */
export function setReconcileDuration(m: { namespace: string; name: string; seconds?: number }): void {
  const labels = { manifest_name: m.name, kyma_namespace: m.namespace };
  if (m.seconds === undefined) reconcileDuration.remove(labels);
  else reconcileDuration.set(labels, m.seconds);
}

const MAINTENANCE_POLICY_READ = 'lifecycle_mgr_maintenance_window_config_read_success';

/** Registered by the first read of a policy: a process without KLM_MAINTENANCE_POLICY exports no series. */
const maintenancePolicyRead = new Gauge({
  name: MAINTENANCE_POLICY_READ,
  help:
    'Whether the last read of the maintenance-window policy (KLM_MAINTENANCE_POLICY) by this ' +
    'worker found it usable (1) or not (0: its ConfigMap or key missing, unreadable, or ' +
    'invalid); read at start and whenever an upgrade requires downtime',
  registers: [],
});

/** For src/activities/maintenance.ts: how the last read of the policy went. */
export function recordMaintenancePolicyRead(usable: boolean): void {
  if (!registry.getSingleMetric(MAINTENANCE_POLICY_READ)) registry.registerMetric(maintenancePolicyRead);
  maintenancePolicyRead.set(usable ? 1 : 0);
}

export const signalsSent = new Counter({
  name: 'klm_bridge_signals_total',
  help: 'Signals the bridge sent, by signal and outcome',
  labelNames: ['signal', 'outcome'],
  registers: [registry],
});

/** Per ModuleTemplate or ModuleReleaseMeta event: Kymas of its namespace signalled, and those the fleet index spared. */
export const templateSignals = new Counter({
  name: 'klm_bridge_template_signals_total',
  help: 'Kymas a ModuleTemplate or ModuleReleaseMeta event signalled ("sent") or, by the fleet index, did not ("skipped") among those of its namespace',
  labelNames: ['outcome'],
  registers: [registry],
});

export const signalLatency = new Histogram({
  name: 'klm_bridge_signal_latency_seconds',
  help: 'Time from a watch event to its signal being accepted by Temporal',
  labelNames: ['signal'],
  buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
  registers: [registry],
});

function setOneHot(g: Gauge<string>, labels: Record<string, string>, state: string, states: readonly string[]): void {
  for (const s of states) g.set({ ...labels, state: s }, s === state ? 1 : 0);
}

/** An activity's failure by its reason: a typed failure's type (src/api/reasons.ts), else the error's name. */
export function activityFailureReason(err: unknown): string {
  return err instanceof ApplicationFailure ? (err.type ?? 'Failed') : (err instanceof Error && err.name) || 'Error';
}

/** Times every activity and counts its failures by reason. */
export const activityMetrics: ActivityInterceptorsFactory = (ctx: Context) => ({
  inbound: {
    async execute(input, next) {
      const activity = ctx.info.activityType;
      const end = activityDuration.startTimer({ activity });
      try {
        const result = await next(input);
        end({ outcome: 'ok' });
        return result;
      } catch (err) {
        end({ outcome: 'failed' });
        const typed = err instanceof ApplicationFailure && err.nonRetryable;
        const reason = activityFailureReason(err);
        requeues.inc({ requeue_reason: reason, requeue_type: typed ? 'intended' : 'unexpected', activity });
        throw err;
      }
    },
  },
});

/** The metrics and probe server of a process. */
export interface ProbeServer {
  port: number;
  /** The process is stopping: /healthz and /readyz fail from now on (a stopping process is neither alive nor ready for a probe). */
  stopping(): void;
  close(): Promise<void>;
}

/**
 * Serves /metrics on the port (0: any free one), and the probes: /healthz (200 while the process
 * answers and is not stopping) and /readyz (200 once `ready` says so, until it stops; else 503).
 * Resolves with the bound port.
 */
export async function serveMetrics(
  port: number,
  host = '127.0.0.1',
  ready: () => boolean = () => true,
): Promise<ProbeServer> {
  let stopping = false;
  const server = http.createServer((req, res) => {
    const path = (req.url ?? '').split('?')[0];
    if (path === '/healthz') {
      res.writeHead(stopping ? 503 : 200, { 'content-type': 'text/plain' }).end(stopping ? 'stopping\n' : 'ok\n');
      return;
    }
    if (path === '/readyz') {
      const ok = !stopping && ready();
      res.writeHead(ok ? 200 : 503, { 'content-type': 'text/plain' }).end(ok ? 'ready\n' : 'not ready\n');
      return;
    }
    if (path !== '/metrics') {
      res.writeHead(404).end();
      return;
    }
    void registry.metrics().then((body) => {
      res.writeHead(200, { 'content-type': registry.contentType }).end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(port, host, resolve));
  const bound = (server.address() as { port: number }).port;
  return {
    port: bound,
    stopping: () => void (stopping = true),
    // Kept-alive connections of scrapers and probes must not keep the process alive.
    close: () =>
      new Promise<void>((r) => {
        server.close(() => r());
        server.closeAllConnections();
      }),
  };
}
