// The product's processes as an operator starts them, for tests: the worker and the bridge as
// child processes of their own, configured by nothing but the environment.
import { spawn, type ChildProcess } from 'node:child_process';
import { stackInfo } from './stack';

/**
 * The environment of a worker or bridge on the shared stack (its Temporal, control plane and
 * registry) serving `taskQueue`; `extra` adds or overrides settings (a blob cache, a metrics port).
 */
export function processEnv(taskQueue: string, extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const info = stackInfo();
  return {
    ...process.env,
    TEMPORAL_ADDRESS: info.temporalAddress,
    TEMPORAL_NAMESPACE: info.temporalNamespace,
    KUBECONFIG: info.kubeconfig,
    KLM_TASK_QUEUE: taskQueue,
    KLM_OCI_REGISTRY_HOST: info.registryHost,
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
