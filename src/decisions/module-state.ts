// The decisions of one module of a Kyma, without I/O: what to do next, given what is wanted,
// what is installed and what was observed. The Kyma's workflow asks `next()` for a step, runs it
// (an activity, or a wait its module pool keeps) and feeds the outcome back (`done`); nothing
// here knows Temporal. Run: install when the desired version or template changed (or on the drift
// timer, or after a failure), check readiness, publish the report when it changed, wait. Its
// parts: what the watches told (module-watch-views.ts), the manager's timeout and the look at its
// pods (module-manager-timeout.ts), the report (module-report.ts), and the removal and release in
// order (module-removal.ts).
import { lt } from 'semver';
import type { DefaultCrRef, FetchedModule, RenderedRef } from '../contract/artifacts';
import type { KymaRef } from '../contract/kyma';
import type {
  Blockers,
  DeletedObjects,
  DesiredModule,
  Installed,
  InstallResult,
  ResolvedModule,
} from '../contract/module';
import type { ModuleReport, Readiness, ReadinessCheck } from '../contract/readiness';
import type { ReconcileSettings } from '../contract/settings';
import type { ResourceChange } from '../contract/signals';
import type { CarriedModule } from '../contract/workflow-inputs';
import { InstallUnderWay } from './install-under-way';
import { compactInstall, uncompactInstall } from './module-carry';
import { ManagerTimeout } from './module-manager-timeout';
import { ModuleRemoval, type RemovalBasis } from './module-removal';
import { leftAloneWarning, ModuleReporter, type ReportBasis } from './module-report';
import { moduleEvent, type Mode, type ModuleOutcome, type ModuleStep, type StepSink } from './module-steps';
import { watchedObjects, WatchViews, type WatchedObjects } from './module-watch-views';

/** A module as its Kyma's workflow starts it: afresh, or from what a run before carried. */
export interface ModuleStateOptions {
  kyma: KymaRef;
  /** The uid of the Kyma it belongs to (a re-created Kyma's modules adopt the new one). */
  uid: string;
  module: ResolvedModule;
  settings: ReconcileSettings;
  carried?: CarriedModule;
}

/** The default CR a module manages: its template's, under CreateAndDelete only. */
export function managedDefaultCr(
  module: Pick<ResolvedModule, 'customResourcePolicy'>,
  fetched: FetchedModule | undefined,
): DefaultCrRef | undefined {
  return module.customResourcePolicy === 'CreateAndDelete' ? fetched?.defaultCr : undefined;
}

/** What was known when a cycle began: a difference wakes the wait that ends the cycle. */
interface Mark {
  pokes: number;
  desired: ResolvedModule;
  failure?: Readiness;
  mode: Mode;
  uid: string;
}

export class ModuleState {
  readonly kyma: KymaRef;
  uid: string;
  desired: ResolvedModule;
  /** The module could not be resolved any more: it shows this; what is installed stays. */
  failure?: Readiness;
  installed?: Installed;
  /** A version whose install failed after it rendered (its objects may be there in part): a removal deletes them too. */
  attempted?: Installed;
  mode: Mode;
  paused = false;
  /** Failed cycles in a row (the retry backoff grows with them). */
  failedCycles = 0;
  private pokes = 0;
  private readonly views: WatchViews;
  private readonly timeout: ManagerTimeout;
  private readonly reporter: ModuleReporter;
  private readonly removal: ModuleRemoval;
  private queue: ModuleStep[] = [];
  private mark?: Mark;
  private forceApply = false;
  /** This cycle applied the module already (a missing manager is then not re-applied again). */
  private applied = false;
  private cycleFailed: 'install' | 'check' | undefined;
  private pausedWait = false;
  /** An install under way: the module it installs (what is wanted may have moved on meanwhile), the news meanwhile. */
  private readonly install = new InstallUnderWay();
  /** Where the parts queue their steps and reports. */
  private readonly sink: StepSink = {
    push: (step) => this.queue.push(step),
    publish: (r) => this.publish(r),
  };

  private readonly settings: ReconcileSettings;

