// The modules a Kyma's workflow runs, in one loop: a state each (ModuleState), and which of
// their steps run now. No coroutine, timer or promise per module, whatever their number: a
// module is ready (it has steps to take), queued (its action waits for room), running an action,
// or waiting until news wakes it, its deadline or retry is due, or the shared drift timer fires.
// At most `maxRunning` activities run at once, taken in order; checks that read no target
// cluster (and the Manifest's own steps) run together in one local activity, which does not
// count. The steps that need no activity (a report, an Event, a wait) are taken at once.
import type { KymaRef } from '../contract/kyma';
import type { DesiredModule, ResolvedModule } from '../contract/module';
import type { ModuleReport } from '../contract/readiness';
import type { ReconcileSettings } from '../contract/settings';
import type { ResourceChange } from '../contract/signals';
import type { RunningModule } from '../contract/workflow-inputs';
import { ModuleState } from './module-state';
import type { ModuleAction, ModuleOutcome, ModuleStep } from './module-steps';
import { checkReadsTarget } from './module-watch-views';
import type { Outbox } from './outbox';

/** An action a module starts: an activity of its own, or (`local`) part of the next local activity. */
export interface StartedAction {
  module: string;
  action: ModuleAction;
  local: boolean;
  /** The module lives in a remote cluster (its Kyma has a kubeconfig Secret). */
  remote: boolean;
}

/** What the modules tell the Kyma. */
export interface ModuleListener {
  reported(r: ModuleReport): void;
  removed(name: string): void;
}

export interface ModulePoolOptions {
  kyma: KymaRef;
  settings: ReconcileSettings;
  /** Activities under way at once, at most. */
  maxRunning: number;
  outbox: Outbox;
  listener: ModuleListener;
}

type Phase = 'ready' | 'queued' | 'running' | 'waiting';

interface Entry {
  st: ModuleState;
  phase: Phase;
  /** The action queued or running. */
  action?: StartedAction;
  /** The wait under way ends when the drift timer fires. */
  drift: boolean;
  /** Workflow times its deadline and retry fall due (a due time stays until a wait takes it, or one without it cancels it). */
  deadlineAt?: number;
  retryAt?: number;
  /** Drift firings it has taken. */
  driftTaken: number;
}

/** Up to this many modules, a continue-as-new carries the watches' views of their objects. */
export const VIEWS_CARRIED = 100;

/** Whether an action runs in the shared local activity: it reads and writes only the control plane (or the views it carries). */
export function runsLocally(step: ModuleAction): boolean {
  return (
    step.kind === 'checkPaused' ||
    step.kind === 'deleteManifest' ||
    (step.kind === 'checkReadiness' && !checkReadsTarget(step))
  );
}

export class ModulePool {
  private readonly entries = new Map<string, Entry>();
  /** Modules with steps to take, in the order they became ready. */
  private readonly ready = new Set<string>();
  /** Modules whose action waits for room, in order. */
  private queued: string[] = [];
  private running = 0;
  private runningLocally = 0;
  private driftFirings = 0;
  /** A waiting module asked for the drift timer (its interval), since the loop last looked. */
  private driftArm?: number;
  /** Waiting modules that news (or the drift timer) woke: they wake at the next `take`. */
  private readonly woken = new Set<string>();
  /** The earliest due time of a waiting module, while it is known (undefined: none). */
  private due?: { at: number | undefined };

  constructor(private readonly o: ModulePoolOptions) {}

  has(name: string): boolean {
    return this.entries.has(name);
  }

  names(): string[] {
    return [...this.entries.keys()];
  }

  /** Runs a module (from its start, or from the state a run before carried). */
  start(name: string, m: RunningModule & { module: ResolvedModule }): void {
    const st = new ModuleState({
      kyma: this.o.kyma,
      uid: m.uid,
      module: m.module,
      settings: this.o.settings,
      ...(m.carried ? { carried: m.carried } : {}),
    });
    this.entries.set(name, { st, phase: 'ready', drift: false, driftTaken: this.driftFirings });
    this.ready.add(name);
  }

  want(name: string, d: DesiredModule): void {
    this.touch(name, (st) => st.want(d));
  }

  remove(name: string): void {
    this.touch(name, (st) => st.remove());
  }

