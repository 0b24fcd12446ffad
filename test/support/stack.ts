// Clients for the shared local stack that test/global-setup.ts started.
import net from 'node:net';
import { inject } from 'vitest';
import { KubernetesObjectApi, type KubeConfig, type KubernetesObject } from '@kubernetes/client-node';
import { kubeConfigFromFile } from '../../src/k8s/kubeconfig';
import type { StackInfo } from '../../src/localstack/stack';

/** The stack of this file's pool slot (test/global-setup.ts): its API server is no other running file's. */
export function stackInfo(): StackInfo {
  const stacks = inject('stacks');
  const slot = Number(process.env.VITEST_POOL_ID ?? '1');
  const info = stacks[slot - 1];
  if (!info)
    throw new Error(
      `pool slot ${slot} has no cluster of its own: the stack has ${stacks.length} (vitest.config.ts, maxWorkers)`,
    );
  return info;
}

export function kube(): { kc: KubeConfig; api: KubernetesObjectApi } {
  const kc = kubeConfigFromFile(stackInfo().kubeconfig);
  return { kc, api: KubernetesObjectApi.makeApiClient(kc) };
}

let named = 0;

/**
 * A name unique within the run, so that test files never collide on the shared cluster: the
 * time, a count within the process (a hundred names in one millisecond once drew the same
 * random part twice), and a random part for other processes.
 */
export function uniqueName(prefix: string): string {
  return `${prefix}-${Date.now().toString(36)}${(named++).toString(36)}${Math.random().toString(36).slice(2, 6).padEnd(4, '0')}`;
}

/** The API server's message from a failed request (client-node puts the Status in the body). */
export async function rejection(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (err) {
    const e = err as { body?: unknown; message?: string };
    if (typeof e.body === 'string') {
      try {
        return (JSON.parse(e.body) as { message?: string }).message ?? e.body;
      } catch {
        return e.body;
      }
    }
    return e.message ?? String(err);
  }
  throw new Error('expected the API server to reject the request, but it was accepted');
}

/**
 * Creates a custom resource typed with our API types, which carry timestamps as the JSON
 * strings the API server sends where client-node's models expect Date.
 */
export async function createObject<T extends { apiVersion: string; kind: string }>(
  api: KubernetesObjectApi,
  obj: T,
): Promise<T> {
  const created: KubernetesObject = await api.create(obj);
  return created as unknown as T;
}

/** A loopback port free right now, for a process the test starts (its metrics port, say). */
export async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((r) => server.close(() => r()));
  return port;
}
