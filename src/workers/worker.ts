// The worker: the workflows and activities on one task queue.
import { fileURLToPath } from 'node:url';
import { NativeConnection, Worker, type WorkerOptions } from '@temporalio/worker';
import { createActivities } from '../activities';
import type { KubeClient } from '../k8s/rest-client';
import { activityMetrics } from './metrics';

export const WORKFLOWS_PATH = fileURLToPath(new URL('../workflows/index.ts', import.meta.url));

export interface KlmWorkerOptions {
  connection: NativeConnection;
  namespace: string;
  taskQueue: string;
  kcp: KubeClient;
  blobCacheDir: string;
  /** A pre-built workflow bundle (tests build it once); else the workflows are bundled here. */
  workflowBundle?: WorkerOptions['workflowBundle'];
}

export async function createKlmWorker(o: KlmWorkerOptions): Promise<Worker> {
  return await Worker.create({
    connection: o.connection,
    namespace: o.namespace,
    taskQueue: o.taskQueue,
    ...(o.workflowBundle ? { workflowBundle: o.workflowBundle } : { workflowsPath: WORKFLOWS_PATH }),
    activities: createActivities({ kcp: o.kcp, cacheDir: o.blobCacheDir }),
    interceptors: { activity: [activityMetrics] },
    maxConcurrentActivityTaskExecutions: 200,
    // A workflow task holds its slot while its local activities (API reads and writes) run:
    // slots are cheap, waiting on them is not.
    maxConcurrentWorkflowTaskExecutions: 400,
    maxConcurrentLocalActivityExecutions: 400,
    maxCachedWorkflows: 5000,
  });
}
