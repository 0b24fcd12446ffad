// Apply: server-side apply with a fixed field manager and force. CRDs first, then wait
// until they are Established (bounded by the configured timeout, then a typed failure);
// namespaces next; then everything else. Re-applying the same objects changes nothing.
import { createHash } from 'node:crypto';
import { ApplicationFailure, heartbeat } from '@temporalio/activity';
import { KubeApiError, type KubeClient, type KubeObject } from '../k8s/rest-client';
import type { TargetClusters } from '../k8s/target-cluster';
import { targetClient } from './target';
import type { ApplyResult, KymaRef, RenderedRef } from '../workflows/types';
import type { BlobCache } from './blob-cache';
import { loadRendered } from './render';

const CONCURRENCY = 8;

export async function inBatches<T>(items: T[], fn: (item: T) => Promise<unknown>, concurrency = CONCURRENCY): Promise<void> {
  let next = 0;
  const workers = Array.from({ length: Math.min(concurrency, items.length) }, async () => {
    while (next < items.length) await fn(items[next++]!);
  });
  await Promise.all(workers);
}

function describe(o: KubeObject): string {
  return `${o.kind} ${o.metadata.namespace ? `${o.metadata.namespace}/` : ''}${o.metadata.name}`;
}

/** API errors a retry cannot fix become non-retryable failures with the server's message. */
export function applyFailure(err: unknown, o: KubeObject): Error {
  if (err instanceof KubeApiError && err.status >= 400 && err.status < 500 && err.status !== 429 && err.status !== 409) {
    const reason = err.status === 404 ? 'KindNotServed' : 'ApplyRejected';
    return ApplicationFailure.nonRetryable(`applying ${describe(o)}: ${err.message}`, reason);
  }
  return err instanceof Error ? err : new Error(String(err));
}

async function applyOne(client: KubeClient, o: KubeObject): Promise<void> {
  try {
    if (o.metadata.namespace && !(await client.isNamespaced(o.apiVersion, o.kind))) {
      o = { ...o, metadata: { ...o.metadata, namespace: undefined } };
    }
    await client.apply(o);
  } catch (err) {
    throw applyFailure(err, o);
  }
}

async function waitEstablished(client: KubeClient, names: string[], timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let pending = names;
  while (pending.length) {
    const states = await Promise.all(pending.map(async (n) => {
      const crd = await client.get<KubeObject & { status?: { conditions?: { type: string; status: string }[] } }>('apiextensions.k8s.io/v1', 'CustomResourceDefinition', n);
      return crd?.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True') ? undefined : n;
    }));
    pending = states.filter((n): n is string => n !== undefined);
    if (!pending.length) return;
    if (Date.now() > deadline) {
      throw ApplicationFailure.nonRetryable(`CRD not established within ${Math.round(timeoutMs / 1000)}s: ${pending.join(', ')}`, 'CrdNotEstablished');
    }
    heartbeat();
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** Creates a namespace the module's objects need but do not define (such as kyma-system). */
export async function ensureNamespace(client: KubeClient, name: string): Promise<void> {
  if (await client.get('v1', 'Namespace', name)) return;
  await client.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } }).catch((err: unknown) => {
    if (!(err instanceof KubeApiError && err.status === 409)) throw err;
  });
}

/** How long a CRD this worker applied (and saw Established) on a cluster is not applied again. */
const CRD_REAPPLY_MS = 60_000;

export function applyActivities(targets: TargetClusters, cache: BlobCache) {
  /**
   * CRDs applied per cluster client, by name and content: the Kymas sharing a cluster share its
   * CRDs, and a thousand of them applying the same CRD at once is what makes API servers time
   * out. Within a minute the same CRD is not applied again; a changed one is.
   */
  const crdsApplied = new WeakMap<KubeClient, Map<string, number>>();
  return {
    async applyRendered(ref: KymaRef, rendered: RenderedRef, crdTimeoutMs: number): Promise<ApplyResult> {
      const client = await targetClient(targets, ref);
      const objects = await loadRendered(cache, rendered);
      const crds = objects.filter((o) => o.kind === 'CustomResourceDefinition');
      const namespaces = objects.filter((o) => o.kind === 'Namespace' && o.apiVersion === 'v1');
      const rest = objects.filter((o) => !crds.includes(o) && !namespaces.includes(o));
      const step = (o: KubeObject) => {
        heartbeat();
        return applyOne(client, o);
      };
      const applied = crdsApplied.get(client) ?? new Map<string, number>();
      crdsApplied.set(client, applied);
      const keyOf = (o: KubeObject) => `${o.metadata.name}@${createHash('sha256').update(JSON.stringify(o)).digest('hex')}`;
      const due = crds.filter((o) => (applied.get(keyOf(o)) ?? -Infinity) + CRD_REAPPLY_MS < Date.now());
      await inBatches(due, step);
      await waitEstablished(client, due.map((c) => c.metadata.name), crdTimeoutMs);
      for (const o of due) applied.set(keyOf(o), Date.now());
      await inBatches(namespaces, step);
      const own = new Set(namespaces.map((n) => n.metadata.name));
      const referenced = [...new Set(rest.map((o) => o.metadata.namespace).filter((n): n is string => !!n && !own.has(n)))];
      await inBatches(referenced, (n) => ensureNamespace(client, n));
      await inBatches(rest, step);
      return { applied: objects.length };
    },
  };
}
