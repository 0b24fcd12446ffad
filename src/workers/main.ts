// Worker process: `tsx src/workers/main.ts`. Configuration from the environment (config.ts).
import { NativeConnection } from '@temporalio/worker';
import { controlPlaneClient } from '../k8s/control-plane';
import { configFromEnv } from './config';
import { createKlmWorker } from './worker';

async function main(): Promise<void> {
  const config = configFromEnv();
  const connection = await NativeConnection.connect({ address: config.temporalAddress });
  const worker = await createKlmWorker({
    connection,
    namespace: config.temporalNamespace,
    taskQueue: config.taskQueue,
    kcp: await controlPlaneClient(config.kubeconfig),
    blobCacheDir: config.blobCacheDir,
  });
  console.log(`worker: task queue ${config.taskQueue} on ${config.temporalAddress}`);
  // The SDK's runtime stops the worker gracefully on SIGINT and SIGTERM.
  await worker.run();
  await connection.close();
}

main().catch((err: unknown) => {
  console.error(`worker: ${err instanceof Error ? err.stack : String(err)}`);
  process.exit(1);
});