  constructor(input: ModuleStateOptions) {
    const carried = input.carried;
    this.settings = input.settings;
    this.kyma = input.kyma;
    this.uid = input.uid;
    this.desired = input.module;
    this.installed = carried?.installed && uncompactInstall(carried.installed);
    this.attempted = carried?.attempted && uncompactInstall(carried.attempted);
    this.failure = carried?.failure;
    this.mode = carried?.mode ?? 'run';
    this.paused = carried?.paused ?? false;
    this.views = new WatchViews(carried);
    this.timeout = new ManagerTimeout(input.settings, carried);
    this.removal = new ModuleRemoval({
      name: input.module.name,
      driftMs: input.settings.driftIntervalMs,
      blockedBefore: carried?.blockedBefore,
    });
    // The report the run before published last, rebuilt: not published again unless it changes.
    const readiness = carried?.readiness;
    this.reporter = new ModuleReporter(readiness && { uid: this.uid, readiness, basis: this.reportBasis() });
  }

  // ---- signals ---------------------------------------------------------------------------

  /** What the Kyma wants now. A removal under way stops: the module is wanted again. */
  want(d: DesiredModule): void {
    this.uid = d.uid;
    if (d.module) {
      // Once remote, always remote: a vanished Secret must not redirect us to the control plane.
      this.desired = this.desired.remote && !d.module.remote ? { ...d.module, remote: true } : d.module;
      this.failure = undefined;
    } else {
      this.failure = d.failure;
    }
    if (this.mode === 'remove') {
      // Whatever the removal deleted already is applied again.
      this.switchMode('run');
      this.forceApply = true;
    }
  }

  /** Something of the module changed in its cluster (`change.observed`: the objects as seen), or its Manifest's pause label flipped (`change.seen`). */
  poke(change?: ResourceChange): void {
    this.pokes++;
    this.install.add(change);
    this.views.changed(change, this.watched(), { installed: this.installed !== undefined });
  }

  /** The objects of this module the watches report. */
  private watched(): WatchedObjects {
    return watchedObjects(this.installed, this.managedCr());
  }

  /**
   * The Kyma's Secret names another cluster now: what was seen of the old one is forgotten, and a
   * running module is applied there at once (its install looks at each object before its first
   * apply in that cluster). Whatever it has installed stays in the old one.
   */
  clusterSwitched(): void {
    this.poke();
    this.views.clusterSwitched();
    if (this.mode === 'run') this.forceApply = true;
  }

  /** Whether anything of it may be in its cluster: an install went through, or one failed part-way. */
  hasObjects(): boolean {
    return this.installed !== undefined || this.attempted !== undefined;
  }

  remove(): void {
    if (this.mode !== 'run') return;
    this.switchMode('remove');
    this.removal.beginRemoval();
  }

  /** Release the objects (managed: false, or the Kyma is gone) and end. */
  releaseObjects(): void {
    if (this.mode === 'release') return;
    this.switchMode('release');
    this.removal.beginRelease();
  }

  /**
   * What was planned for the old mode is dropped (a removal's next deletion must not run once
   * the module is wanted again), and the wait under way ends.
   */
  private switchMode(mode: Mode): void {
    this.mode = mode;
    this.queue = [];
    this.mark = undefined;
    this.pausedWait = false;
  }

  // ---- what to do next -------------------------------------------------------------------

  next(): ModuleStep {
    if (this.queue.length === 0) {
      this.markNow();
      if (this.mode === 'remove') this.removal.planRemoval(this.removalBasis(), this.sink);
      else if (this.mode === 'release') this.removal.planRelease(this.removalBasis(), this.sink);
      else this.planCycle();
    }
    const step = this.queue.shift()!;
    if (step.kind === 'install') this.install.begin(step.module);
    return step;
  }

  /** Whether anything happened since the current cycle began that the wait should end for. */
  awake(): boolean {
    const m = this.mark;
    if (!m) return true;
    return (
      m.pokes !== this.pokes ||
      m.desired !== this.desired ||
      m.failure !== this.failure ||
      m.mode !== this.mode ||
      m.uid !== this.uid
    );
  }

