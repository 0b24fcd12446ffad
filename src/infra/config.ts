// Worker and bridge configuration, from the environment.
import { homedir, hostname } from 'node:os';
import path from 'node:path';
import type { LogLevel } from '@temporalio/common';
import { DEFAULT_SETTINGS, type ReconcileSettings } from '../contract/settings';
import { temporalFromEnv, type TemporalTarget } from './temporal-env';

export interface KlmConfig {
  /** Where Temporal is and how to authenticate there (`temporalFromEnv`). */
  temporal: TemporalTarget;
  taskQueue: string;
  /** Control-plane kubeconfig file; unset: in-cluster or ~/.kube/config. */
  kubeconfig?: string;
  /** Worker-local content-addressed cache of layers and rendered manifests. */
  blobCacheDir: string;
  /** KLM_LOG_LEVEL: the worker's log level; unset, each process has its own default. */
  logLevel?: LogLevel;
  /** Port of /metrics (0: none). */
  metricsPort: number;
  /** How long worker and bridge may take to stop after SIGTERM before they exit all the same (KLM_SHUTDOWN_TIMEOUT). */
  shutdownTimeoutMs: number;
  /** Target clusters: how long one request may take, and how often the bridge probes each. */
  targetRequestTimeoutMs: number;
  targetProbeIntervalMs: number;
  /** How long the bridge gathers a Kyma's module news before signalling (KLM_NEWS_WINDOW). */
  newsWindowMs: number;
  /** Whether kubeconfig Secrets may run commands for their credentials (exec plugins). */
  allowKubeconfigExec: boolean;
  /** How the worker reaches OCI registries. */
  registry: RegistryConfig;
  /** How many workflows the worker keeps in memory between their tasks (the SDK's sticky cache). */
  workflowCacheSize: number;
  /** A workflow bundle built ahead of time (`klm bundle`); unset: the worker bundles at start. */
  workflowBundle?: string;
  /** How many task polls the worker keeps open per kind: scaled by the server's backlog, or a fixed number. */
  taskPollers: 'autoscaling' | number;
  /** Whether workflow code keeps its stack traces (KLM_WORKFLOW_STACK_TRACES; src/workers/workflow-stack-traces.ts). */
  workflowStackTraces: boolean;
  settings: ReconcileSettings;
  /**
   * The OCI registry that holds the modules' OCM components, as upstream's flags
   * `--oci-registry-host` (KLM_OCI_REGISTRY_HOST: host[:port][/path], `http://` for plain HTTP)
   * and `--modules-repository-subpath` (KLM_MODULES_REPOSITORY_SUBPATH): a ModuleTemplate with
   * `descriptor: {}` is found at `<host>[/<subpath>]/component-descriptors/<ocmComponentName>:<version>`.
   */
  ociRegistry?: { host: string; subPath: string };
  /**
   * The namespaces whose Kymas this installation serves (KLM_KYMA_NAMESPACES, comma-separated):
   * kubeconfig Secrets are watched there only, so that read access to Secrets can be granted
   * there only; Kymas elsewhere are left alone. Unset: every namespace.
   */
  kymaNamespaces?: string[];
  /**
   * What the bridge's watches in a target cluster see (KLM_TARGET_WATCH_SCOPE): `cluster`, as a
   * runtime needs; or `context-namespace`, the namespace of the kubeconfig's current context only,
   * for simulations that put many runtimes on one API server, a namespace each (the bench's
   * --distinct-credentials): otherwise each simulated runtime's watches would see every runtime's
   * objects there.
   */
  targetWatchScope: TargetWatchScope;
  /**
   * The bridges' shards (KLM_LEADER_ELECTION_LEASE: namespace/name that their coordination.k8s.io
   * Leases are named after): the bridges that name it share the fleet's `shards`
   * (KLM_BRIDGE_SHARDS), each shard held by one through a Lease, with the timings
   * KLM_LEADER_ELECTION_LEASE_DURATION, _RENEW_DEADLINE and _RETRY_PERIOD. Unset: run one bridge
   * only. `identity` is POD_NAME, else host name and process id.
   */
  leaderElection?: LeaderElection;
  /** The ConfigMap (KLM_MAINTENANCE_POLICY: namespace/name) whose key `policy.json` holds the maintenance-window policy. */
  maintenancePolicy?: { namespace: string; name: string };
  /** The worker's Temporal Worker Deployment and how its versions become current. */
  deployment: DeploymentConfig;
}

