// The product's processes as an operator starts them, for tests: the worker and the bridge as
// child processes of their own, configured by nothing but the environment.
import { spawn, type ChildProcess } from 'node:child_process';
import type { ReconcileSettings } from '../../src/contract/settings';
import { stackInfo } from './stack';

/** `settings` as the environment gives them to a worker (src/infra/config.ts). */
export function settingsEnv(settings: ReconcileSettings): NodeJS.ProcessEnv {
  return {
    KLM_DRIFT_INTERVAL: String(settings.driftIntervalMs),
    KLM_CRD_ESTABLISHED_TIMEOUT: String(settings.crdEstablishedTimeoutMs),
    KLM_MANAGER_AVAILABLE_TIMEOUT: String(settings.managerAvailableTimeoutMs),
    KLM_INSTALL_RETRY: String(settings.installRetryMs),
    KLM_DEFAULT_NAMESPACE: settings.defaultNamespace,
    KLM_MAX_HISTORY_EVENTS: String(settings.maxHistoryEvents),
    KLM_MODULE_PARALLELISM: String(settings.moduleParallelism),
    KLM_MAX_MODULES_PER_KYMA: String(settings.maxModulesPerKyma),
    KLM_MAX_RUN_AGE: String(settings.maxRunAgeMs),
  };
}

/**
 * The environment of a worker or bridge on the shared stack (its Temporal, control plane and
 * registry) serving a task queue (and, given a test's product, with its settings: a worker
 * process then runs as the in-process one would); `extra` adds or overrides settings (a blob
 * cache, a metrics port).
 */
export function processEnv(
  serving: string | { taskQueue: string; settings: ReconcileSettings },
  extra: NodeJS.ProcessEnv = {},
): NodeJS.ProcessEnv {
  const info = stackInfo();
  const taskQueue = typeof serving === 'string' ? serving : serving.taskQueue;
  return {
    ...process.env,
    TEMPORAL_ADDRESS: info.temporalAddress,
    TEMPORAL_NAMESPACE: info.temporalNamespace,
    KUBECONFIG: info.kubeconfig,
    KLM_TASK_QUEUE: taskQueue,
    KLM_OCI_REGISTRY_HOST: info.registryHost,
    ...(typeof serving === 'string' ? {} : settingsEnv(serving.settings)),
    ...extra,
  };
}

export interface StartedProcess {
  proc: ChildProcess;
  /** What it printed so far, stdout and stderr together. */
  out(): string;
}

/** `node <args>` with `env` (in `cwd`, this project's root by default), its output captured; the caller kills it. */
export function startNode(args: string[], env: NodeJS.ProcessEnv, cwd?: string): StartedProcess {
  let out = '';
  const proc = spawn(process.execPath, args, { env, stdio: ['ignore', 'pipe', 'pipe'], ...(cwd ? { cwd } : {}) });
  proc.stdout.on('data', (d: Buffer) => (out += d.toString()));
  proc.stderr.on('data', (d: Buffer) => (out += d.toString()));
  return { proc, out: () => out };
}