  /** The wait ended; `drift`: because the drift timer fired; `deadline`: because the manager's was due. */
  woke(o: { drift: boolean; deadline?: boolean }): void {
    this.mark = undefined;
    // The drift timer reads everything from the cluster again.
    if (o.drift) this.views.forget();
    if (this.mode !== 'run') return;
    this.timeout.woke(o);
    if (this.pausedWait) {
      this.pausedWait = false;
      this.queue.push({ kind: 'checkPaused', ...this.views.seenField() });
      return;
    }
    // On the drift timer re-apply (idempotent) so that drift is repaired; after a failed install, retry it.
    if (o.drift || this.cycleFailed === 'install') this.forceApply = true;
  }

  // ---- results ---------------------------------------------------------------------------

  /** An action ended (at workflow time `now`): its result, or its failure, as each step takes it. */
  done(o: ModuleOutcome, now: number): void {
    if ('failure' in o) return this.failed(o);
    switch (o.kind) {
      case 'install':
        return this.installedModule(this.install.module ?? this.desired, o.value, now);
      case 'checkReadiness':
        return this.observed(o.value, now);
      case 'checkPaused':
        return this.pausedIs({ paused: o.value });
      case 'findBlockers':
        return this.blockers(o.value);
      case 'deleteDefaultCr':
        return this.defaultCrDeleted(o.value);
      case 'deleteObjects':
        return this.objectsDeleted(o.value);
      case 'releaseObjects':
        return this.objectsReleased();
      case 'deleteManifest':
        return this.manifestDeleted();
    }
  }

  private failed(o: Extract<ModuleOutcome, { failure: Readiness }>): void {
    if (o.kind === 'install') this.installFailed(o.failure, o.attempt);
    else if (o.kind === 'checkReadiness') this.checkFailed(o.failure);
    else if (o.kind === 'checkPaused') this.pauseCheckFailed(o.failure);
    else this.cleanupFailed(o.failure);
  }

  /**
   * The install went through. `result.check`: the install checked readiness itself right after (at workflow
   * time `now`), which stands for the check that would come next, and for news it read past.
   */
  installedModule(module: ResolvedModule, result: InstallResult, now?: number): void {
    const newsRead = this.install.end(result.check?.read);
    // Recorded whatever the mode now: a removal must know what is there.
    this.installed = {
      version: module.version,
      templateGeneration: module.template.generation,
      fetched: result.fetched,
      rendered: result.rendered,
      ...(result.leftAlone?.length ? { leftAlone: result.leftAlone } : {}),
      ...(result.cluster ? { cluster: result.cluster } : {}),
    };
    this.attempted = undefined;
    this.views.installed(this.watched(), result.managerVersion);
    this.applied = true;
    if (this.mode !== 'run') return;
    if (result.check && now !== undefined) {
      this.timeout.checkedByInstall();
      this.observed(result.check, now); // what it read joins the views; news sent meanwhile, if newer, stays
      if (newsRead && this.mark) this.mark = { ...this.mark, pokes: this.pokes };
    } else this.queue.push(this.readinessStep(this.installed));
  }

  /**
   * The install failed; `attempt`: what it was installing, once it had rendered it (its objects
   * may be there in part). Recorded whatever the mode now: a removal must know what may be there.
   */
  installFailed(f: Readiness, attempt?: Installed): void {
    this.install.end();
    if (attempt) this.attempted = attempt;
    if (this.mode !== 'run') return;
    this.cycleFailed = 'install';
    this.settle(f);
  }

  observed(r: ReadinessCheck, now: number): void {
    if (this.mode !== 'run') return;
    this.views.see(r.read ?? [], this.watched(), { installed: this.installed !== undefined });
    if (r.reason === 'Paused') {
      this.paused = true;
      return;
    }
    // Something of ours vanished (deleted by hand): put it back at once, unless we just did.
    if (
      !this.applied &&
      (r.reason === 'ManagerMissing' || r.reason === 'ResourceMissing') &&
      !this.timeout.missingTooLong(r, now)
    ) {
      this.forceApply = true;
      return;
    }
    const { readiness, recheckInMs } = this.timeout.assess(r, now);
    this.settle(leftAloneWarning(readiness, this.installed), recheckInMs);
  }