/**
 * The worker's Temporal Worker Deployment (docs/operator/upgrading.md): its name (KLM_DEPLOYMENT_NAME;
 * the task queue's by default: one deployment per installation), this worker's build id (KLM_BUILD_ID; unset: from the package version, the commit and
 * the settings, src/workers/build-id.ts) and who makes a version current (KLM_VERSION_PROMOTION):
 * `auto`, the worker makes its own version current once it polls, if that version never was
 * current or ramping before; `manual`, an operator does (`klm deployment current` / `ramp`).
 */
export interface DeploymentConfig {
  name: string;
  buildId?: string;
  promotion: 'auto' | 'manual';
}

export type TargetWatchScope = 'cluster' | 'context-namespace';

export interface LeaseTimings {
  /** How long a holder that stopped renewing keeps a Lease from others. */
  leaseDurationMs: number;
  /** How long a holder goes on trying to renew before it stops serving what the Lease holds. */
  renewDeadlineMs: number;
  /** How often a holder renews, and a replica looks for what it may take. */
  retryPeriodMs: number;
}

/**
 * Upstream lifecycle-manager's defaults for leader election (its --leader-election-* flags: 180 s,
 * 120 s, 3 s; client-go's are 15, 10 and 2 s). Long, so that a replica starved of CPU or an API
 * server slow under load does not lose its shards (each loss and take costs a replay of the
 * shard's Kymas, which loads them further); a replica that crashes leaves its shards unserved for
 * up to the lease duration (one that stops frees them at once).
 */
export const LEASE_TIMINGS: LeaseTimings = { leaseDurationMs: 180_000, renewDeadlineMs: 120_000, retryPeriodMs: 3_000 };

/** Shards over the bridges: with three replicas, three shards each at most (two after a loss: four). */
export const BRIDGE_SHARDS = 8;

export interface LeaderElection extends LeaseTimings {
  namespace: string;
  name: string;
  identity: string;
  shards: number;
}

export interface RegistryConfig {
  /** PEM bundle of extra CAs trusted for registries (besides Node's roots and the system store). */
  caFile?: string;
  /**
   * Hosts (host or host:port) that may speak plain HTTP; loopback hosts always may, and so does
   * the host of KLM_OCI_REGISTRY_HOST when it is given as an `http://` URL.
   */
  insecureHosts: string[];
  /** The dockerconfigjson Secret with registry credentials: `name` (in kcp-system) or `namespace/name`. */
  credSecret?: string;
}

const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** "500ms", "30s", "10m", "1h" or plain milliseconds; `name`: the variable it came from, which a refusal names. */
export function durationMs(value: string | undefined, fallback: number, name?: string): number {
  if (!value) return fallback;
  const m = /^(\d+(?:\.\d+)?)(ms|s|m|h)?$/.exec(value.trim());
  if (!m) throw new Error(`${name ? `${name}: ` : ''}not a duration: "${value}" (use e.g. 500ms, 30s, 10m, 1h)`);
  return Math.round(Number(m[1]) * UNITS[m[2] ?? 'ms']!);
}

