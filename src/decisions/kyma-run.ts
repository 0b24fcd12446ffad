// One run of a Kyma's workflow, without I/O: the Kyma's state (KymaState), its modules'
// (ModulePool) and what is gathered to write (Outbox), and which of their steps run now. The
// workflow asks `take(now)` for the work to start, runs each piece (an activity, a local activity,
// a signal) and hands back how it went (`done`); between, it waits until `dirty`, the drift
// timer or the alarm (`alarmAt`). The Kyma takes one step at a time; its modules run beside it,
// a bounded number of activities at once; checks that read no target cluster go together in one
// local activity; Manifests, status and Events go out together in another.
import type { KymaStatusInput } from '../api/kyma';
import type { KymaRead, KymaRef } from '../contract/kyma';
import type { ModuleReport } from '../contract/readiness';
import type { KymaWrites, KymaWritesDone } from '../contract/kyma-writes';
import type { Admission, RolloutEnded } from '../contract/rollout';
import type { ReconcileSettings } from '../contract/settings';
import type { ModuleChange, WorkflowEnded } from '../contract/signals';
import type { SeenVersions } from '../contract/seen-versions';
import type { CarriedKyma, KymaWorkflowInput } from '../contract/workflow-inputs';
import { KymaState, type Dispatch } from './kyma-state';
import type { KymaAction, KymaOutcome, KymaStep } from './kyma-steps';
import { ModulePool, type StartedAction } from './module-pool';
import type { ModuleOutcome } from './module-steps';
import { Outbox } from './outbox';
import type { SearchAttributeValues } from './search-attribute-values';
import { mergeSeen, seenField } from './seen-versions';

/** Local module actions gathered into one local activity, at most. */
export const LOCAL_BATCH = 100;

/** A run's first read: of its Kyma, reflecting what the run before was told of and what its start was. */
export function firstRead(input: KymaWorkflowInput): { kyma: KymaRef; seen?: SeenVersions } {
  return { kyma: input.kyma, ...seenField(mergeSeen(input.carried?.seen ?? {}, input.seen)) };
}

/** A piece of work the workflow starts. */
export type Work =
  | { kind: 'kyma'; action: KymaAction }
  | { kind: 'module'; started: StartedAction }
  /** The installs that start together: one activity, with the runtime's catalog sync when it is due then. */
  | { kind: 'installs'; started: StartedAction[]; catalog?: CatalogAction }
  | { kind: 'modules'; started: StartedAction[] }
  /** `status`: the Kyma's status step (its details and search attributes follow the write). */
  | { kind: 'write'; writes: KymaWrites; at: number; status?: { searchAttributes: SearchAttributeValues } };

/** The Kyma's catalog sync. */
type CatalogAction = Extract<KymaAction, { kind: 'syncCatalog' }>;

/** How the installs that started together went, and the catalog sync that went along. */
export interface InstallsDone {
  modules: ModuleOutcome[];
  /** Present when the catalog sync went along. */
  catalog?: Extract<KymaOutcome, { kind: 'syncCatalog' }>;
}

/** How the run ends: the Kyma is gone for good, or the run continues as new with what it carries. */
export type Stop = { kind: 'end' } | { kind: 'continueAsNew'; carried: CarriedKyma };

/**
 * What Temporal says of the run: its history's length, whether the server suggests a new run,
 * whether the worker deployment version it is pinned to is no longer the current one; and the
 * workflow's time.
 */
export interface HistoryInfo {
  events: number;
  suggested: boolean;
  versionChanged: boolean;
  now: number;
}

/** How often a run asks which worker version is current, at most. */
const VERSION_CHECK_INTERVAL_MS = 60_000;

export interface KymaRunOptions {
  kyma: KymaRef;
  settings: ReconcileSettings;
  carried?: CarriedKyma;
  /** The Kyma as the run's first read found it (`beginKymaRun`); none: the run's first step loads it. */
  loaded?: KymaRead;
  /** Module activities under way at once, at most (the settings' `moduleParallelism` unless given). */
  maxRunning?: number;
  /** When this run started (the workflow's time): it continues as new `settings.maxRunAgeMs` after. */
  runStartedAt: number;
  /** Told each time the run turns dirty: the workflow's wait ends. */
  woken?: () => void;
}

type KymaPhase = 'ready' | 'busy' | 'waiting' | 'stopping';