  checkFailed(f: Readiness): void {
    if (this.mode !== 'run') return;
    this.cycleFailed = 'check';
    this.settle(f);
  }

  pausedIs(o: { paused: boolean }): void {
    this.paused = o.paused;
  }

  /** Whether the Manifest is still paused is unknown: show why, and look again on the backoff, still paused. */
  pauseCheckFailed(f: Readiness): void {
    if (this.mode !== 'run') return;
    this.cycleFailed = 'check';
    this.publish(f);
    this.failedCycles++;
    this.pausedWait = true;
    this.queue.push({ kind: 'wait', retryMs: this.retryDelayMs() });
  }

  blockers(b: Blockers): void {
    if (this.mode === 'remove') this.removal.blockers(b, this.removalBasis(), this.sink);
  }

  /** The default CR's delete was sent; `finalizers` are what it still waits for (null: gone). */
  defaultCrDeleted(finalizers: string[] | null): void {
    if (this.mode === 'remove') this.removal.defaultCrDeleted(finalizers, this.removalBasis(), this.sink);
  }

  /** The module's objects were deleted (`done`: all of them; `left`: what was there before the module). */
  objectsDeleted(o: DeletedObjects): void {
    if (this.mode === 'remove') this.removal.objectsDeleted(o, this.sink);
  }

  objectsReleased(): void {
    if (this.mode === 'release') this.removal.objectsReleased();
  }

  /** The Manifest is gone: the end of a removal or release. */
  manifestDeleted(): void {
    this.removal.manifestDeleted(this.mode, this.sink);
  }

  /** A removal or release step failed: show it, and start over after the next change. */
  cleanupFailed(f: Readiness): void {
    if (this.mode === 'run') return;
    const shown = this.removal.failed(this.mode, f);
    if (!shown) return;
    this.queue = [];
    this.publish(shown);
    this.queue.push({ kind: 'wait', driftMs: this.settings.driftIntervalMs });
  }

  /**
   * What a continue-as-new carries. What is unset (or false) is left out: a Kyma of a thousand
   * modules carries a thousand of these within Temporal's payload limit. `views`: whether the
   * watches' views of the manager and CR go along (else the next run reads them afresh).
   */
  carry(o: { views: boolean } = { views: true }): CarriedModule {
    return {
      mode: this.mode,
      ...(this.installed ? { installed: compactInstall(this.installed) } : {}),
      ...(this.failure ? { failure: this.failure } : {}),
      ...(this.paused ? { paused: true } : {}),
      ...this.timeout.carry(),
      ...(this.removal.blockedBefore ? { blockedBefore: true } : {}),
      ...this.views.carry(o),
      ...(this.attempted ? { attempted: compactInstall(this.attempted) } : {}),
      ...(this.reporter.readiness ? { readiness: this.reporter.readiness } : {}),
    };
  }

  /** The default CR this module manages (CreateAndDelete), if its template has one. */
  managedCr(): DefaultCrRef | undefined {
    return managedDefaultCr(this.desired, this.installed?.fetched);
  }

  /** The report published last in this run (none yet: undefined), for the `status` query. */
  current(): ModuleReport | undefined {
    return this.reporter.current();
  }

  // ---- planning --------------------------------------------------------------------------

  /**
   * What is known now, unless a mark is pending already (a cycle that starts over keeps it): taken
   * before any step runs, so that a signal that arrives while they run is not lost.
   */
  private markNow(): void {
    this.mark ??= { pokes: this.pokes, desired: this.desired, failure: this.failure, mode: this.mode, uid: this.uid };
  }

  private planCycle(): void {
    this.applied = false;
    this.cycleFailed = undefined;
    if (this.paused) {
      // skip-reconciliation on the Manifest: wait for a change (no timer), then look again.
      this.pausedWait = true;
      this.queue.push({ kind: 'wait' });
      return;
    }
    if (this.failure) return this.settle(this.failure);
    const downgrade = this.downgrade();
    if (downgrade) return this.settle(downgrade);
    if (this.forceApply || this.needsInstall()) {
      this.forceApply = false;
      this.planInstall();
      return;
    }
    this.queue.push(this.readinessStep(this.installed!));
  }

