// The decisions of one Kyma, without I/O: load the Kyma, resolve its modules, tell each module
// what is wanted (start, update, remove, release), aggregate their reports into the Kyma's
// status, and wait. Its workflow asks `next()` for a step, runs it and feeds the result back;
// nothing here knows Temporal.
//
// KymaState keeps the Kyma's own course (load, pause, deletion, a Kyma gone or re-created,
// workflows the server ended) and the order of the steps; its parts decide the rest: the module
// set (./kyma-module-set.ts), the rollout gate (./kyma-rollout-gate.ts), the runtime side
// (./kyma-runtime-side.ts) and the status projection (./kyma-status.ts).
import type { KymaEvent } from '../api/events';
import type { KymaStatusInput } from '../api/kyma';
import type { KymaRead, KymaSnapshot, Visibility } from '../contract/kyma';
import type { CatalogSync, RuntimeKymaSync, RuntimeSide } from '../contract/runtime';
import type { Readiness } from '../contract/readiness';
import type { Resolution, ResolvedModule } from '../contract/module';
import type { ModuleReport } from '../contract/readiness';
import type { Admission, RolloutEnded } from '../contract/rollout';
import type { WorkflowEnded } from '../contract/signals';
import type { SeenVersions } from '../contract/seen-versions';
import { KymaModuleSet } from './kyma-module-set';
import { followsAdmission, KymaRolloutGate } from './kyma-rollout-gate';
import { KymaRuntimeSide } from './kyma-runtime-side';
import { KymaTargetCluster, type ClusterSwitch } from './kyma-target-cluster';
import { kymaStatus, moduleEntries, writeStatusStep, type Entry, type KymaStatusView } from './kyma-status';
import { eventStep, type KymaAction, type KymaOutcome, type KymaStep } from './kyma-steps';
import type { Hold } from './maintenance-window';
import { moduleLimited } from './kyma-reconciled';
import { mergeSeen, seenField, seenReached } from './seen-versions';
import type { ReconcileSettings } from '../contract/settings';
import type { CarriedKyma } from '../contract/workflow-inputs';

export type { Dispatch, KymaStep } from './kyma-steps';

/** normal: reconciling; paused: skip-reconciliation; invalid: cannot be reconciled; gone: deleted without our finalizer. */
type Phase = 'normal' | 'paused' | 'invalid' | 'gone';

export { aggregateState } from './kyma-status';

export class KymaState {
  uid = '';
  snapshot?: KymaSnapshot;
  /** Whether the Kyma ever had a kubeconfig Secret: its modules live in a remote cluster. */
  remote = false;
  phase: Phase = 'normal';
  /** Modules running, with what each was last told to install. */
  get desired(): Record<string, ResolvedModule> {
    return this.modules.desired;
  }
  /** Modules that could not be resolved and do not run. */
  get failures(): Record<string, Extract<Resolution, { failure: object }>> {
    return this.modules.failures;
  }
  /** Running modules kept at their installed version until a maintenance window opens. */
  get held(): Record<string, Hold> {
    return this.modules.held;
  }
  get reports(): Record<string, ModuleReport> {
    return this.modules.reports;
  }
  /** Modules told to go, until they are gone. */
  get removing(): Record<string, 'remove' | 'release'> {
    return this.modules.removing;
  }
  /** Modules whose channel carries a version they were not admitted to yet: module → that version. */
  get awaitingRollout(): Record<string, string> {
    return this.gate.awaitingRollout;
  }
  /** The runtime side, as far as it was synced. */
  get runtime(): RuntimeSide {
    return this.runtimeSide.state;
  }
  private needsLoad = true;
  /** The versions the last load was asked to reflect: news of no newer ones needs no load. */
  private loadAsked?: SeenVersions;
  private statusDirty = true;
  private lastStatus = '';
  private finalizing = false;
  /** The Kyma's modules: running, failed, held, reported, leaving (./kyma-module-set.ts). */
  private readonly modules: KymaModuleSet;
  private queue: KymaStep[] = [];
  /** The newest control-plane versions the signals told of (per kind). */
  private seen: SeenVersions = {};
  /** The rollout gate: which upgrades wait for their rollout, and what each rollout hears (./kyma-rollout-gate.ts). */
  private readonly gate: KymaRolloutGate;
  /** The runtime side: its runtime Kyma, catalog, status mirror and clean-up (./kyma-runtime-side.ts). */
  private readonly runtimeSide: KymaRuntimeSide;
  /** The cluster its modules go to, and what switches of its Secret left behind (./kyma-target-cluster.ts). */
  private readonly target: KymaTargetCluster;
  /** Runs whose end this run was told of already (the bridge may tell again after its own restart). */
  private endedRuns: string[] = [];
  /** What this run tells of a run of this Kyma's workflow that the server ended (the condition `Workflow`). */
  private endedNote?: string;
  /** Events told before the Kyma was loaded (its uid unknown): recorded once it is. */
  private owedEvents: KymaEvent[] = [];
  /** The Kyma's label values that mean nothing, as its Warning Events told them. */
  private labelProblems: string[] = [];

