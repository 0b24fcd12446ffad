// A sample module manager that acts like a real operator on its CR's status: on a new or
// changed resource it reports Processing, then the state the resource asks for in
// `spec.simulateState` (Ready unless told otherwise) with `spec.simulateMessage`, and
// `spec.simulateHealth` as `status.health` (a field of its own, for a ModuleTemplate's
// customStateCheck). kwok pods run no code, so this process stands in for the managers of the
// sample modules.
import type { KubeObject } from '../api/shared';
import { Informer } from '../k8s/informer';
import type { KubeClient } from '../k8s/rest-client';

interface SampleCr extends KubeObject {
  spec?: { simulateState?: string; simulateMessage?: string; simulateHealth?: string };
  status?: { state?: string; message?: string; observedGeneration?: number; health?: string | null };
}

export interface SampleManagerOptions {
  client: KubeClient;
  kinds: { apiVersion: string; kind: string }[];
  /** Time spent in Processing before the final state, as a reconcile would take. */
  processingMs?: number;
}

/** The final status a CR asks for: the state in `spec.simulateState` (Ready unless told otherwise), its message and health. */
function wantedStatus(cr: SampleCr): { state: string; message: string; health: string | null } {
  const state = cr.spec?.simulateState ?? 'Ready';
  const message = cr.spec?.simulateMessage ?? (state === 'Ready' ? 'reconciled' : `simulated ${state}`);
  return { state, message, health: cr.spec?.simulateHealth ?? null };
}

/** Whether the CR's status shows `want` already. */
function shows(cr: SampleCr, want: Required<NonNullable<SampleCr['status']>>): boolean {
  return (
    cr.status?.observedGeneration === want.observedGeneration &&
    cr.status.state === want.state &&
    cr.status.message === want.message &&
    (cr.status.health ?? null) === want.health
  );
}

export class SampleManager {
  private readonly informers: Informer[] = [];
  private readonly timers = new Set<NodeJS.Timeout>();

  constructor(private readonly o: SampleManagerOptions) {}

  /** Starts watching; a kind whose CRD is not installed yet is picked up once it is. */
  start(): void {
    for (const { apiVersion, kind } of this.o.kinds) this.watch(apiVersion, kind);
  }

  /** Manages one more kind. */
  watch(apiVersion: string, kind: string): void {
    const inf = new Informer(this.o.client, {
      apiVersion,
      kind,
      relistMs: 60_000,
      onEvent: (type, obj) => {
        if (type !== 'DELETED') this.reconcile(obj);
      },
    });
    this.informers.push(inf);
    void inf.start();
  }

  stop(): void {
    for (const i of this.informers) i.stop();
    for (const t of this.timers) clearTimeout(t);
  }

  private reconcile(cr: SampleCr): void {
    const generation = cr.metadata.generation ?? 0;
    const { state: want, message, health } = wantedStatus(cr);
    if (shows(cr, { state: want, message, observedGeneration: generation, health })) return;
    if (cr.status?.observedGeneration !== generation && cr.status?.state !== 'Processing') {
      void this.setStatus(cr, {
        state: 'Processing',
        message: 'reconciling',
        observedGeneration: cr.status?.observedGeneration,
      });
    }
    const t = setTimeout(() => {
      this.timers.delete(t);
      void this.setStatus(cr, { state: want, message, observedGeneration: generation, health });
    }, this.o.processingMs ?? 200);
    this.timers.add(t);
  }

  private async setStatus(cr: SampleCr, status: SampleCr['status']): Promise<void> {
    try {
      await this.o.client.mergePatch(
        cr.apiVersion,
        cr.kind,
        cr.metadata.name,
        cr.metadata.namespace,
        { status },
        'status',
      );
    } catch {
      // Deleted meanwhile, or a conflict: the next event reconciles again.
    }
  }
}
