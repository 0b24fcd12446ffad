// Waiting until applied CustomResourceDefinitions are Established: before that, the API server
// refuses objects of their kinds.
import type { KubeObject } from '../api/shared';
import { established } from '../k8s/crds';
import type { KubeClient } from '../k8s/rest-client';

type Crd = KubeObject & { status?: { conditions?: { type: string; status: string }[] } };

export interface EstablishedWait {
  timeoutMs: number;
  /** The failure once the time is up, for the CRDs not Established yet. */
  timedOut: (pending: string[]) => Error;
  /** Called at each round of reads that finds some not Established yet (the worker heartbeats). */
  onPoll?: () => void;
}

/** Waits until the CRDs are Established; those whose apply answer said so already are not read again. */
export async function waitEstablished(client: KubeClient, applied: Crd[], w: EstablishedWait): Promise<void> {
  const deadline = Date.now() + w.timeoutMs;
  let pending = applied.filter((crd) => !established(crd)).map((crd) => crd.metadata.name);
  while (pending.length) {
    const states = await Promise.all(
      pending.map(async (n) =>
        established(await client.get<Crd>('apiextensions.k8s.io/v1', 'CustomResourceDefinition', n)) ? undefined : n,
      ),
    );
    pending = states.filter((n): n is string => n !== undefined);
    if (!pending.length) return;
    if (Date.now() > deadline) throw w.timedOut(pending);
    w.onPoll?.();
    await new Promise((r) => setTimeout(r, 200));
  }
}
