// What the bridge has seen for the modules of each Kyma and not told yet: the newest view of
// each target object, the newest Manifest version, or "read everything again" (its cluster's
// health changed). Told to the Kyma's workflow in one signal for all its modules; what piles up
// while that signal is in flight goes out together in the next one.
import { kymaWorkflowId, parseKymaKey } from '../api/names';
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
  /** Kyma workflow id → module → what is pending. */
  private readonly pending = new Map<string, Map<string, Pending>>();

  /** The news for module key `moduleId` (`kyma/<ns>/<name>/module/<module>`); returns its Kyma's workflow id. */
  private slot(moduleId: string): { kymaId: string; p: Pending } {
    const { namespace, name, module } = parseKymaKey(moduleId)!;
    const kymaId = kymaWorkflowId(namespace, name);
    let modules = this.pending.get(kymaId);
    if (!modules) this.pending.set(kymaId, (modules = new Map<string, Pending>()));
    let p = modules.get(module!);
    if (!p) modules.set(module!, (p = { views: new Map<string, ObservedObject>(), everything: false }));
    return { kymaId, p };
  }

  view(moduleId: string, observed: ObservedObject): string {
    const { kymaId, p } = this.slot(moduleId);
    p.views.set(observed.key, observed);
    return kymaId;
  }

  seen(moduleId: string, seen: SeenVersions): string {
    const { kymaId, p } = this.slot(moduleId);
    p.seen = mergeSeen(p.seen ?? {}, seen);
    return kymaId;
  }

  everything(moduleId: string): string {
    const { kymaId, p } = this.slot(moduleId);
    p.everything = true;
    return kymaId;
  }

  /** What is pending for the Kyma's modules, taken (nothing pending: empty). */
  take(kymaId: string): ModuleChange[] {
    const modules = this.pending.get(kymaId);
    this.pending.delete(kymaId);
    return [...(modules ?? [])].map(([module, p]) => {
      if (p.everything) return { module };
      const observed = [...p.views.values()];
      return { module, change: { ...(p.seen ? { seen: p.seen } : {}), ...(observed.length ? { observed } : {}) } };
    });
  }
}
