// Starts one local stack for the whole test run and hands its addresses to the test files.
// Two integration files run at a time (vitest.config.ts); each of the two pool slots has a
// control plane and target cluster of its own in the stack, so that a file never shares its
// API server with a file running beside it: slot 1 the stack's API server, slot 2 a further
// cluster (its own API server, controllers and kwok node on the shared etcd) with the CRDs
// installed (test/support/stack.ts picks by VITEST_POOL_ID). Temporal and the registry are
// shared: every file has its own task queue and namespace there, as on the API server.
import type { TestProject } from 'vitest/node';
import { installCrds } from '../src/k8s/crds';
import { kubeConfigFromFile } from '../src/k8s/kubeconfig';
import { KubeClient } from '../src/k8s/rest-client';
import { startStack, type Stack, type StackInfo } from '../src/localstack/stack';

declare module 'vitest' {
  export interface ProvidedContext {
    /** One stack per pool slot: the same servers but for the API server. */
    stacks: StackInfo[];
  }
}

let stack: Stack | undefined;

export async function setup(project: TestProject): Promise<void> {
  stack = await startStack({ profile: 'full', targetClusters: 1 });
  const further = stack.info.targetClusters[0]!;
  await installCrds(await KubeClient.fromKubeConfig(kubeConfigFromFile(further.kubeconfig)));
  const own = { ...stack.info, targetClusters: [] };
  project.provide('stacks', [own, { ...own, kubeconfig: further.kubeconfig, kubeApiUrl: further.kubeApiUrl }]);
}

export async function teardown(): Promise<void> {
  await stack?.stop();
}