  release(name: string): void {
    this.touch(name, (st) => st.releaseObjects());
  }

  /** News of the module's objects in its cluster (none: everything is read again). */
  poke(name: string, change?: ResourceChange): void {
    this.touch(name, (st) => st.poke(change));
  }

  /**
   * The Kyma's Secret names another cluster now: every module is told (a running one is applied
   * there at once). Returns the modules that may have objects in the old cluster, by name.
   */
  clusterSwitched(): string[] {
    const there = [...this.entries].filter(([, e]) => e.st.hasObjects()).map(([name]) => name);
    for (const name of this.names()) this.touch(name, (st) => st.clusterSwitched());
    return there.sort();
  }

  /** Stops running a module (its cluster cannot be reached for good): no step of it runs any more. */
  drop(name: string): void {
    const e = this.entries.get(name);
    if (!e) return;
    this.entries.delete(name);
    this.ready.delete(name);
    this.woken.delete(name);
    this.queued = this.queued.filter((n) => n !== name);
    this.due = undefined;
    this.o.outbox.forget(name);
  }

  /** The drift timer fired: every module waiting on it wakes (the others take it at their next wait). */
  driftFired(): void {
    this.driftFirings++;
    for (const [name, e] of this.entries) if (e.phase === 'waiting' && e.drift) this.woken.add(name);
  }

  /** The drift interval to arm the timer with, when a module asked since the last call. */
  takeDriftArm(): number | undefined {
    const ms = this.driftArm;
    this.driftArm = undefined;
    return ms;
  }

  /** The earliest time a waiting module's deadline or retry falls due. */
  nextDueAt(): number | undefined {
    if (this.due) return this.due.at;
    let at: number | undefined;
    for (const e of this.entries.values()) {
      if (e.phase !== 'waiting') continue;
      for (const t of [e.deadlineAt, e.retryAt]) if (t !== undefined && (at === undefined || t < at)) at = t;
    }
    this.due = { at };
    return at;
  }

  /**
   * The actions to start now (workflow time `now`): modules woken (by news, the drift timer, or
   * a due time) take their wake-up; then those queued for room start, then each ready module
   * takes its steps until it starts an action or waits.
   */
  take(now: number): StartedAction[] {
    const dueAt = this.nextDueAt();
    if (dueAt !== undefined && dueAt <= now)
      for (const [name, e] of this.entries) if (e.phase === 'waiting' && isDue(e, now)) this.woken.add(name);
    for (const name of this.woken) {
      const e = this.entries.get(name);
      if (e?.phase === 'waiting') this.wake(name, e, now);
    }
    this.woken.clear();
    const out: StartedAction[] = [];
    while (this.queued.length && this.running < this.o.maxRunning) {
      const e = this.entries.get(this.queued.shift()!)!;
      e.phase = 'running';
      this.running++;
      out.push(e.action!);
    }
    for (const name of [...this.ready]) {
      this.ready.delete(name);
      this.advance(name, now, out);
    }
    return out;
  }

  /** An action ended: the module takes its outcome, and is ready for its next step. */
  done(a: StartedAction, outcome: ModuleOutcome, now: number): void {
    if (a.local) this.runningLocally--;
    else this.running--;
    const e = this.entries.get(a.module);
    if (!e || e.action !== a) return;
    e.action = undefined;
    e.phase = 'ready';
    this.ready.add(a.module);
    e.st.done(outcome, now);
  }

  /** Modules with steps to take (or a wake-up) at the next `take`. */
  hasReady(): boolean {
    return this.ready.size > 0 || this.woken.size > 0;
  }

  /** Nothing to take, nothing under way: every module waits. */
  idle(): boolean {
    return (
      this.ready.size === 0 &&
      this.woken.size === 0 &&
      this.queued.length === 0 &&
      this.running === 0 &&
      this.runningLocally === 0
    );
  }

  /**
   * What a continue-as-new carries. The watches' views of each module's manager and CR go along
   * for up to `VIEWS_CARRIED` modules; a larger Kyma's modules read them afresh at their next
   * check, which keeps what a run carries within Temporal's payload limit (2 MB).
   */
  carry(): Record<string, RunningModule> {
    const views = this.entries.size <= VIEWS_CARRIED;
    return Object.fromEntries(
      [...this.entries].map(([name, { st }]) => [
        name,
        { uid: st.uid, module: st.desired, carried: st.carry({ views }) },
      ]),
    );
  }

