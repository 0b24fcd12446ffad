// Installs this project's CustomResourceDefinitions (deploy/crds) and waits until the API
// server serves them.
import { readdir, readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import type { V1CustomResourceDefinition } from '@kubernetes/client-node';
import { parseAllDocuments } from 'yaml';
import type { KubeObject } from '../api/shared';
import type { KubeClient } from './rest-client';
import { KubeApiError } from './request-errors';

export const CRD_DIR = fileURLToPath(new URL('../../deploy/crds/', import.meta.url));

export type Crd = V1CustomResourceDefinition & KubeObject;

export async function loadCrds(dir = CRD_DIR): Promise<Crd[]> {
  const files = (await readdir(dir)).filter((f) => f.endsWith('.yaml')).sort();
  const docs = await Promise.all(files.map(async (f) => parseAllDocuments(await readFile(path.join(dir, f), 'utf8'))));
  return docs
    .flat()
    .map((d) => d.toJS() as Crd)
    .filter((d) => d?.kind === 'CustomResourceDefinition');
}

/** Whether the API server serves a CRD's kinds (its condition Established is True). */
export function established(
  crd: { status?: { conditions?: { type: string; status: string }[] } } | undefined,
): boolean {
  return crd?.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True') ?? false;
}

export async function installCrds(client: KubeClient, timeoutMs = 30_000): Promise<string[]> {
  const crds = await loadCrds();
  await applyCrds(client, crds, timeoutMs);
  return crds.map((c) => c.metadata.name);
}

/** Applies CRDs and waits until each is Established (an apply answer that says so is not waited for). */
export async function applyCrds(client: KubeClient, crds: readonly Crd[], timeoutMs = 30_000): Promise<void> {
  const applied = await Promise.all(crds.map((crd) => client.apply(crd)));
  await waitEstablished(client, applied, {
    timeoutMs,
    timedOut: (pending) => new Error(`CRD ${pending.join(', ')} was not Established within ${timeoutMs / 1000}s`),
  });
}

type AppliedCrd = KubeObject & { status?: { conditions?: { type: string; status: string }[] } };

export interface EstablishedWait {
  timeoutMs: number;
  /** The failure once the time is up, for the CRDs not Established yet. */
  timedOut: (pending: string[]) => Error;
  /** Called each second while some are not Established yet (the worker heartbeats). */
  onWait?: () => void;
}

/**
 * Waits until the applied CRDs are Established: before that, the API server refuses objects of
 * their kinds. Each is watched from the resourceVersion its apply answered, so the change is seen
 * as the API server makes it, for one request (reading it every 200 ms took two or three); an
 * identity that may not watch CRDs reads them. An answer that says Established is not waited for.
 */
export async function waitEstablished(client: KubeClient, applied: AppliedCrd[], w: EstablishedWait): Promise<void> {
  const pending = applied.filter((crd) => !established(crd));
  if (!pending.length) return;
  const deadline = Date.now() + w.timeoutMs;
  const ticking = w.onWait ? setInterval(w.onWait, 1000) : undefined;
  try {
    const done = await Promise.all(pending.map((crd) => establishedBefore(client, crd, deadline)));
    const left = pending.filter((_, i) => !done[i]).map((crd) => crd.metadata.name);
    if (left.length) throw w.timedOut(left);
  } finally {
    clearInterval(ticking);
  }
}

/** Whether the CRD is Established before `deadline`: watched, or read every 200 ms where watching is refused. */
async function establishedBefore(client: KubeClient, crd: AppliedCrd, deadline: number): Promise<boolean> {
  try {
    return await watchedEstablished(client, crd, deadline);
  } catch (err) {
    if (!(err instanceof KubeApiError && err.status === 403)) throw err;
  }
  for (;;) {
    if (established(await client.get<AppliedCrd>(crd.apiVersion, crd.kind, crd.metadata.name))) return true;
    if (Date.now() > deadline) return false;
    await new Promise((r) => setTimeout(r, 200));
  }
}

/**
 * Watches one CRD (by name) from `resourceVersion` until it is Established or `deadline` passes.
 * A watch the server ends early goes on from the last version seen; one whose version is too old
 * (an ERROR event: 410 Gone) starts again without one, which opens with the CRD as it is. A CRD
 * deleted meanwhile is not Established, whatever its last state said.
 */
async function watchedEstablished(client: KubeClient, crd: AppliedCrd, deadline: number): Promise<boolean> {
  const path = await client.clusterWidePath(crd.apiVersion, crd.kind);
  let from = crd.metadata.resourceVersion;
  for (;;) {
    const left = deadline - Date.now();
    if (left <= 0) return false;
    const stop = new AbortController();
    const timer = setTimeout(() => stop.abort(), left);
    let seen = false;
    const query = {
      fieldSelector: `metadata.name=${crd.metadata.name}`,
      timeoutSeconds: String(Math.ceil(left / 1000)),
      ...(from ? { resourceVersion: from } : {}),
    };
    try {
      await client.watch(
        path,
        query,
        (e) => {
          if (e.type === 'ERROR') {
            from = undefined;
            return stop.abort();
          }
          from = e.object.metadata.resourceVersion ?? from;
          if ((e.type === 'ADDED' || e.type === 'MODIFIED') && established(e.object as AppliedCrd)) {
            seen = true;
            stop.abort();
          }
        },
        stop.signal,
      );
    } finally {
      clearTimeout(timer);
    }
    if (seen) return true;
    // Ended early (too old a version, a server or proxy that cuts watches short): not at once again.
    await new Promise((r) => setTimeout(r, 200));
  }
}
