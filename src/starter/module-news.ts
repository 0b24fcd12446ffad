// What the bridge has seen for the modules of each Kyma and not told yet: the newest view of
// each target object, the newest Manifest version, or "read everything again" (its cluster's
// health changed). Told to the Kyma's workflow in one signal for all its modules; what piles up
// while that signal is in flight goes out together in the next one. News that can wait (a
// manager's rollout or a CR's message that cannot change its module's state: ./target-watches.ts)
// goes along with the next that cannot, or when it is released, or on its own once it has waited
// `waitMs`.
import { kymaWorkflowId } from '../api/names';
import type { KymaRef, ModuleRef } from '../contract/kyma';
import type { ModuleChange } from '../contract/signals';
import type { ObservedObject } from '../contract/readiness';
import type { SeenVersions } from '../contract/seen-versions';
import { mergeSeen } from '../decisions/seen-versions';

interface Pending {
  views: Map<string, ObservedObject>;
  seen?: SeenVersions;
  everything: boolean;
}

export class ModuleNews {
  /** Kyma (by its workflow id) → module → what is pending. */
  private readonly pending = new Map<string, Map<string, Pending>>();
  /** Kymas (by workflow id) whose pending news can all wait: when it is told at the latest. */
  private readonly waiting = new Map<string, NodeJS.Timeout>();
  private stopped = false;

  /** `waitMs`: how long news that can wait waits at most (0: it does not). */
  constructor(private readonly waitMs: number) {}

  /** The news for module `m`. */
  private slot({ kyma, module }: ModuleRef): Pending {
    const kymaId = kymaWorkflowId(kyma.namespace, kyma.name);
    let modules = this.pending.get(kymaId);
    if (!modules) this.pending.set(kymaId, (modules = new Map<string, Pending>()));
    let p = modules.get(module);
    if (!p) modules.set(module, (p = { views: new Map<string, ObservedObject>(), everything: false }));
    return p;
  }

  view(m: ModuleRef, observed: ObservedObject): void {
    this.slot(m).views.set(observed.key, observed);
  }

  seen(m: ModuleRef, seen: SeenVersions): void {
    const p = this.slot(m);
    p.seen = mergeSeen(p.seen ?? {}, seen);
  }

  everything(m: ModuleRef): void {
    this.slot(m).everything = true;
  }

  /**
   * Has the news just noted for Kyma `kyma` told: `tell` at once if it cannot wait, else when
   * it has waited `waitMs`, unless news that cannot wait comes first and takes it along.
   */
  due(kyma: KymaRef, canWait: boolean, tell: () => void): void {
    const kymaId = kymaWorkflowId(kyma.namespace, kyma.name);
    const timer = this.waiting.get(kymaId);
    if (this.stopped) return;
    if (canWait && this.waitMs > 0) {
      if (timer) return;
      const told = () => (this.waiting.delete(kymaId), tell());
      this.waiting.set(kymaId, setTimeout(told, this.waitMs).unref());
      return;
    }
    clearTimeout(timer);
    this.waiting.delete(kymaId);
    tell();
  }

  /** Tells what waits for Kyma `kyma` now, if anything does. */
  release(kyma: KymaRef, tell: () => void): void {
    if (this.waiting.has(kymaWorkflowId(kyma.namespace, kyma.name))) this.due(kyma, false, tell);
  }

  /** Stops waiting: what waits, or is noted later, is not told (the bridge stops). */
  stop(): void {
    this.stopped = true;
    for (const timer of this.waiting.values()) clearTimeout(timer);
    this.waiting.clear();
  }

  /** What is pending for the Kyma's modules, taken (nothing pending: empty); what waited goes with it. */
  take(kyma: KymaRef): ModuleChange[] {
    const kymaId = kymaWorkflowId(kyma.namespace, kyma.name);
    const modules = this.pending.get(kymaId);
    this.pending.delete(kymaId);
    clearTimeout(this.waiting.get(kymaId));
    this.waiting.delete(kymaId);
    return [...(modules ?? [])].map(([module, p]) => {
      if (p.everything) return { module };
      const observed = [...p.views.values()];
      return { module, change: { ...(p.seen ? { seen: p.seen } : {}), ...(observed.length ? { observed } : {}) } };
    });
  }
}