  private readonly settings: ReconcileSettings;

  /**
   * `carried`: what the run before handed over (none: a fresh run); `loaded`: the Kyma as the
   * run's first read found it, at least at versions `seen` (none: the first step loads it).
   */
  constructor(o: { settings: ReconcileSettings; carried?: CarriedKyma; loaded?: KymaRead }) {
    const { settings, carried, loaded } = o;
    this.settings = settings;
    this.gate = new KymaRolloutGate(carried);
    this.runtimeSide = new KymaRuntimeSide(carried?.runtime);
    this.modules = new KymaModuleSet(carried);
    this.target = new KymaTargetCluster(carried?.target);
    if (carried) {
      this.uid = carried.uid;
      this.remote = carried.remote;
      this.seen = carried.seen ?? {};
      this.labelProblems = carried.labelProblems ?? [];
    }
    if (!loaded) return;
    this.seen = mergeSeen(this.seen, loaded.seen);
    this.needsLoad = false;
    this.loadAsked = loaded.seen ?? {};
    this.loaded(loaded.snapshot);
  }

  // ---- signals ---------------------------------------------------------------------------

  /** The Kyma, or a template it may use, changed (`versions`: what the bridge saw, when it sent them). */
  changed(versions?: SeenVersions): void {
    this.seen = mergeSeen(this.seen, versions);
    // News the last load reflects already (the start's own, told again by the signal that
    // started the run): no load.
    if (versions && Object.keys(versions).length && this.loadAsked && seenReached(this.loadAsked, versions)) return;
    this.needsLoad = true;
  }

  reported(r: ModuleReport): void {
    if (!this.modules.reported(r)) return; // a late report of a module already gone
    this.statusDirty = true;
    this.push(this.gate.tell(r.status.name, this.desired[r.status.name], r));
  }

  /** A rollout lets the module move to the version: resolve it alone (the others stay as they are). */
  admit(a: Admission): void {
    this.seen = mergeSeen(this.seen, a.seen);
    // Not loaded yet (a fresh run): the resolution after the load applies the admission.
    const follows = this.snapshot
      ? this.phase === 'normal' && !this.snapshot.deleting && followsAdmission(this.snapshot, a)
      : undefined;
    this.push(this.gate.admit(a, { follows, running: this.desired[a.module], report: this.reports[a.module] }));
  }

