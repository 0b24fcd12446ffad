// The modules of one Kyma: which run (and what each was told to install), which could not be
// resolved, which are held for a maintenance window, what each reported, and which are on their
// way out. A resolution turns into what to tell the modules (a Dispatch), telling each
// only what changed. The rollout gate's verdict comes in with each resolution (KymaState asks it).
import type { SpecModule } from '../contract/kyma';
import type { DesiredModule, Resolution, ResolvedModule } from '../contract/module';
import type { ModuleReport } from '../contract/readiness';
import type { CarriedKyma } from '../contract/workflow-inputs';
import { eventStep, type Dispatch, type KymaStep } from './kyma-steps';
import { holdForMaintenance, type Hold } from './maintenance-window';
import { templateLabelEvents } from './label-values';
import { moduleNameMismatchEvent } from './resolution';

/** One resolution of the Kyma's modules as it goes: the spec it resolves, and what to tell so far. */
export interface ModuleResolution {
  readonly uid: string;
  /** The workflow's time, against which a held upgrade's maintenance window is checked. */
  readonly now: number;
  readonly wanted: ReadonlySet<string>;
  readonly unmanaged: ReadonlySet<string>;
  readonly mandatory: ReadonlySet<string>;
  readonly dispatch: Dispatch;
}

export class KymaModuleSet {
  /** Modules running, with what each was last told to install. */
  desired: Record<string, ResolvedModule> = {};
  /** Modules that could not be resolved and do not run. */
  failures: Record<string, Extract<Resolution, { failure: object }>> = {};
  /** Running modules kept at their installed version until a maintenance window opens. */
  held: Record<string, Hold> = {};
  reports: Record<string, ModuleReport> = {};
  /** Modules told to go, until they are gone. */
  removing: Record<string, 'remove' | 'release'> = {};
  /** Leaving modules that have reported since they were told to go. */
  readonly leavingReported = new Set<string>();
  /** What each module was last told (module or failure), as JSON. */
  private sent: Record<string, string> = {};
  /** Mandatory modules that could not be resolved, with the message their Event gave. */
  private mandatoryFailed: Record<string, string> = {};

  constructor(carried?: Pick<CarriedKyma, 'uid' | 'desired' | 'reports' | 'removing'>) {
    if (!carried) return;
    this.desired = carried.desired;
    this.reports = carried.reports ?? {};
    this.removing = carried.removing;
    for (const [n, module] of Object.entries(this.desired)) this.sent[n] = sentKey({ uid: carried.uid, module });
  }

  /** A module's report; false for a late one of a module already gone. */
  reported(r: ModuleReport): boolean {
    const name = r.status.name;
    if (!this.desired[name]) return false;
    this.reports[name] = r;
    if (this.removing[name]) this.leavingReported.add(name);
    return true;
  }

  /** The module is gone (removed or released). */
  removed(name: string): void {
    delete this.desired[name];
    delete this.reports[name];
    delete this.removing[name];
    delete this.sent[name];
    this.leavingReported.delete(name);
  }

  /**
   * A resolution begins (`only`: of these modules, the others keep theirs; all of `spec` when
   * absent): the failures and holds of the modules resolved are forgotten.
   */
  beginResolution(spec: SpecModule[], uid: string, now: number, only?: string[]): ModuleResolution {
    if (only) {
      for (const n of only) {
        delete this.failures[n];
        delete this.held[n];
      }
    } else {
      this.failures = {};
      this.held = {};
    }
    return {
      uid,
      now,
      wanted: new Set(spec.map((m) => m.name)),
      unmanaged: new Set(spec.filter((m) => !m.managed).map((m) => m.name)),
      mandatory: new Set(spec.filter((m) => m.mandatory).map((m) => m.name)),
      dispatch: { start: [], update: [], remove: [], release: [], events: [] },
    };
  }

