// The Kyma's side of a channel's rollout: an installed module that follows a channel keeps its
// version when the channel moved to one its rollout has not admitted yet (first installs, pins
// and channel switches are not held). It remembers what rollouts admitted, tells each rollout
// how the module stands at the admitted version (once per state), joins the rollout a hold
// waits for, and starts one that cannot be found. The module set's records come in as arguments.
import { effectiveChannel } from '../api/shared';
import type { KymaSnapshot } from '../contract/kyma';
import type { Resolution, ResolvedModule } from '../contract/module';
import type { ModuleReport } from '../contract/readiness';
import type { Admission, RolloutEnded } from '../contract/rollout';
import { eventStep, type KymaStep } from './kyma-steps';

/** Whether the Kyma follows the admitted module on the admission's channel (no pin, managed). */
export function followsAdmission(snapshot: KymaSnapshot, a: Admission): boolean {
  const spec = snapshot.modules.find((m) => m.name === a.module);
  return Boolean(
    spec && !spec.version && spec.managed && effectiveChannel(spec.channel, snapshot.channel) === a.channel,
  );
}

export class KymaRolloutGate {
  /** What rollouts admitted: module → the channel and version it may move to. */
  private admitted: Record<string, Admission>;
  /** Modules whose channel carries a version they were not admitted to yet: module → that version. */
  awaitingRollout: Record<string, string> = {};
  /** Modules admitted since the last resolution, to resolve alone. */
  private toResolve = new Set<string>();
  /** The state each admitted module last told its rollout. */
  private toldRollout: Record<string, string> = {};
  /** Module → the version this run told the module's rollout it waits for. */
  private joined: Record<string, string> = {};
  /** Module → the version whose rollout this run started, as none could be found (once). */
  private startedRollout: Record<string, string> = {};
  /** Module → the rollout of the version it waits for ended without reaching it (aborted), and why. */
  private rolloutEndedNote: Record<string, RolloutEnded>;

  constructor(carried?: { admitted?: Record<string, Admission>; rolloutEnded?: Record<string, RolloutEnded> }) {
    this.admitted = carried?.admitted ?? {};
    this.rolloutEndedNote = carried?.rolloutEnded ?? {};
  }

  /** Per module, the rollout of the version it waits for that ended without reaching it. */
  get rolloutEnded(): Readonly<Record<string, RolloutEnded>> {
    return this.rolloutEndedNote;
  }

  /**
   * A rollout lets the module move to the version. `follows`: whether the Kyma, as loaded, would
   * move it now (undefined: not loaded yet, the resolution after the load applies it). Running
   * that version already, the rollout hears how it stands; else the module is resolved alone.
   */
  admit(a: Admission, o: { follows?: boolean; running?: ResolvedModule; report?: ModuleReport }): KymaStep | undefined {
    const { follows, running, report } = o;
    const { seen: _, ...admission } = a;
    this.admitted[a.module] = admission;
    delete this.toldRollout[a.module];
    if (follows === undefined) return undefined;
    // Nothing to move here now (paused Kymas move when they resume): the rollout need not wait.
    if (!follows)
      return {
        kind: 'rolloutReport',
        module: a.module,
        channel: a.channel,
        report: {
          version: a.version,
          state: 'Ready',
          message: 'skipped: this Kyma does not follow the module on this channel now',
        },
      };
    if (running?.version === a.version) return this.tell(a.module, running, report);
    this.toResolve.add(a.module);
    return undefined;
  }

  /** Whether admitted modules wait to be resolved alone. */
  get admittedPending(): boolean {
    return this.toResolve.size > 0;
  }

  /** The admitted modules to resolve alone, taken: their resolution (or a full one) follows. */
  takeAdmitted(): Set<string> {
    const only = this.toResolve;
    this.toResolve = new Set();
    return only;
  }

  /**
   * The gate proper: the resolution to apply (held: the running module) and, when a hold
   * begins, the step that tells the rollout (it takes this Kyma in, or says there is none).
   */
  pass(r: Resolution, running: ResolvedModule | undefined): { resolution: Resolution; told?: KymaStep } {
    delete this.awaitingRollout[r.name];
    const held = this.hold(r, running);
    if (!held) {
      delete this.joined[r.name];
      delete this.startedRollout[r.name];
      return { resolution: r };
    }
    const { channel, version } = held;
    this.awaitingRollout[r.name] = version;
    if (this.rolloutEndedNote[r.name]?.version !== version) delete this.rolloutEndedNote[r.name];
    const resolution = { name: r.name, module: running! };
    if (this.joined[r.name] === version) return { resolution };
    this.joined[r.name] = version;
    return { resolution, told: { kind: 'awaitRollout', module: r.name, channel, version } };
  }

