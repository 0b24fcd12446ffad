// `klm up`'s worker: the worker process the Deployment runs (src/workers/main.ts, or its build in
// dist/), as a server of the local stack: configured by its environment, its log in worker.log,
// its probes on a port of its own, and restarted by the stack's supervisor (with the cause and its
// last log lines said) when it dies while nobody is stopping it.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from '../localstack/ports';
import { startProcess, waitUntil, type ManagedProcess } from '../localstack/process';
import { supervise } from '../localstack/supervise';

/** The worker's entry beside this file's own: src/workers/main.ts under tsx, dist/workers/main.js when built. */
function workerEntry(): string {
  const here = fileURLToPath(import.meta.url);
  return fileURLToPath(new URL(`../workers/main${path.extname(here)}`, import.meta.url));
}

export interface WorkerProcess {
  process: ManagedProcess;
  /** Its /metrics (and /healthz, /readyz) port. */
  metricsPort: number;
}

/**
 * Starts the worker with `env` (Temporal, the control plane's kubeconfig, the registry, the task
 * queue) and waits until it polls its task queue (/readyz), for at most `readyMs`.
 */
export async function startWorkerProcess(o: {
  dir: string;
  env: NodeJS.ProcessEnv;
  readyMs?: number;
}): Promise<WorkerProcess> {
  const metricsPort = await freePort();
  // The same node, with the same loader (tsx's, when the sources run).
  const args = [...process.execArgv, workerEntry()];
  const env = { ...o.env, KLM_METRICS_PORT: String(metricsPort) };
  const proc = await supervise(
    () => startProcess('worker', process.execPath, args, { logFile: path.join(o.dir, 'worker.log'), env }),
    (p) =>
      waitUntil(
        p,
        'polling its task queue',
        async () => (await fetch(`http://127.0.0.1:${metricsPort}/readyz`)).status === 200,
        o.readyMs ?? 180_000,
      ),
  );
  return { process: proc, metricsPort };
}