  /**
   * A run of this Kyma's workflow ended without finishing (the server terminated it, it failed
   * or timed out): told by the bridge, which started this run. This run took over, and says so.
   */
  workflowEnded(e: WorkflowEnded): void {
    if (this.endedRuns.includes(e.runId)) return;
    this.endedRuns = [...this.endedRuns.slice(-19), e.runId];
    const how = e.status === 'TimedOut' ? 'timed out' : `was ${e.status.toLowerCase()}`;
    this.endedNote = `a run of this Kyma's workflow (${e.runId}) ${how} at ${e.at}: ${e.reason}; this run took over`;
    const told: KymaEvent = { type: 'Warning', reason: 'WorkflowEnded', message: this.endedNote };
    // A run started by this news does not know the Kyma's uid yet, which its Event must carry.
    if (this.uid) this.queue.push({ kind: 'event', event: told });
    else this.owedEvents.push(told);
    this.statusDirty = true;
  }

  /** The rollout of a version this Kyma's module waits for (or will) ended without reaching it. */
  rolloutEnded(n: RolloutEnded): void {
    this.gate.ended(n);
    this.statusDirty = true;
  }

  /**
   * The rollout this Kyma told that it waits could not be found: no promotion of the channel
   * started one (nobody followed the module on it then, or no bridge ran). This Kyma starts it,
   * as the bridge would have: it plans by the channel's policy, with this Kyma among those it
   * moves. Once per version: a rollout that still cannot be told is asked again on the next
   * resolution.
   */
  rolloutMissing(module: string, channel: string, version: string): void {
    this.queue.push(...this.gate.missing(module, channel, version));
  }

  /** A ModuleTemplate or ModuleReleaseMeta this Kyma's runtime may see changed: its catalog is synced. */
  catalogChanged(): void {
    this.runtimeSide.catalogChanged();
  }

  removed(name: string): void {
    this.push(this.gate.removed(name));
    this.modules.removed(name);
    this.statusDirty = true;
    // Wanted again meanwhile: start it anew.
    if (
      this.phase === 'normal' &&
      !this.snapshot?.deleting &&
      this.snapshot?.modules.some((m) => m.name === name && m.managed)
    )
      this.needsLoad = true;
  }

  // ---- what to do next -------------------------------------------------------------------

  next(): KymaStep {
    if (this.queue.length === 0) this.plan();
    return this.queue.shift()!;
  }

  awake(): boolean {
    if (this.needsLoad || this.queue.length > 0) return true;
    if (this.gate.admittedPending && this.phase === 'normal') return true;
    if (this.catalogDue()) return true;
    if (this.phase === 'gone') return Object.keys(this.desired).length === 0;
    return this.phase === 'normal' && this.statusDirty;
  }

  woke(o: { drift: boolean }): void {
    if (!o.drift) return;
    this.needsLoad = true;
    this.runtimeSide.drifted();
  }

  // ---- results ---------------------------------------------------------------------------

  loaded(snapshot: KymaSnapshot | null): void {
    if (!snapshot) return this.gone();
    if (this.uid && snapshot.uid !== this.uid) {
      this.queue.push({ kind: 'restart' });
      return;
    }
    this.uid = snapshot.uid;
    for (const e of this.owedEvents.splice(0)) this.queue.push({ kind: 'event', event: e });
    this.warnLabels(snapshot.labelProblems ?? []);
    const wasDeleting = this.snapshot?.deleting ?? false;
    this.snapshot = moduleLimited(snapshot, this.settings.maxModulesPerKyma);
    if (this.snapshot.invalid) {
      this.phase = 'invalid';
      this.statusDirty = true;
      if (snapshot.deleting && snapshot.finalized) this.queue.push({ kind: 'removeFinalizer' }, { kind: 'end' });
      return;
    }
    if (snapshot.deleting && this.remote && !snapshot.remote) return this.letGoWithoutTarget();
    if (this.target.cleared(snapshot.oldClustersCleared)) this.statusDirty = true;
    this.push(this.target.loaded(snapshot, { remote: this.remote }));
    this.remote ||= snapshot.remote;
    if (snapshot.paused && !snapshot.deleting) {
      // skip-reconciliation: wait for the next change of the Kyma, no timer (deletion still goes ahead).
      this.phase = 'paused';
      return;
    }
    this.phase = 'normal';
    this.follow(snapshot, { wasDeleting });
  }