  /** An install of what is wanted; an upgrade is told first. */
  private planInstall(): void {
    const previous = this.installed;
    const d = this.desired;
    if (previous && previous.version !== d.version) {
      this.publish({ reason: 'Upgrading', message: `upgrading from ${previous.version} to ${d.version}` }, previous);
      this.queue.push(
        moduleEvent(
          'Normal',
          'ModuleUpgrading',
          `module ${d.name}: upgrading from ${previous.version} to ${d.version}`,
        ),
      );
    }
    this.queue.push({ kind: 'install', module: d, ...previousOf(previous) });
  }

  /** What a removal or release goes by. */
  private removalBasis(): RemovalBasis {
    const a = this.attempted;
    const also = this.installed && a && a.rendered.digest !== this.installed.rendered.digest ? a.rendered : undefined;
    return {
      basis: this.installed ?? this.attempted,
      ...(also ? { also } : {}),
      ownsDefaultCr: this.desired.customResourcePolicy === 'CreateAndDelete',
    };
  }

  /** The end of a cycle: a dependency-timeout Event once, the report when it changed, the wait. */
  private settle(r: Readiness, recheckInMs?: number): void {
    const timeoutEvent = this.timeout.timeoutEvent(this.desired.name, r);
    if (timeoutEvent) this.queue.push(timeoutEvent);
    this.publish(r);
    this.failedCycles = this.cycleFailed ? this.failedCycles + 1 : 0;
    // A failed cycle is tried again after a backoff, not only on the next change: a failure
    // under load must not wait for the drift timer.
    this.queue.push({
      kind: 'wait',
      driftMs: this.settings.driftIntervalMs,
      ...(recheckInMs !== undefined ? { deadlineMs: recheckInMs } : {}),
      ...(this.cycleFailed ? { retryMs: this.retryDelayMs() } : {}),
    });
  }

  private readinessStep(installed: Installed): ModuleStep {
    const cr = this.managedCr();
    const inspectPods = this.timeout.inspectPods(installed.rendered.manager);
    return {
      kind: 'checkReadiness',
      ...(installed.rendered.manager ? { manager: installed.rendered.manager } : {}),
      ...(cr ? { cr } : {}),
      ...this.views.forCheck(this.watched(), { inspectPods }),
      ...(inspectPods ? { inspectPods } : {}),
    };
  }

  /** What a report is made of besides the readiness: the report shows `installed`'s version. */
  private reportBasis(installed = this.installed): ReportBasis {
    const managedCr = this.managedCr();
    return {
      kyma: this.kyma,
      desired: this.desired,
      ...(installed ? { installed } : {}),
      ...(managedCr ? { managedCr } : {}),
    };
  }

  /** Queues the report's publication, unless it is what was published last. */
  private publish(r: Readiness, installed = this.installed): void {
    const step = this.reporter.publish(this.uid, r, this.reportBasis(installed));
    if (step) this.queue.push(step);
  }

  /** A desired version lower than the installed one is refused: modules never downgrade. */
  private downgrade(): Readiness | undefined {
    const i = this.installed;
    if (!i || !lt(this.desired.version, i.version)) return undefined;
    return {
      reason: 'DowngradeRefused',
      message: `version ${this.desired.version} is lower than the installed ${i.version}; keeping ${i.version} (modules are never downgraded)`,
    };
  }

  private needsInstall(): boolean {
    const i = this.installed;
    return !i || i.version !== this.desired.version || i.templateGeneration !== this.desired.template.generation;
  }

  /** Backoff after a failed cycle: the first delay (30 s by default), doubling, at most the drift interval. */
  private retryDelayMs(): number {
    const first = this.settings.installRetryMs;
    return Math.min(this.settings.driftIntervalMs, first * 2 ** Math.min(10, Math.max(0, this.failedCycles - 1)));
  }
}

/** What an install goes on from: the version installed before, and the cluster it was applied to. */
function previousOf(i: Installed | undefined): { previous?: RenderedRef; previousCluster?: string } {
  return i ? { previous: i.rendered, ...(i.cluster ? { previousCluster: i.cluster } : {}) } : {};
}