  /**
   * One module's resolution, as the rollout gate let it through. Returns the Event of a
   * mandatory module that cannot be resolved (once per message), and the version of an upgrade
   * held for its maintenance window (`deferred`).
   */
  apply(pass: ModuleResolution, r: Resolution): { event?: KymaStep; deferred?: string } {
    const event = pass.mandatory.has(r.name) ? this.mandatoryResolved(r) : undefined;
    const out = event ? { event } : {};
    if (pass.unmanaged.has(r.name) || this.removing[r.name] === 'release') return out;
    const d = pass.dispatch;
    const running = this.desired[r.name] !== undefined;
    if (r.failure && r.failure.reason === 'ModuleNotVisible') {
      this.hide(d, r, { running });
      return out;
    }
    const rewanted = this.removing[r.name] === 'remove';
    if (rewanted) {
      delete this.removing[r.name];
      this.leavingReported.delete(r.name);
    }
    if (r.failure) {
      if (!running) this.failures[r.name] = r;
      // The module stays installed and shows why it cannot be resolved any more.
      else this.tell(d, r.name, { uid: pass.uid, failure: r.failure }, { always: rewanted });
      return out;
    }
    const { module, hold } = holdForMaintenance(r, this.desired[r.name], pass.now);
    const mismatch = moduleNameMismatchEvent(module, this.desired[r.name]);
    if (mismatch) d.events.push(mismatch);
    d.events.push(...templateLabelEvents(module, this.desired[r.name]));
    if (hold) this.held[r.name] = hold;
    if (!running) {
      d.start.push(module);
      d.events.push({
        type: 'Normal',
        reason: 'ModuleInstalling',
        message: `installing module ${r.name} ${module.version} (channel ${module.channel || 'pinned'})`,
      });
      this.sent[r.name] = sentKey({ uid: pass.uid, module });
    } else {
      this.tell(d, r.name, { uid: pass.uid, module }, { always: rewanted });
    }
    this.desired[r.name] = module;
    return hold ? { ...out, deferred: r.module.version } : out;
  }

  /**
   * The resolution ends: running modules no longer wanted go, unmanaged ones are released. The
   * dispatch step, when there is anything to tell the modules.
   */
  endResolution(pass: ModuleResolution): KymaStep | undefined {
    const d = pass.dispatch;
    for (const n of Object.keys(this.desired)) {
      if (this.removing[n]) continue;
      if (!pass.wanted.has(n)) {
        this.removing[n] = 'remove';
        d.remove.push(n);
        d.events.push({ type: 'Normal', reason: 'ModuleRemoving', message: `removing module ${n}` });
      } else if (pass.unmanaged.has(n)) {
        this.removing[n] = 'release';
        d.release.push(n);
        d.events.push({
          type: 'Normal',
          reason: 'ModuleUnmanaged',
          message: `module ${n} is no longer managed: its objects keep running, unlabelled`,
        });
      }
    }
    return d.start.length + d.update.length + d.remove.length + d.release.length > 0
      ? { kind: 'dispatch', ...d }
      : undefined;
  }

  /** The Kyma was deleted without our finalizer: every module is released (its objects keep running). */
  releaseAll(): KymaStep | undefined {
    const names = Object.keys(this.desired).filter((n) => this.removing[n] !== 'release');
    if (names.length === 0) return undefined;
    for (const n of names) this.removing[n] = 'release';
    return {
      kind: 'dispatch',
      start: [],
      update: [],
      remove: [],
      release: names,
      events: [
        {
          type: 'Warning',
          reason: 'KymaGone',
          message: `the Kyma was deleted without its finalizer; releasing its modules (${names.join(', ')}): their objects keep running, unlabelled`,
        },
      ],
    };
  }

  /**
   * A mandatory module has no status entry: that it cannot be resolved (its template missing,
   * say) is told by a Warning Event, once per message.
   */
  private mandatoryResolved(r: Resolution): KymaStep | undefined {
    if (!r.failure) {
      delete this.mandatoryFailed[r.name];
      return undefined;
    }
    if (this.mandatoryFailed[r.name] === r.failure.message) return undefined;
    this.mandatoryFailed[r.name] = r.failure.message;
    return eventStep('Warning', 'MandatoryModuleFailed', `mandatory module ${r.name}: ${r.failure.message}`);
  }

  /**
   * A module whose template this Kyma may not see (beta, internal): shown as such; a running one
   * is removed, as upstream deletes its Manifest.
   */
  private hide(d: Dispatch, r: Extract<Resolution, { failure: object }>, o: { running: boolean }): void {
    this.failures[r.name] = r;
    if (!o.running || this.removing[r.name]) return;
    this.removing[r.name] = 'remove';
    d.remove.push(r.name);
    d.events.push({
      type: 'Normal',
      reason: 'ModuleRemoving',
      message: `removing module ${r.name}: ${r.failure.message}`,
    });
  }

  /** Tells a running module what is wanted, when that changed (`o.always`: its removal was called off). */
  private tell(d: Dispatch, name: string, desired: DesiredModule, o: { always: boolean }): void {
    const key = sentKey(desired);
    if (!o.always && this.sent[name] === key) return;
    this.sent[name] = key;
    d.update.push({ name, desired });
  }
}

/** What a module was told, as compared with what to tell it next: the uid counts too. */
function sentKey(d: DesiredModule): string {
  return JSON.stringify([d.uid, d.module ?? { failure: d.failure }]);
}