  /**
   * The target cluster's Secret is gone while the Kyma is deleted: nothing can be removed there.
   * Say so, end the modules, and let the Kyma go rather than hang forever.
   */
  private letGoWithoutTarget(): void {
    this.queue.push(
      eventStep(
        'Warning',
        'TargetClusterGone',
        'the kubeconfig Secret of this Kyma is gone, so its modules cannot be removed from the target cluster; dropping the finalizer',
      ),
      { kind: 'cancelModules', names: Object.keys(this.desired) },
      { kind: 'removeFinalizer' },
      { kind: 'end' },
    );
  }

  /**
   * A Kyma loaded in the normal phase (its load added our finalizer): its deletion, and where its
   * modules' spec comes from (the runtime's, or the control plane's); `wasDeleting`: the load
   * before saw it deleted.
   */
  private follow(snapshot: KymaSnapshot, o: { wasDeleting: boolean }): void {
    if (snapshot.deleting && !o.wasDeleting)
      this.queue.push(eventStep('Normal', 'Deleting', 'the Kyma is being deleted: removing all its modules'));
    if (snapshot.deleting) this.resolved([], 0);
    else if (snapshot.remote) this.queue.push(this.runtimeSide.sync(snapshot));
    // Its Secret went: the modules keep following the runtime's spec as last read (they show the missing Secret themselves).
    else if (this.runtimeSide.hasRuntimeKyma)
      this.runtimeSynced({
        failure: {
          reason: 'InvalidKubeconfig',
          message: 'the kubeconfig Secret of this Kyma is gone, so its runtime cannot be read',
        },
      });
    else this.queue.push({ kind: 'resolve', snapshot, ...seenField(this.seen) });
    if (snapshot.deleting) this.runtimeSide.retryCleanup();
  }

  /**
   * What the runtime sync found (./kyma-runtime-side.ts): the modules follow the runtime's spec
   * or the control plane's. Then the resolution; the catalog (when due) after it, while the
   * modules install (`plan`).
   */
  runtimeSynced(result: RuntimeKymaSync | { failure: Readiness }): void {
    if (!this.snapshot) return;
    const { snapshot, steps, rewrite } = this.runtimeSide.synced(result, this.snapshot);
    if (rewrite) this.lastStatus = '';
    this.snapshot = snapshot;
    this.queue.push(...steps);
    this.statusDirty = true;
    this.queue.push({ kind: 'resolve', snapshot, ...seenField(this.seen) });
  }

  /** The Secret names another cluster now, and the modules were told: `modules` may have objects in the one before. */
  switched(s: ClusterSwitch, modules: string[]): void {
    this.queue.push({
      kind: 'event',
      event: this.target.switched(s, modules, { runtime: this.runtimeSide.hasRuntimeKyma }),
    });
    this.runtimeSide.drifted();
    this.statusDirty = true;
  }

  /** Whether a catalog sync is due now (never while the Kyma is being deleted: its catalog goes with the clean-up). */
  private catalogDue(): boolean {
    return this.runtimeSide.catalogDue && this.phase === 'normal' && !this.snapshot?.deleting;
  }

  /** What the catalog sync did, or why it could not (tried again on the next change or the drift timer). */
  catalogSynced(result: CatalogSync | { failure: Readiness }, visibility: Visibility): void {
    if (this.runtimeSide.catalogSynced(result, visibility)) this.statusDirty = true;
  }

  /** The runtime's status could not be written: no more is tried until a sync gets through. */
  runtimeStatusFailed(failure: Readiness): void {
    this.runtimeSide.statusFailed(failure);
    this.statusDirty = true;
  }