export class KymaRun {
  private isDirty = true;
  /** When the run last asked which worker version is current (`versionCheckDue`). */
  private versionCheckedAt: number | undefined;
  readonly kyma: KymaState;
  private readonly modules: ModulePool;
  private readonly outbox = new Outbox();
  private phase: KymaPhase = 'ready';
  private kymaWait?: { drift: boolean; wakeAt?: number };
  private kymaDriftTaken = 0;
  private driftFirings = 0;
  private driftArm?: number;
  private stopping?: Extract<KymaStep, { kind: 'restart' | 'end' }>;
  /** Local module actions started, not yet sent. */
  private local: StartedAction[] = [];
  private localInFlight = false;
  private writesInFlight = 0;

  constructor(private readonly o: KymaRunOptions) {
    this.modules = new ModulePool({
      kyma: o.kyma,
      settings: o.settings,
      maxRunning: o.maxRunning ?? o.settings.moduleParallelism,
      outbox: this.outbox,
      listener: {
        reported: (r) => this.kyma.reported(r),
        removed: (name) => this.kyma.removed(name),
      },
    });
    const carried = o.carried;
    // The Kyma's status entry of each module, rebuilt from what the module carried (a run for a
    // re-created Kyma carries none: it starts its status afresh).
    const rebuild = carried?.reports === undefined;
    const reports: Record<string, ModuleReport> = { ...carried?.reports };
    for (const [name, m] of Object.entries(carried?.modules ?? {})) {
      const module = m.module ?? carried?.desired[name];
      if (!module) continue;
      this.modules.start(name, { ...m, module });
      const report = this.modules.current(name);
      if (report && rebuild) reports[name] = report;
    }
    this.kyma = new KymaState({
      settings: o.settings,
      ...(carried ? { carried: { ...carried, reports } } : {}),
      ...(o.loaded ? { loaded: o.loaded } : {}),
    });
  }

  /** Something happened since the last `take`: the workflow's loop wakes (`woken`). */
  get dirty(): boolean {
    return this.isDirty;
  }

  set dirty(value: boolean) {
    this.isDirty = value;
    if (value) this.o.woken?.();
  }

  // ---- news ------------------------------------------------------------------------------

  /** Runs a signal's effect on the states, and wakes the loop. */
  private news<T>(f: () => T): T {
    this.dirty = true;
    return f();
  }

  changed(seen?: SeenVersions): void {
    this.news(() => this.kyma.changed(seen));
  }

  catalogChanged(): void {
    this.news(() => this.kyma.catalogChanged());
  }

  admit(a: Admission): void {
    this.news(() => this.kyma.admit(a));
  }

  rolloutEnded(n: RolloutEnded): void {
    this.news(() => this.kyma.rolloutEnded(n));
  }

  workflowEnded(e: WorkflowEnded): void {
    this.news(() => this.kyma.workflowEnded(e));
  }

  modulesChanged(changes: ModuleChange[]): void {
    this.news(() => {
      for (const { module, change } of changes) this.modules.poke(module, change);
    });
  }

  driftFired(): void {
    this.news(() => {
      this.driftFirings++;
      this.modules.driftFired();
    });
  }

  status(): KymaStatusInput {
    return this.kyma.status();
  }

  // ---- what to start ---------------------------------------------------------------------

  /** The work to start now (workflow time `now`). */
  take(now: number): Work[] {
    this.dirty = false;
    const work: Work[] = [];
    const installs: StartedAction[] = [];
    // What the modules report may wake the Kyma, and what the Kyma tells them may start modules.
    // The modules go first: a status the Kyma writes now shows what they reported now (else a
    // second write would follow it at once).
    do {
      for (const started of this.modules.take(now)) {
        if (started.local) this.local.push(started);
        else if (started.action.kind === 'install') installs.push(started);
        else work.push({ kind: 'module', started });
      }
      this.advanceKyma(now, work);
    } while (this.kymaWakes(now) || this.modules.hasReady());
    if (installs.length) work.push(this.installs(installs, work));
    if (!this.localInFlight && this.local.length) {
      work.push({ kind: 'modules', started: this.local.splice(0, LOCAL_BATCH) });
      this.localInFlight = true;
    }
    // What modules gathered while the Kyma waits goes out alone (else with its next status).
    if (this.writesInFlight === 0 && this.outbox.pending() && (this.kymaIdle() || this.phase === 'stopping'))
      work.push(this.write(now));
    return work;
  }

  /**
   * The installs that start together. A catalog sync the Kyma starts now goes along in their
   * activity (a new Kyma's first installs and its runtime's first catalog): the Kyma waits for
   * both, as it waited for the sync alone, and its status after them shows both.
   */
  private installs(started: StartedAction[], work: Work[]): Work {
    const i = work.findIndex((w) => w.kind === 'kyma' && w.action.kind === 'syncCatalog');
    if (i < 0) return { kind: 'installs', started };
    const [sync] = work.splice(i, 1) as [{ kind: 'kyma'; action: CatalogAction }];
    return { kind: 'installs', started, catalog: sync.action };
  }

