// Starts one local stack for the whole test run and hands its addresses to the test files.
// The integration files run in two lanes (vitest.config.ts), each a project of its own that
// calls this setup: one stack serves both (started by the first, stopped by the last), and each
// lane gets a control plane and target cluster of its own in it: lane A the stack's API server,
// lane B a further cluster (its own API server, controllers and kwok node on the shared etcd),
// with the CRDs installed. The lanes share Temporal and the registry: every file has its own
// task queue and namespace there, as it has on the API server.
import type { TestProject } from 'vitest/node';
import { installCrds } from '../src/k8s/crds';
import { kubeConfigFromFile } from '../src/k8s/kubeconfig';
import { KubeClient } from '../src/k8s/rest-client';
import { startStack, type Stack, type StackInfo } from '../src/localstack/stack';

declare module 'vitest' {
  export interface ProvidedContext {
    stack: StackInfo;
  }
}

/** The project whose files run against the further cluster (vitest.config.ts). */
export const LANE_B = 'integration-b';

interface Shared {
  stack: Promise<{ stack: Stack; laneB: StackInfo }>;
  users: number;
}

// Vitest may load this module once per project: what the projects share lives on globalThis.
const key = Symbol.for('klm.test.stack');
const shared = ((globalThis as Record<symbol, Shared | undefined>)[key] ??= {
  stack: (async () => {
    const stack = await startStack({ profile: 'full', targetClusters: 1 });
    const cluster = stack.info.targetClusters[0]!;
    await installCrds(await KubeClient.fromKubeConfig(kubeConfigFromFile(cluster.kubeconfig)));
    const laneB: StackInfo = {
      ...stack.info,
      kubeconfig: cluster.kubeconfig,
      kubeApiUrl: cluster.kubeApiUrl,
      targetClusters: [],
    };
    return { stack, laneB };
  })(),
  users: 0,
});

export async function setup(project: TestProject): Promise<void> {
  shared.users++;
  const { stack, laneB } = await shared.stack;
  project.provide('stack', project.name === LANE_B ? laneB : { ...stack.info, targetClusters: [] });
}

export async function teardown(): Promise<void> {
  if (--shared.users > 0) return;
  await (await shared.stack).stack.stop();
}