  /** The channel and version a resolved module waits for, if the gate holds it. */
  private hold(r: Resolution, running: ResolvedModule | undefined): { channel: string; version: string } | undefined {
    if (
      !r.module ||
      !running ||
      !running.channel ||
      running.channel !== r.module.channel ||
      running.version === r.module.version
    )
      return undefined;
    const a = this.admitted[r.name];
    if (a?.channel === r.module.channel && a.version === r.module.version) return undefined;
    return { channel: r.module.channel, version: r.module.version };
  }

  /** An admitted upgrade that waits for its maintenance window: the rollout counts it as done (the window's timer moves it). */
  deferred(name: string, version: string): KymaStep | undefined {
    const a = this.admitted[name];
    if (a?.version !== version || this.toldRollout[name] === 'deferred') return undefined;
    this.toldRollout[name] = 'deferred';
    return {
      kind: 'rolloutReport',
      module: name,
      channel: a.channel,
      report: { version, state: 'Ready', message: 'deferred: the upgrade waits for its maintenance window' },
    };
  }

  /** Tells the module's rollout its state at the admitted version, once per state. */
  tell(name: string, running: ResolvedModule | undefined, report: ModuleReport | undefined): KymaStep | undefined {
    const a = this.admitted[name];
    const status = report?.status;
    if (!a || !status || !['Ready', 'Error', 'Warning'].includes(status.state)) return undefined;
    // Ready counts once the admitted version runs; an Error also while it is being installed
    // (a failed upgrade shows the version still installed).
    const at = status.state === 'Error' ? running?.version : status.version;
    if (at !== a.version) return undefined;
    if (this.toldRollout[name] === status.state) return undefined;
    this.toldRollout[name] = status.state;
    return {
      kind: 'rolloutReport',
      module: name,
      channel: a.channel,
      report: { version: a.version, state: status.state, ...(status.message ? { message: status.message } : {}) },
    };
  }

  /** The rollout of a version this Kyma's module waits for (or will) ended without reaching it. */
  ended(n: RolloutEnded): void {
    this.rolloutEndedNote[n.module] = n;
  }

  /**
   * The rollout this Kyma told that it waits could not be found: this Kyma starts it, as the
   * bridge would have (see `KymaState.rolloutMissing`), once per version.
   */
  missing(module: string, channel: string, version: string): KymaStep[] {
    if (this.awaitingRollout[module] !== version) return [];
    delete this.joined[module];
    if (this.startedRollout[module] === version) return [];
    this.startedRollout[module] = version;
    return [
      { kind: 'startRollout', module, channel, version },
      eventStep(
        'Normal',
        'RolloutStarted',
        `module ${module}: version ${version} of channel ${channel} had no rollout; this Kyma started it, and waits for it to admit the version`,
      ),
    ];
  }

  /** The module is gone: its rollout need not wait for it. */
  removed(name: string): KymaStep | undefined {
    const a = this.admitted[name];
    const skipped: KymaStep | undefined =
      a && this.toldRollout[name] === undefined
        ? {
            kind: 'rolloutReport',
            module: name,
            channel: a.channel,
            report: { version: a.version, state: 'Ready', message: 'skipped: the module was removed from this Kyma' },
          }
        : undefined;
    delete this.admitted[name];
    delete this.toldRollout[name];
    delete this.joined[name];
    delete this.startedRollout[name];
    delete this.rolloutEndedNote[name];
    return skipped;
  }

  /** What a continue-as-new carries (nothing when there is nothing to carry). */
  carry(): { admitted?: Record<string, Admission>; rolloutEnded?: Record<string, RolloutEnded> } {
    return {
      ...(Object.keys(this.admitted).length ? { admitted: this.admitted } : {}),
      ...(Object.keys(this.rolloutEndedNote).length ? { rolloutEnded: this.rolloutEndedNote } : {}),
    };
  }
}