  /** A piece of work ended (at workflow time `now`). */
  done(
    w: Work,
    outcome: KymaOutcome | ModuleOutcome | ModuleOutcome[] | InstallsDone | KymaWritesDone | undefined,
    now: number,
  ): void {
    this.dirty = true;
    switch (w.kind) {
      case 'kyma':
        this.phase = 'ready';
        this.kyma.done(w.action, outcome as KymaOutcome, now);
        return;
      case 'module':
        this.modules.done(w.started, outcome as ModuleOutcome, now);
        return;
      case 'installs': {
        const { modules, catalog } = outcome as InstallsDone;
        w.started.forEach((s, i) => this.modules.done(s, modules[i]!, now));
        if (!w.catalog) return;
        this.phase = 'ready';
        this.kyma.done(w.catalog, catalog!, now);
        return;
      }
      case 'modules': {
        this.localInFlight = false;
        const outcomes = outcome as ModuleOutcome[];
        w.started.forEach((s, i) => this.modules.done(s, outcomes[i]!, now));
        return;
      }
      case 'write': {
        this.writesInFlight--;
        if (w.status) this.phase = 'ready';
        const failure = (outcome as KymaWritesDone | undefined)?.runtimeFailure;
        if (failure) this.kyma.runtimeStatusFailed(failure);
        return;
      }
    }
  }

  /**
   * The interval to arm the drift timer with (at workflow time `now`), when someone waiting asked
   * since the last call: cut to end by the run's end, which needs no timer of its own then. Once
   * that end is past (the run waits for work under way to stop), the whole interval: a timer
   * cut to nothing would fire, and a drift cycle start, each time the Kyma waited.
   */
  takeDriftArm(now: number): number | undefined {
    const kyma = this.driftArm;
    this.driftArm = undefined;
    const modules = this.modules.takeDriftArm();
    const ms = kyma ?? modules;
    if (ms === undefined) return undefined;
    const untilEnd = this.endsAt - now;
    return untilEnd > 0 ? Math.min(ms, untilEnd) : ms;
  }

  /** The earliest time a wait falls due (a module's deadline or retry, a held upgrade's window). */
  alarmAt(): number | undefined {
    const kyma = this.phase === 'waiting' ? this.kymaWait?.wakeAt : undefined;
    const modules = this.modules.nextDueAt();
    if (kyma === undefined) return modules;
    return modules === undefined ? kyma : Math.min(kyma, modules);
  }

  /**
   * Whether to ask which worker version is current now: Temporal says the run's version changed
   * (`targetWorkerDeploymentVersionChanged`), but it says so too on every task it starts itself
   * when one completes (seen on server 1.31), changed or not; so the run asks, at most once a
   * minute (the first time a minute after it started: a run that just started on a version
   * rarely finds it replaced, and a new Kyma's first minute is all tasks of its own), and only
   * when it could continue as new at once.
   */
  versionCheckDue(now: number): boolean {
    if (!this.quiet() || !this.kymaIdle() || this.stopping) return false;
    if (now - (this.versionCheckedAt ?? this.o.runStartedAt) < VERSION_CHECK_INTERVAL_MS) return false;
    this.versionCheckedAt = now;
    return true;
  }

  /**
   * When the run is old enough to continue as new (`settings.maxRunAgeMs` after its start): the
   * workflow wakes then, by the drift timer (armed to fire by then) or, in a run that waits idle
   * without one, by a timer of its own (not the alarm: that would be re-armed for it after each
   * of its rings, and cancelled by each earlier one).
   */
  get endsAt(): number {
    return this.o.runStartedAt + this.o.settings.maxRunAgeMs;
  }

  /**
   * How the run ends, once nothing is under way: the Kyma's end or restart for a re-created
   * Kyma, or, with nothing to do, a continue-as-new when its history grew long, its version is
   * no longer the current one or the run is `maxRunAgeMs` old (`history`).
   */
  stop(history: HistoryInfo): Stop | undefined {
    if (!this.quiet()) return undefined;
    if (this.stopping?.kind === 'end') return { kind: 'end' };
    if (this.stopping?.kind === 'restart') return this.carry(this.kyma.carryToRecreated());
    const { maxHistoryEvents } = this.o.settings;
    const due =
      history.suggested ||
      history.versionChanged ||
      history.now >= this.endsAt ||
      (maxHistoryEvents > 0 && history.events >= maxHistoryEvents);
    if (due && this.kymaIdle()) return this.carry(this.kyma.carry());
    return undefined;
  }

  // ---- the Kyma's steps --------------------------------------------------------------------