/** The host of an explicit `http://` registry URL: it may speak plain HTTP, as the URL says. */
function plainHttpHost(value: string | undefined): string[] {
  const v = value?.trim();
  if (!v || !/^http:\/\//i.test(v)) return [];
  try {
    return [new URL(v).host.toLowerCase()];
  } catch {
    throw new Error(`KLM_OCI_REGISTRY_HOST is not a valid URL: "${value}"`);
  }
}

/**
 * Workflows kept in memory between tasks. One that is not is replayed from its history on its
 * next task: module histories are short (about 17 events), so replay is cheap and memory is
 * what a fleet runs out of.
 */
export const DEFAULT_WORKFLOW_CACHE_SIZE = 5000;

/**
 * The default window of a Kyma's module news: an install's objects change several times within
 * a second or two (created, scheduled, available; the CR's state), and a Kyma's modules install
 * together. Each signal is a workflow task; a second gathers a Kyma's news into about a third
 * fewer signals than a fifth of a second did (20 Kymas × 3 modules, a cluster each: 75 → 48),
 * at the cost of at most a second before a status shows it.
 */
export const NEWS_WINDOW_MS = 1_000;
/**
 * How long news that cannot change a module's state waits at most for the module's next news
 * (then it goes out after the news window like any other), while its Manifest shows it Processing:
 * its manager's rollout while the bridge has not seen its Manifest or listed its CR kind, or
 * while its CR reports no state or Processing; its CR's news of no state or Processing
 * (src/starter/readiness-change.ts, src/starter/target-watches.ts).
 */
export const NEWS_WAIT_MS = 10_000;

/** Within the 30 s a pod has by default between SIGTERM and SIGKILL. */
export const SHUTDOWN_TIMEOUT_MS = 25_000;

export function configFromEnv(env: NodeJS.ProcessEnv = process.env): KlmConfig {
  const cacheRoot =
    env.KLM_CACHE_DIR ?? path.join(env.XDG_CACHE_HOME ?? path.join(homedir(), '.cache'), 'klm-temporal');
  return {
    temporal: temporalFromEnv(env),
    taskQueue: env.KLM_TASK_QUEUE ?? 'klm',
    kubeconfig: env.KUBECONFIG,
    blobCacheDir: env.KLM_BLOB_CACHE_DIR ?? path.join(cacheRoot, 'blobs'),
    ...logLevel(env.KLM_LOG_LEVEL),
    metricsPort: Number(env.KLM_METRICS_PORT ?? 0),
    shutdownTimeoutMs: durationMs(env.KLM_SHUTDOWN_TIMEOUT, SHUTDOWN_TIMEOUT_MS, 'KLM_SHUTDOWN_TIMEOUT'),
    targetRequestTimeoutMs: durationMs(env.KLM_TARGET_REQUEST_TIMEOUT, 20_000, 'KLM_TARGET_REQUEST_TIMEOUT'),
    targetProbeIntervalMs: durationMs(env.KLM_TARGET_PROBE_INTERVAL, 10_000, 'KLM_TARGET_PROBE_INTERVAL'),
    newsWindowMs: durationMs(env.KLM_NEWS_WINDOW, NEWS_WINDOW_MS, 'KLM_NEWS_WINDOW'),
    allowKubeconfigExec: kubeconfigExec(env.KLM_KUBECONFIG_EXEC),
    workflowCacheSize: wholeNumber('KLM_WORKFLOW_CACHE_SIZE', env.KLM_WORKFLOW_CACHE_SIZE, DEFAULT_WORKFLOW_CACHE_SIZE),
    ...(env.KLM_WORKFLOW_BUNDLE ? { workflowBundle: env.KLM_WORKFLOW_BUNDLE } : {}),
    taskPollers: taskPollers(env.KLM_TASK_POLLERS),
    workflowStackTraces: onOff('KLM_WORKFLOW_STACK_TRACES', env.KLM_WORKFLOW_STACK_TRACES, false),
    registry: {
      ...(env.KLM_REGISTRY_CA_FILE ? { caFile: env.KLM_REGISTRY_CA_FILE } : {}),
      insecureHosts: [
        ...(env.KLM_INSECURE_REGISTRIES ?? '')
          .split(',')
          .map((h) => h.trim())
          .filter(Boolean),
        ...plainHttpHost(env.KLM_OCI_REGISTRY_HOST),
      ],
      ...(env.KLM_OCI_REGISTRY_CRED_SECRET ? { credSecret: env.KLM_OCI_REGISTRY_CRED_SECRET } : {}),
    },
    ...(env.KLM_OCI_REGISTRY_HOST
      ? { ociRegistry: { host: env.KLM_OCI_REGISTRY_HOST, subPath: env.KLM_MODULES_REPOSITORY_SUBPATH ?? '' } }
      : {}),
    ...maintenancePolicy(env.KLM_MAINTENANCE_POLICY),
    ...leaderElection(env),
    ...kymaNamespaces(env.KLM_KYMA_NAMESPACES),
    targetWatchScope: targetWatchScope(env.KLM_TARGET_WATCH_SCOPE),
    deployment: deployment(env, env.KLM_TASK_QUEUE ?? 'klm'),
    settings: {
      driftIntervalMs: durationMs(env.KLM_DRIFT_INTERVAL, DEFAULT_SETTINGS.driftIntervalMs, 'KLM_DRIFT_INTERVAL'),
      crdEstablishedTimeoutMs: durationMs(
        env.KLM_CRD_ESTABLISHED_TIMEOUT,
        DEFAULT_SETTINGS.crdEstablishedTimeoutMs,
        'KLM_CRD_ESTABLISHED_TIMEOUT',
      ),
      managerAvailableTimeoutMs: durationMs(
        env.KLM_MANAGER_AVAILABLE_TIMEOUT,
        DEFAULT_SETTINGS.managerAvailableTimeoutMs,
        'KLM_MANAGER_AVAILABLE_TIMEOUT',
      ),
      installRetryMs: durationMs(env.KLM_INSTALL_RETRY, DEFAULT_SETTINGS.installRetryMs, 'KLM_INSTALL_RETRY'),
      defaultNamespace: env.KLM_DEFAULT_NAMESPACE ?? DEFAULT_SETTINGS.defaultNamespace,
      maxHistoryEvents: Number(env.KLM_MAX_HISTORY_EVENTS ?? DEFAULT_SETTINGS.maxHistoryEvents),
      moduleParallelism: positive(
        'KLM_MODULE_PARALLELISM',
        wholeNumber('KLM_MODULE_PARALLELISM', env.KLM_MODULE_PARALLELISM, DEFAULT_SETTINGS.moduleParallelism),
      ),
      maxModulesPerKyma: positive(
        'KLM_MAX_MODULES_PER_KYMA',
        wholeNumber('KLM_MAX_MODULES_PER_KYMA', env.KLM_MAX_MODULES_PER_KYMA, DEFAULT_SETTINGS.maxModulesPerKyma),
      ),
      maxRunAgeMs: durationMs(env.KLM_MAX_RUN_AGE, DEFAULT_SETTINGS.maxRunAgeMs, 'KLM_MAX_RUN_AGE'),
    },
  };
}

/** The SDK's log levels, least severe first. */
export const LOG_LEVELS: readonly LogLevel[] = ['TRACE', 'DEBUG', 'INFO', 'WARN', 'ERROR'];

/** KLM_LOG_LEVEL: one of the SDK's levels, in any case. */
function logLevel(value: string | undefined): { logLevel?: LogLevel } {
  if (value === undefined || value.trim() === '') return {};
  const level = LOG_LEVELS.find((l) => l === value.trim().toUpperCase());
  if (!level) throw new Error(`KLM_LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}, not "${value}"`);
  return { logLevel: level };
}

/** KLM_MAINTENANCE_POLICY: `namespace/name` of a ConfigMap. */
function maintenancePolicy(value: string | undefined): { maintenancePolicy?: { namespace: string; name: string } } {
  return value ? { maintenancePolicy: namespacedName('KLM_MAINTENANCE_POLICY', value, 'a ConfigMap') } : {};
}

/** `namespace/name` of `what`, as the variable `variable` gives it. */
function namespacedName(variable: string, value: string, what: string): { namespace: string; name: string } {
  const [namespace, name, ...rest] = value.split('/');
  if (!namespace || !name || rest.length)
    throw new Error(`${variable} must be namespace/name of ${what}, not "${value}"`);
  return { namespace, name };
}

/** KLM_DEPLOYMENT_NAME (the task queue's name by default), KLM_BUILD_ID, KLM_VERSION_PROMOTION. */
function deployment(env: NodeJS.ProcessEnv, taskQueue: string): DeploymentConfig {
  const name = env.KLM_DEPLOYMENT_NAME?.trim() || taskQueue.replace(/[^A-Za-z0-9_-]/g, '-');
  // Temporal joins them as `<name>.<build id>`: a name cannot hold the dot.
  if (!/^[A-Za-z0-9_-]+$/.test(name))
    throw new Error(`KLM_DEPLOYMENT_NAME may hold letters, digits, "-" and "_" only, not "${name}"`);
  const buildId = env.KLM_BUILD_ID?.trim();
  if (buildId !== undefined && buildId !== '' && !/^[A-Za-z0-9._+-]{1,200}$/.test(buildId))
    throw new Error(
      `KLM_BUILD_ID may hold letters, digits, ".", "_", "+" and "-" only (200 at most), not "${buildId}"`,
    );
  const promotion = env.KLM_VERSION_PROMOTION?.trim() || 'auto';
  if (promotion !== 'auto' && promotion !== 'manual')
    throw new Error(`KLM_VERSION_PROMOTION must be auto or manual, not "${promotion}"`);
  return { name, ...(buildId ? { buildId } : {}), promotion };
}

/** KLM_TARGET_WATCH_SCOPE: `cluster` (default) or `context-namespace`. */
function targetWatchScope(value: string | undefined): TargetWatchScope {
  const v = value?.trim() || 'cluster';
  if (v !== 'cluster' && v !== 'context-namespace')
    throw new Error(`KLM_TARGET_WATCH_SCOPE must be "cluster" or "context-namespace", not "${value}"`);
  return v;
}

/** KLM_KYMA_NAMESPACES: namespaces, comma-separated. */
function kymaNamespaces(value: string | undefined): { kymaNamespaces?: string[] } {
  const list = [
    ...new Set(
      (value ?? '')
        .split(',')
        .map((n) => n.trim())
        .filter(Boolean),
    ),
  ];
  const bad = list.find((n) => !/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(n) || n.length > 63);
  if (bad !== undefined)
    throw new Error(`KLM_KYMA_NAMESPACES must list namespace names separated by commas; "${bad}" is not one`);
  return list.length ? { kymaNamespaces: list } : {};
}

/** KLM_LEADER_ELECTION_LEASE: `namespace/name` the bridges' Leases are named after; their shards and timings. */
function leaderElection(env: NodeJS.ProcessEnv): { leaderElection?: LeaderElection } {
  const value = env.KLM_LEADER_ELECTION_LEASE;
  if (!value) return {};
  const timings: LeaseTimings = {
    leaseDurationMs: durationMs(
      env.KLM_LEADER_ELECTION_LEASE_DURATION,
      LEASE_TIMINGS.leaseDurationMs,
      'KLM_LEADER_ELECTION_LEASE_DURATION',
    ),
    renewDeadlineMs: durationMs(
      env.KLM_LEADER_ELECTION_RENEW_DEADLINE,
      LEASE_TIMINGS.renewDeadlineMs,
      'KLM_LEADER_ELECTION_RENEW_DEADLINE',
    ),
    retryPeriodMs: durationMs(
      env.KLM_LEADER_ELECTION_RETRY_PERIOD,
      LEASE_TIMINGS.retryPeriodMs,
      'KLM_LEADER_ELECTION_RETRY_PERIOD',
    ),
  };
  if (!(timings.retryPeriodMs < timings.renewDeadlineMs && timings.renewDeadlineMs < timings.leaseDurationMs)) {
    throw new Error(
      'KLM_LEADER_ELECTION_RETRY_PERIOD must be shorter than KLM_LEADER_ELECTION_RENEW_DEADLINE, and that shorter than KLM_LEADER_ELECTION_LEASE_DURATION',
    );
  }
  const shards = wholeNumber('KLM_BRIDGE_SHARDS', env.KLM_BRIDGE_SHARDS, BRIDGE_SHARDS);
  if (shards < 1) throw new Error('KLM_BRIDGE_SHARDS must be at least 1');
  return {
    leaderElection: {
      ...namespacedName('KLM_LEADER_ELECTION_LEASE', value, 'a Lease'),
      identity: env.POD_NAME || `${hostname()}-${process.pid}`,
      shards,
      ...timings,
    },
  };
}

function wholeNumber(name: string, value: string | undefined, fallback: number): number {
  if (value === undefined || value === '') return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw new Error(`${name} must be a whole number, not "${value}"`);
  return n;
}

/** A whole number of at least 1. */
function positive(name: string, n: number): number {
  if (n < 1) throw new Error(`${name} must be at least 1, not ${n}`);
  return n;
}

/** KLM_TASK_POLLERS: `autoscaling` (default) or a fixed number of polls per task kind (at least 2). */
function taskPollers(value: string | undefined): 'autoscaling' | number {
  if (value === undefined || value === '' || value === 'autoscaling') return 'autoscaling';
  const n = Number(value);
  if (!Number.isInteger(n) || n < 2)
    throw new Error(`KLM_TASK_POLLERS must be "autoscaling" or a whole number of at least 2, not "${value}"`);
  return n;
}

/** `on` or `off` (unset: `fallback`). */
function onOff(name: string, value: string | undefined, fallback: boolean): boolean {
  if (value === undefined || value === '') return fallback;
  if (value === 'on' || value === 'off') return value === 'on';
  throw new Error(`${name} must be "on" or "off", not "${value}"`);
}

/** KLM_KUBECONFIG_EXEC: `allow` (default) or `deny`. */
function kubeconfigExec(value: string | undefined): boolean {
  if (value === undefined || value === '' || value === 'allow') return true;
  if (value === 'deny') return false;
  throw new Error(`KLM_KUBECONFIG_EXEC must be "allow" or "deny", not "${value}"`);
}