  /** An action ended (at workflow time `now`): its result, as each step takes it. */
  done(step: KymaAction, o: KymaOutcome, now: number): void {
    switch (o.kind) {
      case 'load':
        return this.loaded(o.value);
      case 'resolve':
        return this.resolved(o.value, now, step.kind === 'resolve' ? step.only : undefined);
      case 'syncRuntime':
        return this.runtimeSynced(o.value);
      case 'syncCatalog':
        if (step.kind === 'syncCatalog') this.catalogSynced(o.value, step.visibility);
        return;
      case 'cleanRuntime':
        return this.runtimeCleaned(o.failure);
      case 'awaitRollout':
        if (o.missing && step.kind === 'awaitRollout') this.rolloutMissing(step.module, step.channel, step.version);
        return;
    }
  }

  /** Whether the runtime's clean-up went (else the Kyma waits, showing why, and tries again). */
  runtimeCleaned(failure?: Readiness): void {
    if (failure)
      this.queue.push(
        eventStep(
          'Warning',
          'RuntimeCleanupFailed',
          `removing the runtime Kyma, catalog and CRDs from the managed cluster: ${failure.message}; ` +
            'trying again on the next change or the drift timer',
        ),
      );
    this.runtimeSide.cleaned(failure);
    this.statusDirty = true;
  }

  /**
   * `now`: the workflow's time, against which a held upgrade's maintenance window is checked;
   * `only`: the modules resolved (the others keep their resolution); all of the spec when absent.
   */
  resolved(resolutions: Resolution[], now: number, only?: string[]): void {
    // A runtime that could not be synced is tried again after the install backoff.
    const deleting = this.snapshot?.deleting ?? false;
    if (!only) this.runtimeSide.resolved(now, { deleting, backoffMs: this.settings.installRetryMs });
    const spec = deleting ? [] : (this.snapshot?.modules ?? []);
    const pass = this.modules.beginResolution(spec, this.uid, now, only);
    for (const resolution of resolutions) {
      // The gate may keep the running module; the module set applies what it lets through.
      const { resolution: r, told } = this.gate.pass(resolution, this.desired[resolution.name]);
      this.push(told);
      const { event, deferred } = this.modules.apply(pass, r);
      this.push(event);
      if (deferred) this.push(this.gate.deferred(r.name, deferred));
    }
    this.push(this.modules.endResolution(pass));
    this.statusDirty = true;
  }

  /** What a continue-as-new carries. */
  carry(): CarriedKyma {
    const { admitted, rolloutEnded } = this.gate.carry();
    return {
      uid: this.uid,
      desired: this.desired,
      reports: this.reports,
      removing: this.removing,
      remote: this.remote,
      ...seenField(this.seen),
      ...(admitted ? { admitted } : {}),
      runtime: this.runtimeSide.state,
      ...(rolloutEnded ? { rolloutEnded } : {}),
      ...(this.labelProblems.length ? { labelProblems: this.labelProblems } : {}),
      ...this.target.carry(),
    };
  }

  /**
   * What the run for a re-created Kyma (another uid, same name) carries: the modules still
   * running, so that it tells those it wants its uid, and removes the others.
   */
  carryToRecreated(): CarriedKyma {
    const carried = { uid: '', desired: this.desired, reports: {}, removing: this.removing, remote: false };
    return { ...carried, ...this.target.carry() };
  }

  /** A label value that means nothing is told by a Warning Event once (and again should it come back after a fix). */
  private warnLabels(problems: string[]): void {
    for (const p of problems)
      if (!this.labelProblems.includes(p)) this.queue.push(eventStep('Warning', 'InvalidLabelValue', p));
    this.labelProblems = problems;
  }

  // ---- planning --------------------------------------------------------------------------

  /** Queues a step one of the parts asked for, if any. */
  private push(step: KymaStep | undefined): void {
    if (step) this.queue.push(step);
  }