  private advanceKyma(now: number, work: Work[]): void {
    if (this.phase === 'waiting') this.wakeKyma(now);
    while (this.phase === 'ready') {
      const step = this.kyma.next();
      switch (step.kind) {
        case 'event':
          this.outbox.event(step.event);
          break;
        case 'dispatch':
          this.dispatch(step);
          break;
        case 'switchCluster':
          this.kyma.switched(step, this.modules.clusterSwitched());
          break;
        case 'cancelModules':
          for (const name of step.names) this.modules.drop(name);
          this.phase = 'busy';
          work.push({ kind: 'kyma', action: step });
          break;
        case 'writeStatus':
          this.phase = 'busy';
          work.push(this.write(now, step));
          break;
        case 'wait':
          this.phase = 'waiting';
          this.kymaWait = {
            drift: step.driftMs !== undefined,
            ...(step.wakeAt !== undefined ? { wakeAt: step.wakeAt } : {}),
          };
          if (step.driftMs !== undefined && this.kymaDriftTaken === this.driftFirings) this.driftArm = step.driftMs;
          this.wakeKyma(now);
          break;
        case 'removeFinalizer':
          // What is gathered (the Events of the deletion) goes before the Kyma does: local
          // activities take turns in the order they are started.
          if (this.outbox.pending()) work.push(this.write(now));
          this.phase = 'busy';
          work.push({ kind: 'kyma', action: step });
          break;
        case 'restart':
        case 'end':
          this.phase = 'stopping';
          this.stopping = step;
          break;
        default:
          this.phase = 'busy';
          work.push({ kind: 'kyma', action: step });
      }
    }
  }

  /** Whether the Kyma's wait ends now: on news, the drift timer, or a held upgrade's window opening. */
  private kymaWakes(now: number): boolean {
    const w = this.kymaWait;
    if (this.phase !== 'waiting' || !w) return false;
    const drifted = w.drift && this.kymaDriftTaken < this.driftFirings;
    return this.kyma.awake() || drifted || (w.wakeAt !== undefined && w.wakeAt <= now);
  }

  private wakeKyma(now: number): void {
    if (!this.kymaWakes(now)) return;
    const w = this.kymaWait!;
    const drifted = w.drift && this.kymaDriftTaken < this.driftFirings;
    const windowOpened = w.wakeAt !== undefined && w.wakeAt <= now;
    if (drifted) this.kymaDriftTaken = this.driftFirings;
    this.phase = 'ready';
    this.kymaWait = undefined;
    this.kyma.woke({ drift: drifted || windowOpened });
  }

  /** Tells the modules what the Kyma wants of them. */
  private dispatch(d: Dispatch): void {
    const uid = this.kyma.uid;
    for (const module of d.start) {
      if (this.modules.has(module.name)) this.modules.want(module.name, { uid, module });
      else this.modules.start(module.name, { uid, module });
    }
    for (const u of d.update) this.modules.want(u.name, u.desired);
    for (const n of d.remove) this.modules.remove(n);
    for (const n of d.release) this.modules.release(n);
    for (const e of d.events) this.outbox.event(e);
  }

  /** What is gathered to write, with the Kyma's status step if any. */
  private write(now: number, step?: Extract<KymaStep, { kind: 'writeStatus' }>): Work {
    this.writesInFlight++;
    if (!step) return { kind: 'write', writes: this.outbox.take(), at: now };
    const { status, searchAttributes, mirror } = step;
    return {
      kind: 'write',
      writes: { ...this.outbox.take(status), ...(mirror ? { mirror } : {}) },
      at: now,
      status: { searchAttributes },
    };
  }

  /** The Kyma waits with nothing new. */
  private kymaIdle(): boolean {
    return this.phase === 'waiting' && !this.kyma.awake();
  }

  /** Nothing under way, nothing to write, every module waiting: only news or a timer wakes the run. */
  quiet(): boolean {
    return (
      this.phase !== 'busy' &&
      this.modules.idle() &&
      !this.localInFlight &&
      this.local.length === 0 &&
      this.writesInFlight === 0 &&
      !this.outbox.pending()
    );
  }

  /**
   * What the next run gets: the Kyma's state without its modules' reports (each module carries
   * what its last report said, and the next run rebuilds them), and each module without what the
   * Kyma last told it to install when that is the Kyma's `desired` entry (the same, not twice).
   */
  private carry(kyma: CarriedKyma): Stop {
    const { reports: _, ...rest } = kyma;
    const modules = this.modules.carry();
    for (const [name, m] of Object.entries(modules))
      if (m.module && JSON.stringify(m.module) === JSON.stringify(kyma.desired[name])) delete m.module;
    return { kind: 'continueAsNew', carried: { ...rest, modules } };
  }
}