  /** The report each module published last in this run, for the `status` query. */
  current(name: string): ModuleReport | undefined {
    return this.entries.get(name)?.st.current();
  }

  private touch(name: string, change: (st: ModuleState) => void): void {
    const e = this.entries.get(name);
    if (!e) return;
    change(e.st);
    if (e.phase === 'waiting' && e.st.awake()) this.woken.add(name);
  }

  private advance(name: string, now: number, out: StartedAction[]): void {
    const e = this.entries.get(name);
    if (!e) return;
    for (;;) {
      const step = e.st.next();
      if (this.tookAtOnce(name, e, step, now)) {
        if (e.phase !== 'ready' || !this.entries.has(name)) return;
        // A wait that ended at once: it goes on here.
        this.ready.delete(name);
        continue;
      }
      const action = step as ModuleAction;
      const a: StartedAction = {
        module: name,
        action,
        local: runsLocally(action),
        remote: e.st.desired.remote === true,
      };
      e.action = a;
      // A report gathered but not written yet would bring the Manifest back.
      if (a.action.kind === 'deleteManifest') this.o.outbox.forget(name);
      if (a.local) {
        e.phase = 'running';
        this.runningLocally++;
        out.push(a);
      } else if (this.running < this.o.maxRunning) {
        e.phase = 'running';
        this.running++;
        out.push(a);
      } else {
        e.phase = 'queued';
        this.queued.push(name);
      }
      return;
    }
  }

  /** Takes a step that needs no activity; false for an action. */
  private tookAtOnce(name: string, e: Entry, step: ModuleStep, now: number): boolean {
    switch (step.kind) {
      case 'publish': {
        const { report, readiness, module, rendered, resource, resourceKind } = step;
        this.o.outbox.manifest(name, {
          uid: e.st.uid,
          module,
          readiness,
          ...(rendered ? { rendered } : {}),
          ...(resource ? { resource } : {}),
          ...(resourceKind ? { resourceKind } : {}),
        });
        this.o.listener.reported(report);
        return true;
      }
      case 'event':
        this.o.outbox.event(step.event);
        return true;
      case 'finish':
        this.entries.delete(name);
        this.due = undefined;
        e.phase = 'waiting';
        this.o.listener.removed(name);
        return true;
      case 'wait':
        this.startWait(name, e, step, now);
        return true;
      default:
        return false;
    }
  }

  private startWait(name: string, e: Entry, step: Extract<ModuleStep, { kind: 'wait' }>, now: number): void {
    // A due time armed before stays (as a running timer would); a wait without it cancels it.
    e.deadlineAt = step.deadlineMs === undefined ? undefined : (e.deadlineAt ?? now + step.deadlineMs);
    e.retryAt = step.retryMs === undefined ? undefined : (e.retryAt ?? now + step.retryMs);
    e.drift = step.driftMs !== undefined;
    e.phase = 'waiting';
    this.due = undefined;
    const driftPending = e.driftTaken < this.driftFirings;
    if (e.drift && !driftPending) this.driftArm = step.driftMs;
    if (e.st.awake() || (e.drift && driftPending) || isDue(e, now)) this.wake(name, e, now);
  }

  /** The wait ends: the module learns whether the drift timer or its deadline ended it. */
  private wake(name: string, e: Entry, now: number): void {
    const deadline = e.deadlineAt !== undefined && e.deadlineAt <= now;
    if (deadline) e.deadlineAt = undefined;
    if (e.retryAt !== undefined && e.retryAt <= now) e.retryAt = undefined;
    const drift = e.drift && e.driftTaken < this.driftFirings;
    if (drift) e.driftTaken = this.driftFirings;
    e.phase = 'ready';
    this.due = undefined;
    this.ready.add(name);
    e.st.woke({ drift, deadline });
  }
}

function isDue(e: Entry, now: number): boolean {
  return (e.deadlineAt !== undefined && e.deadlineAt <= now) || (e.retryAt !== undefined && e.retryAt <= now);
}
