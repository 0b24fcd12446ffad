// Installs this project's CustomResourceDefinitions (deploy/crds) and waits until the API
// server serves them.
import { readdir, readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import type { V1CustomResourceDefinition } from '@kubernetes/client-node';
import { parseAllDocuments } from 'yaml';
import type { KubeObject } from '../api/shared';
import type { KubeClient } from './rest-client';

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

/** Applies CRDs and waits until each is Established (an apply answer that says so is not read again). */
export async function applyCrds(client: KubeClient, crds: readonly Crd[], timeoutMs = 30_000): Promise<void> {
  const applied = await Promise.all(crds.map((crd) => client.apply(crd)));
  const deadline = Date.now() + timeoutMs;
  for (const [i, crd] of crds.entries()) {
    if (established(applied[i])) continue;
    for (;;) {
      const live = await client.get<Crd>(crd.apiVersion, crd.kind, crd.metadata.name);
      if (live && established(live)) break;
      if (Date.now() > deadline)
        throw new Error(`CRD ${crd.metadata.name} was not Established within ${timeoutMs / 1000}s`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}