  private plan(): void {
    if (this.needsLoad) {
      this.needsLoad = false;
      // A full resolution follows the load: it takes in what rollouts admitted.
      this.gate.takeAdmitted();
      this.loadAsked = { ...this.seen };
      this.queue.push({ kind: 'load', ...seenField(this.seen) });
      return;
    }
    if (this.gate.admittedPending) {
      const only = this.gate.takeAdmitted();
      // Being deleted (or paused, say) meanwhile: the admission waits in `admitted` for the next full resolution.
      if (this.phase === 'normal' && this.snapshot && !this.snapshot.deleting) {
        this.queue.push({
          kind: 'resolve',
          snapshot: { ...this.snapshot, modules: this.snapshot.modules.filter((m) => only.has(m.name)) },
          only: [...only],
          ...seenField(this.seen),
        });
        return;
      }
    }
    switch (this.phase) {
      case 'gone':
        this.queue.push(Object.keys(this.desired).length === 0 ? { kind: 'end' } : { kind: 'wait' });
        return;
      case 'paused':
        this.queue.push({ kind: 'wait' });
        return;
      case 'invalid':
        this.writeStatus();
        this.queue.push({ kind: 'wait' });
        return;
      case 'normal':
        if (this.snapshot?.deleting && Object.keys(this.desired).length === 0) {
          const cleanup = this.runtimeSide.cleanup(this.settings.driftIntervalMs);
          if (cleanup) {
            // The modules are gone; the runtime Kyma, catalog and CRDs go before the finalizer
            // (after a failure: a wait for the next change or the drift timer).
            this.writeStatus();
            this.queue.push(cleanup);
            return;
          }
          // Every module is gone: the finalizer goes and this workflow ends.
          this.finalizing = true;
          this.writeStatus();
          this.queue.push(this.target.deletedEvent(), { kind: 'removeFinalizer' }, { kind: 'end' });
          return;
        }
        // The catalog after the resolution (the modules install meanwhile), and the status after
        // the catalog, so that it shows a sync that failed.
        if (this.catalogDue()) return void this.queue.push(this.runtimeSide.syncCatalog(this.snapshot!.visibility));
        this.writeStatus();
        this.queue.push({ kind: 'wait', driftMs: this.settings.driftIntervalMs, ...this.wakeAt() });
    }
  }

  /** Deleted without our finalizer: release every module (its objects keep running) and end. */
  private gone(): void {
    this.phase = 'gone';
    this.push(this.modules.releaseAll());
  }

  /** The earliest time a held upgrade may move, if any. */
  private wakeAt(): { wakeAt?: number } {
    const times = Object.values(this.held).flatMap((h) => (h.until === undefined ? [] : [h.until]));
    if (this.runtimeSide.retryAt !== undefined) times.push(this.runtimeSide.retryAt);
    return times.length ? { wakeAt: Math.min(...times) } : {};
  }

  private writeStatus(): void {
    if (!this.statusDirty && !this.finalizing) return;
    this.statusDirty = false;
    const status = this.status();
    const key = JSON.stringify(status);
    if (key === this.lastStatus) return;
    this.lastStatus = key;
    this.queue.push(writeStatusStep(status, this.snapshot?.channel, this.runtimeSide.mirrors));
  }

  /** Each module's entry in .status.modules, with the reason behind it. */
  entries(): Entry[] {
    return moduleEntries(this.statusView());
  }

  /** The status the Kyma should have now. */
  status(): KymaStatusInput {
    return kymaStatus(this.statusView());
  }

  private statusView(): KymaStatusView {
    return {
      snapshot: this.snapshot,
      invalid: this.phase === 'invalid',
      modules: this.modules,
      awaitingRollout: this.gate.awaitingRollout,
      rolloutEnded: this.gate.rolloutEnded,
      runtime: this.runtimeSide.condition({ remote: this.snapshot?.remote ?? false }),
      runtimeProblem: this.runtimeSide.state.problem,
      targetCluster: this.target.condition(),
      endedNote: this.endedNote,
      finalizing: this.finalizing,
    };
  }
}
