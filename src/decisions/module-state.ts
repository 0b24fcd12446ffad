// The decisions of one module of a Kyma, without I/O: what to do next, given what is wanted,
// what is installed and what was observed. The Kyma's workflow asks `next()` for a step, runs it
// (an activity, or a wait its module pool keeps) and feeds the outcome back (`done`); nothing
// here knows Temporal. Run: install when the desired version or template changed (or on the drift
// timer, or after a failure), check readiness, publish the report when it changed, wait.
// Remove: wait while CRs block, delete the default CR and wait until it is gone, delete the
// objects, the Manifest, finish. Release (managed: false, or the Kyma is gone): drop our label
// from the objects, delete the Manifest, finish.
import { lt } from 'semver';
import type { KymaEvent } from '../api/events';
import { manifestName } from '../api/names';
import { idOfRef, objectKey } from '../api/object-id';
import { stateOf } from '../api/reasons';
import { API_VERSION, resourceVersionReached, type ObjectRef } from '../api/shared';
import type { DefaultCrRef, FetchedModule, RenderedRef } from '../contract/artifacts';
import type { KymaRef } from '../contract/kyma';
import type { Blockers, DesiredModule, Installed, InstallResult, ResolvedModule } from '../contract/module';
import type { ModuleReport, ObservedObject, Readiness, ReadinessCheck } from '../contract/readiness';
import type { ReconcileSettings } from '../contract/settings';
import type { ResourceChange } from '../contract/signals';
import type { SeenVersions } from '../contract/seen-versions';
import { moduleNameNote } from './resolution';
import { mergeSeen, seenField } from './seen-versions';
import type { CarriedInstalled, CarriedModule } from '../contract/workflow-inputs';

export type Mode = 'run' | 'remove' | 'release';

export type ModuleStep =
  /** `previousCluster`: the cluster `previous` was applied to (its objects are known to be ours only there). */
  | { kind: 'install'; module: ResolvedModule; previous?: RenderedRef; previousCluster?: string }
  /**
   * `seen`: the Manifest version the check must reflect (its pause label), when a signal told of
   * one; `observed`: the manager and CR as the bridge last saw them, when that is news enough
   * (the check reads the others from the cluster).
   */
  | {
      kind: 'checkReadiness';
      manager?: ObjectRef;
      cr?: DefaultCrRef;
      seen?: SeenVersions;
      observed?: { manager?: ObservedObject; cr?: ObservedObject };
      inspectPods?: boolean;
    }
  | { kind: 'checkPaused'; seen?: SeenVersions }
  | {
      kind: 'publish';
      report: ModuleReport;
      readiness: Readiness;
      module: ResolvedModule;
      rendered?: RenderedRef;
      resource?: DefaultCrRef;
      resourceKind?: string;
    }
  | { kind: 'event'; event: KymaEvent }
  | { kind: 'findBlockers'; cr: DefaultCrRef; exceptDefault: boolean; rendered: RenderedRef }
  /** `keepClusterScoped`: other installations share the cluster, and a default CR of cluster scope is theirs too. */
  | { kind: 'deleteDefaultCr'; cr: DefaultCrRef; keepClusterScoped: boolean }
  /**
   * `cr`: the module's CR kind, which must have no CRs left before shared objects go; `also`: what
   * a failed install of another version rendered, whose objects go too.
   */
  | { kind: 'deleteObjects'; rendered: RenderedRef; cr?: DefaultCrRef; also?: RenderedRef }
  | { kind: 'releaseObjects'; rendered: RenderedRef; cr?: DefaultCrRef }
  | { kind: 'deleteManifest' }
  /** Tell the Kyma workflow the module is gone, and end. */
  | { kind: 'finish' }
  /** Wait for news; timers absent from the plan are cancelled (the drift timer is left running). */
  | { kind: 'wait'; driftMs?: number; deadlineMs?: number; retryMs?: number };

export type CheckStep = Extract<ModuleStep, { kind: 'checkReadiness' }>;

/** The steps that run as activities (the others the Kyma's workflow takes itself). */
export type ModuleAction = Extract<
  ModuleStep,
  {
    kind:
      | 'install'
      | 'checkReadiness'
      | 'checkPaused'
      | 'findBlockers'
      | 'deleteDefaultCr'
      | 'deleteObjects'
      | 'releaseObjects'
      | 'deleteManifest';
  }
>;

/** How an action went: its result, or the failure (typed reason and message) it ended in. */
export type ModuleOutcome =
  | { kind: 'install'; value: InstallResult }
  | { kind: 'checkReadiness'; value: ReadinessCheck }
  | { kind: 'checkPaused'; value: boolean }
  | { kind: 'findBlockers'; value: Blockers }
  | { kind: 'deleteDefaultCr'; value: string[] | null }
  /** `left`: objects the module's install found there, left in place. */
  | { kind: 'deleteObjects'; value: { done: boolean; left?: string[] } }
  | { kind: 'releaseObjects' | 'deleteManifest'; value?: undefined }
  /** `attempt`: what a failed install was installing, once it had rendered it (its objects may be there in part). */
  | { kind: ModuleAction['kind']; failure: Readiness; attempt?: Installed };

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

/**
 * Whether a readiness check reads the target cluster: an object of the module the watch has not
 * told of (or not since the install applied it), or the manager's pods. One that does not
 * decides from the views it carries and the worker's cache of Manifests alone.
 */
export function checkReadsTarget(step: CheckStep): boolean {
  return Boolean(step.inspectPods || (step.manager && !step.observed?.manager) || (step.cr && !step.observed?.cr));
}

type RemovalPhase = 'blockers' | 'defaultCr' | 'objects' | 'manifest';
type ReleasePhase = 'objects' | 'manifest';

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
  /** The newest Manifest version a signal told of. */
  private seen: SeenVersions = {};
  /** The manager and default CR as the bridge last saw them, by objectKey. */
  private views: Record<string, ObservedObject> = {};
  /** The manager's resourceVersion as the last install applied it: older views of it are stale. */
  private managerApplied?: string;
  private queue: ModuleStep[] = [];
  private mark?: Mark;
  private forceApply = false;
  /** This cycle applied the module already (a missing manager is then not re-applied again). */
  private applied = false;
  private cycleFailed: 'install' | 'check' | undefined;
  private pausedWait = false;
  /** Other installations of the module in the cluster, as the last blocker check found. */
  private sharedWith = 0;
  private unavailableSince?: number;
  /** Since when the manager has been missing although this workflow applied it. */
  private missingSince?: number;
  /** The manager's rollout has been incomplete for a while: the next check reads its pods to tell why. */
  private inspect = false;
  /** Its pods were found in trouble: every check reads them again until the rollout completes (no flip back to Processing). */
  private inspectAgain = false;
  private reportedTimeout = false;
  private lastReport = '';
  private published?: ModuleReport;
  /** What the report published last said (carried: the next run rebuilds the report from it). */
  private publishedReadiness?: Readiness;
  private removal: RemovalPhase = 'blockers';
  private blockedBefore = false;
  private release: ReleasePhase = 'objects';
  /** The module an install under way installs (what is wanted may have moved on meanwhile). */
  private installing?: ResolvedModule;

  private readonly settings: ReconcileSettings;

  constructor(input: ModuleStateOptions) {
    this.settings = input.settings;
    this.kyma = input.kyma;
    this.uid = input.uid;
    this.desired = input.module;
    this.installed = uncompact(input.carried?.installed);
    this.attempted = uncompact(input.carried?.attempted);
    this.failure = input.carried?.failure;
    this.mode = input.carried?.mode ?? 'run';
    this.paused = input.carried?.paused ?? false;
    this.unavailableSince = input.carried?.unavailableSince;
    this.missingSince = input.carried?.missingSince;
    this.reportedTimeout = input.carried?.reportedTimeout ?? false;
    this.blockedBefore = input.carried?.blockedBefore ?? false;
    this.seen = input.carried?.seen ?? {};
    this.views = input.carried?.views ?? {};
    this.managerApplied = input.carried?.managerApplied;
    const readiness = input.carried?.readiness;
    if (readiness) {
      // The report the run before published last, rebuilt: not published again unless it changes.
      this.publishedReadiness = readiness;
      this.published = this.report(readiness);
      this.lastReport = JSON.stringify([this.uid, this.published]);
    }
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
    // No news of any object (the cluster stopped or started answering): read everything again.
    if (!change) this.views = {};
    this.seen = mergeSeen(this.seen, change?.seen);
    this.see(change?.observed ?? []);
  }

  /** Keeps the newest view of each object readiness reads, from the watch or from a check's own reads. */
  private see(objects: ObservedObject[]): void {
    const { manager, cr } = this.keys();
    // A cluster-scoped CR is seen without the namespace its reference carries (the template's
    // default): nothing namespaced is ever keyed without one, so the two name the same object.
    const ref = this.managedCr();
    const clusterCr = ref && objectKey({ apiVersion: ref.apiVersion, kind: ref.kind, name: ref.name });
    for (const seen of objects) {
      // Before the first install its objects are not known: news of them is kept as it came
      // (the install keeps what turns out to be its manager's and CR's, and drops the rest).
      const key =
        seen.key === manager
          ? manager
          : seen.key === cr || seen.key === clusterCr
            ? cr
            : this.installed
              ? undefined
              : seen.key;
      if (key === undefined) continue;
      const o = { ...seen, key };
      // Only a strictly newer view already held wins (a deletion a relist found carries the last version seen).
      const have = this.views[key];
      if (
        have &&
        have.resourceVersion !== o.resourceVersion &&
        resourceVersionReached(have.resourceVersion, o.resourceVersion)
      )
        continue;
      this.views[key] = o;
    }
  }

  /** The objectKeys of the installed manager and of the default CR this module manages. */
  private keys(): { manager?: string; cr?: string } {
    const m = this.installed?.rendered.manager;
    const cr = this.managedCr();
    return {
      ...(m ? { manager: objectKey(idOfRef(m)) } : {}),
      ...(cr ? { cr: objectKey(cr) } : {}),
    };
  }

  /**
   * The Kyma's Secret names another cluster now: what was seen of the old one is forgotten, and a
   * running module is applied there at once (its install looks at each object before its first
   * apply in that cluster). Whatever it has installed stays in the old one.
   */
  clusterSwitched(): void {
    this.poke();
    this.managerApplied = undefined;
    if (this.mode === 'run') this.forceApply = true;
  }

  /** Whether anything of it may be in its cluster: an install went through, or one failed part-way. */
  hasObjects(): boolean {
    return this.installed !== undefined || this.attempted !== undefined;
  }

  remove(): void {
    if (this.mode !== 'run') return;
    this.switchMode('remove');
    this.removal = 'blockers';
    this.blockedBefore = false;
  }

  /** Release the objects (managed: false, or the Kyma is gone) and end. */
  releaseObjects(): void {
    if (this.mode === 'release') return;
    this.switchMode('release');
    this.release = 'objects';
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
      if (this.mode === 'remove') this.planRemoval();
      else if (this.mode === 'release') this.planRelease();
      else this.planCycle();
    }
    const step = this.queue.shift()!;
    if (step.kind === 'install') this.installing = step.module;
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
  woke(drift: boolean, deadline = false): void {
    this.mark = undefined;
    // The drift timer reads everything from the cluster again.
    if (drift) this.views = {};
    if (this.mode !== 'run') return;
    // A manager that does not roll out is looked at closer: its pods say why.
    if ((drift || deadline) && this.unavailableSince !== undefined) this.inspect = true;
    if (this.pausedWait) {
      this.pausedWait = false;
      this.queue.push({ kind: 'checkPaused', ...seenField(this.seen) });
      return;
    }
    // On the drift timer re-apply (idempotent) so that drift is repaired; after a failed install, retry it.
    if (drift || this.cycleFailed === 'install') this.forceApply = true;
  }

  // ---- results ---------------------------------------------------------------------------

  /** An action ended (at workflow time `now`): its result, or its failure, as each step takes it. */
  done(o: ModuleOutcome, now: number): void {
    if ('failure' in o) {
      if (o.kind === 'install') this.installFailed(o.failure, o.attempt);
      else if (o.kind === 'checkReadiness') this.checkFailed(o.failure);
      else if (o.kind === 'checkPaused') this.pauseCheckFailed(o.failure);
      else this.cleanupFailed(o.failure);
      return;
    }
    switch (o.kind) {
      case 'install':
        return this.installedModule(this.installing ?? this.desired, o.value, now);
      case 'checkReadiness':
        return this.observed(o.value, now);
      case 'checkPaused':
        return this.pausedIs(o.value);
      case 'findBlockers':
        return this.blockers(o.value);
      case 'deleteDefaultCr':
        return this.defaultCrDeleted(o.value);
      case 'deleteObjects':
        return this.objectsDeleted(o.value.done, o.value.left);
      case 'releaseObjects':
        return this.objectsReleased();
      case 'deleteManifest':
        return this.manifestDeleted();
    }
  }

  /**
   * The install went through. `result.check`: the install checked readiness itself right after
   * (at workflow time `now`), which stands for the check that would come next.
   */
  installedModule(module: ResolvedModule, result: InstallResult, now?: number): void {
    this.installing = undefined;
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
    this.managerApplied = result.managerVersion;
    // Views of other objects than this version's manager and CR are of no use any more.
    const keys = Object.values(this.keys());
    this.views = Object.fromEntries(Object.entries(this.views).filter(([k]) => keys.includes(k)));
    this.applied = true;
    if (this.mode !== 'run') return;
    if (result.check && now !== undefined) {
      this.inspect = false;
      // What it read joins the views; news the bridge sent while it ran, if newer, stays.
      this.observed(result.check, now);
    } else this.queue.push(this.readinessStep(this.installed));
  }

  /**
   * The install failed; `attempt`: what it was installing, once it had rendered it (its objects
   * may be there in part). Recorded whatever the mode now: a removal must know what may be there.
   */
  installFailed(f: Readiness, attempt?: Installed): void {
    this.installing = undefined;
    if (attempt) this.attempted = attempt;
    if (this.mode !== 'run') return;
    this.cycleFailed = 'install';
    this.settle(f);
  }

  observed(r: ReadinessCheck, now: number): void {
    if (this.mode !== 'run') return;
    this.see(r.read ?? []);
    if (r.reason === 'Paused') {
      this.paused = true;
      return;
    }
    // Something of ours vanished (deleted by hand): put it back at once, unless we just did.
    if (
      !this.applied &&
      (r.reason === 'ManagerMissing' || r.reason === 'ResourceMissing') &&
      !this.missingTooLong(r, now)
    ) {
      this.forceApply = true;
      return;
    }
    this.inspectAgain = r.reason === 'ManagerPodsFailing';
    const { readiness, recheckInMs } = this.dependencyTimeout(r, now);
    this.settle(this.leftAloneWarning(readiness), recheckInMs);
  }

  checkFailed(f: Readiness): void {
    if (this.mode !== 'run') return;
    this.cycleFailed = 'check';
    this.settle(f);
  }

  pausedIs(paused: boolean): void {
    this.paused = paused;
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
    if (this.mode !== 'remove') return;
    this.sharedWith = b.sharedWith;
    // Another installation of the module shares the cluster: its objects of cluster scope
    // (CRDs among them) stay, so no CR of the kind is lost by this removal.
    if (b.count === 0 || b.sharedWith > 0) {
      this.removal = this.ownsDefaultCr() ? 'defaultCr' : 'objects';
      return;
    }
    const cr = this.removalBasis()!.fetched.defaultCr!;
    const more = b.count > b.first.length ? ` and ${b.count - b.first.length} more` : '';
    const message = `deletion blocked by ${b.count} ${cr.kind} resource(s): ${b.first.join(', ')}${more}; delete them to continue`;
    this.publish({ reason: 'DeletionBlocked', message });
    if (!this.blockedBefore)
      this.queue.push(event('Warning', 'DeletionBlocked', `module ${this.desired.name}: ${message}`));
    this.blockedBefore = true;
    this.queue.push({ kind: 'wait', driftMs: this.settings.driftIntervalMs });
  }

  /** The default CR's delete was sent; `finalizers` are what it still waits for (null: gone). */
  defaultCrDeleted(finalizers: string[] | null): void {
    if (this.mode !== 'remove') return;
    if (finalizers === null) {
      this.removal = 'objects';
      return;
    }
    const cr = this.removalBasis()!.fetched.defaultCr!;
    this.publish({
      reason: 'WaitingForResource',
      message: `waiting for ${cr.kind} ${cr.namespace ? `${cr.namespace}/` : ''}${cr.name} to be deleted (finalizers: ${finalizers.join(', ') || 'none'})`,
    });
    this.queue.push({ kind: 'wait', driftMs: this.settings.driftIntervalMs });
  }

  /**
   * The module's objects were deleted; `done` is false when the objects it shares with other
   * installations are left because it turned out to be the last one while CRs of its kind
   * remain: the removal then waits for them like any blocked removal.
   */
  objectsDeleted(done: boolean, left?: string[]): void {
    if (this.mode !== 'remove') return;
    this.removal = done ? 'manifest' : 'blockers';
    if (left?.length)
      this.queue.push(
        event(
          'Normal',
          'ObjectsLeftInPlace',
          `module ${this.desired.name}: ${left.join(', ')} ${left.length > 1 ? 'were' : 'was'} there before the module, ` +
            `so ${left.length > 1 ? 'they are' : 'it is'} left in place with ${left.length > 1 ? 'their' : 'its'} own labels and annotations`,
        ),
      );
  }

  objectsReleased(): void {
    if (this.mode === 'release') this.release = 'manifest';
  }

  /** The Manifest is gone: the end of a removal or release. */
  manifestDeleted(): void {
    if (this.mode === 'remove')
      this.queue.push(event('Normal', 'ModuleRemoved', `module ${this.desired.name} removed`));
    this.queue.push({ kind: 'finish' });
  }

  /** A removal or release step failed: show it, and start over after the next change. */
  cleanupFailed(f: Readiness): void {
    if (this.mode === 'run') return;
    if (this.mode === 'release' && this.release === 'objects' && f.reason === 'InvalidKubeconfig') {
      // The cluster cannot be reached any more (its Secret is gone): nothing can be released
      // there; the objects keep running as they are. The Manifest still goes.
      this.release = 'manifest';
      return;
    }
    const what = this.mode === 'release' ? 'unmanaging' : 'removal';
    this.removal = 'blockers';
    this.release = 'objects';
    this.queue = [];
    this.publish({ reason: f.reason, message: `${what} failed, will retry: ${f.message}` });
    this.queue.push({ kind: 'wait', driftMs: this.settings.driftIntervalMs });
  }

  /** What a continue-as-new carries. */
  /**
   * What a continue-as-new carries. What is unset (or false) is left out: a Kyma of a thousand
   * modules carries a thousand of these within Temporal's payload limit. `views`: whether the
   * watches' views of the manager and CR go along (else the next run reads them afresh).
   */
  carry(o: { views: boolean } = { views: true }): CarriedModule {
    return {
      mode: this.mode,
      ...(this.installed ? { installed: compact(this.installed) } : {}),
      ...(this.failure ? { failure: this.failure } : {}),
      ...(this.paused ? { paused: true } : {}),
      ...(this.unavailableSince !== undefined ? { unavailableSince: this.unavailableSince } : {}),
      ...(this.missingSince !== undefined ? { missingSince: this.missingSince } : {}),
      ...(this.reportedTimeout ? { reportedTimeout: true } : {}),
      ...(this.blockedBefore ? { blockedBefore: true } : {}),
      ...seenField(this.seen),
      ...(o.views && Object.keys(this.views).length ? { views: this.views } : {}),
      ...(this.managerApplied ? { managerApplied: this.managerApplied } : {}),
      ...(this.attempted ? { attempted: compact(this.attempted) } : {}),
      ...(this.publishedReadiness ? { readiness: this.publishedReadiness } : {}),
    };
  }

  /** The default CR this module manages (CreateAndDelete), if its template has one. */
  managedCr(): DefaultCrRef | undefined {
    return managedDefaultCr(this.desired, this.installed?.fetched);
  }

  // ---- planning --------------------------------------------------------------------------

  private currentMark(): Mark {
    return { pokes: this.pokes, desired: this.desired, failure: this.failure, mode: this.mode, uid: this.uid };
  }

  /**
   * What is known now, unless a mark is pending already (a cycle that starts over keeps it): taken
   * before any step runs, so that a signal that arrives while they run is not lost.
   */
  private markNow(): void {
    this.mark ??= this.currentMark();
  }

  private planCycle(): void {
    this.markNow();
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
      const previous = this.installed;
      const d = this.desired;
      if (previous && previous.version !== d.version) {
        this.publish({ reason: 'Upgrading', message: `upgrading from ${previous.version} to ${d.version}` }, previous);
        this.queue.push(
          event('Normal', 'ModuleUpgrading', `module ${d.name}: upgrading from ${previous.version} to ${d.version}`),
        );
      }
      this.queue.push({ kind: 'install', module: d, ...previousOf(previous) });
      return;
    }
    this.queue.push(this.readinessStep(this.installed!));
  }

  /**
   * What a removal goes by: the version installed, else one whose install failed part-way (its
   * objects may be there all the same).
   */
  private removalBasis(): Installed | undefined {
    return this.installed ?? this.attempted;
  }

  /** What a failed install of another version than the basis rendered: its objects go with the basis's. */
  private alsoRendered(): { also?: RenderedRef } {
    const a = this.attempted;
    return this.installed && a && a.rendered.digest !== this.installed.rendered.digest ? { also: a.rendered } : {};
  }

  private planRemoval(): void {
    this.markNow();
    const installed = this.removalBasis();
    const cr = installed?.fetched.defaultCr;
    if (!installed) this.removal = 'manifest';
    else if (!cr && (this.removal === 'blockers' || this.removal === 'defaultCr')) this.removal = 'objects';
    switch (this.removal) {
      case 'blockers':
        this.queue.push({
          kind: 'findBlockers',
          cr: cr!,
          exceptDefault: this.ownsDefaultCr(),
          rendered: installed!.rendered,
        });
        return;
      case 'defaultCr':
        this.queue.push({ kind: 'deleteDefaultCr', cr: cr!, keepClusterScoped: this.sharedWith > 0 });
        return;
      case 'objects':
        this.publish({
          reason: 'DeletingObjects',
          message: `deleting the objects of ${this.desired.name} ${installed!.version}`,
        });
        this.queue.push(
          event(
            'Normal',
            'DeletingObjects',
            `module ${this.desired.name}: default resource gone, deleting its objects`,
          ),
        );
        this.queue.push({
          kind: 'deleteObjects',
          rendered: installed!.rendered,
          ...(cr ? { cr } : {}),
          ...this.alsoRendered(),
        });
        return;
      case 'manifest':
        this.queue.push({ kind: 'deleteManifest' });
    }
  }

  private planRelease(): void {
    this.markNow();
    const basis = this.removalBasis();
    if (this.release === 'objects' && basis) {
      const cr = managedDefaultCr(this.desired, basis.fetched);
      this.queue.push({ kind: 'releaseObjects', rendered: basis.rendered, ...(cr ? { cr } : {}) });
      return;
    }
    this.queue.push({ kind: 'deleteManifest' });
  }

  /** The end of a cycle: a dependency-timeout Event once, the report when it changed, the wait. */
  private settle(r: Readiness, recheckInMs?: number): void {
    const timedOut = r.reason === 'ManagerNotAvailableTimeout' || r.reason === 'CrdNotEstablished';
    if (timedOut && !this.reportedTimeout)
      this.queue.push(event('Warning', 'DependencyTimeout', `module ${this.desired.name}: ${r.message}`));
    this.reportedTimeout = timedOut;
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
    const keys = this.keys();
    // The manager's view counts only if the watch saw it since this install applied it.
    const manager = keys.manager ? this.views[keys.manager] : undefined;
    const inspectPods = (this.inspect || this.inspectAgain) && installed.rendered.manager !== undefined;
    this.inspect = false;
    // The watch tells of a rollout's start and end, not of each step: a closer look reads the manager afresh.
    const fresh =
      !inspectPods &&
      manager &&
      this.managerApplied &&
      resourceVersionReached(manager.resourceVersion, this.managerApplied)
        ? manager
        : undefined;
    const crView = keys.cr ? this.views[keys.cr] : undefined;
    const observed = { ...(fresh ? { manager: fresh } : {}), ...(crView ? { cr: crView } : {}) };
    return {
      kind: 'checkReadiness',
      ...(installed.rendered.manager ? { manager: installed.rendered.manager } : {}),
      ...(cr ? { cr } : {}),
      ...seenField(this.seen),
      ...(Object.keys(observed).length ? { observed } : {}),
      ...(inspectPods ? { inspectPods } : {}),
    };
  }

  /** A module Ready but for the system namespaces its manifest ships, which were left alone, shows a Warning that names them. */
  private leftAloneWarning(r: Readiness): Readiness {
    const left = this.installed?.leftAlone;
    if (r.reason !== 'Ready' || !left?.length) return r;
    return {
      reason: 'SystemNamespaceSkipped',
      message:
        `the manifest ships ${left.join(', ')}: system namespaces are left as they are (never labelled or deleted ` +
        `by the lifecycle manager); the rest of the module is installed and ready`,
    };
  }

  /** Queues the report's publication, unless it is what was published last. */
  private publish(r: Readiness, installed = this.installed): void {
    const report = this.report(r, installed);
    const key = JSON.stringify([this.uid, report]);
    if (key === this.lastReport) return;
    this.lastReport = key;
    this.published = report;
    this.publishedReadiness = r;
    const cr = installed?.fetched.defaultCr;
    const resource = this.managedCr();
    this.queue.push({
      kind: 'publish',
      report,
      readiness: r,
      module: this.desired,
      ...(installed ? { rendered: installed.rendered } : {}),
      ...(resource ? { resource } : {}),
      ...(cr ? { resourceKind: `${cr.apiVersion}/${cr.kind}` } : {}),
    });
  }

  /** The report published last in this run (none yet: undefined), for the `status` query. */
  current(): ModuleReport | undefined {
    return this.published;
  }

  report(r: Readiness, installed = this.installed): ModuleReport {
    const d = this.desired;
    const cr = this.managedCr();
    return {
      reason: r.reason,
      status: {
        name: d.name,
        ...(d.channel ? { channel: d.channel } : {}),
        // Only what an install put there: a module whose install never succeeded has no version.
        ...(installed ? { version: installed.version } : {}),
        state: stateOf(r.reason),
        message: withNote(r.message, moduleNameNote(d)),
        // Both, as upstream: fqdn for backwards compatibility, ocmComponentName its successor.
        ...(d.fqdn ? { fqdn: d.fqdn, ocmComponentName: d.fqdn } : {}),
        template: {
          apiVersion: API_VERSION,
          kind: 'ModuleTemplate',
          metadata: { name: d.template.name, namespace: d.template.namespace, generation: d.template.generation },
        },
        manifest: {
          apiVersion: API_VERSION,
          kind: 'Manifest',
          metadata: { name: manifestName(this.kyma.name, d.name), namespace: this.kyma.namespace },
        },
        ...(cr
          ? {
              resource: {
                apiVersion: cr.apiVersion,
                kind: cr.kind,
                metadata: { name: cr.name, namespace: cr.namespace ?? '' },
              },
            }
          : {}),
      },
    };
  }

  private ownsDefaultCr(): boolean {
    return this.desired.customResourcePolicy === 'CreateAndDelete';
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

  /**
   * A manager unavailable (or, once applied, missing) for longer than the timeout turns
   * Processing into Error (with the reason), until it becomes available. A rollout that does not
   * move is looked at again on a backoff (a minute, doubling up to 5 min), its pods read, so that a
   * pod that cannot be scheduled or crash-loops shows as Error before the timeout. Returns the
   * readiness and when to look again.
   */
  private dependencyTimeout(r: Readiness, now: number): { readiness: Readiness; recheckInMs?: number } {
    const timeoutMs = this.settings.managerAvailableTimeoutMs;
    const waiting = MANAGER_NOT_RUNNING.includes(r.reason);
    if (r.reason !== 'ManagerMissing') this.missingSince = undefined;
    if (!waiting || !timeoutMs) {
      this.unavailableSince = undefined;
      return { readiness: r };
    }
    this.unavailableSince ??= now;
    // A missing manager times out counting from when it went missing, an unavailable one from when it stopped being available.
    const since = r.reason === 'ManagerMissing' ? (this.missingSince ??= now) : this.unavailableSince;
    const left = since + timeoutMs - now;
    const inspectInMs = inspectionDelayMs(now - this.unavailableSince, timeoutMs, this.settings.driftIntervalMs);
    const recheckInMs = left > 0 ? Math.min(left, inspectInMs) : inspectInMs;
    if (left > 0 || (r.reason !== 'ManagerNotAvailable' && r.reason !== 'ManagerMissing'))
      return { readiness: r, recheckInMs };
    const still = r.reason === 'ManagerMissing' ? 'still missing' : 'still not available';
    return {
      readiness: {
        reason: 'ManagerNotAvailableTimeout',
        message: `${r.message}: ${still} after ${Math.round(timeoutMs / 1000)}s`,
      },
      recheckInMs,
    };
  }

  /** A manager that stays missing although it was applied again and again times out instead of being re-applied forever. */
  private missingTooLong(r: Readiness, now: number): boolean {
    if (r.reason !== 'ManagerMissing' || this.missingSince === undefined) return false;
    return now - this.missingSince >= this.settings.managerAvailableTimeoutMs;
  }

  /** Backoff after a failed cycle: the first delay (30 s by default), doubling, at most the drift interval. */
  private retryDelayMs(): number {
    const first = this.settings.installRetryMs;
    return Math.min(this.settings.driftIntervalMs, first * 2 ** Math.min(10, Math.max(0, this.failedCycles - 1)));
  }
}

/** Readiness reasons of a manager that does not run its current spec (yet). */
const MANAGER_NOT_RUNNING: string[] = [
  'ManagerNotAvailable',
  'ManagerMissing',
  'ManagerPodsFailing',
  'ManagerRolloutStalled',
];

/**
 * When to look at a manager that does not roll out again: a minute after it began (or a quarter
 * of the timeout, if shorter: 75 s by default), then as long again as it has taken so far, at
 * most 5 minutes (or the drift interval, if shorter). Not sooner: a rollout that is merely slow
 * (a loaded cluster) would pay a timer, a workflow task and a read of its pods for nothing.
 */
function inspectionDelayMs(elapsedMs: number, timeoutMs: number, driftMs: number): number {
  const first = Math.min(60_000, Math.max(1_000, Math.floor(timeoutMs / 4)));
  return Math.min(Math.max(first, elapsedMs), Math.min(300_000, driftMs));
}

/** What an install goes on from: the version installed before, and the cluster it was applied to. */
function previousOf(i: Installed | undefined): { previous?: RenderedRef; previousCluster?: string } {
  if (!i) return {};
  return { previous: i.rendered, ...(i.cluster ? { previousCluster: i.cluster } : {}) };
}

/** A status message with a note after it, if there is one. */
function withNote(message: string, note: string | undefined): string {
  return note ? `${message} (note: ${note})` : message;
}

function event(type: KymaEvent['type'], reason: KymaEvent['reason'], message: string): ModuleStep {
  return { kind: 'event', event: { type, reason, message } };
}

/** An install as carried: the rendered layer left out when it is the fetched one (it nearly always is). */
function compact(i: Installed): CarriedInstalled {
  if (JSON.stringify(i.rendered.layer) !== JSON.stringify(i.fetched.layer)) return i;
  const { layer: _, ...rendered } = i.rendered;
  return { ...i, rendered };
}

function uncompact(i: CarriedInstalled | undefined): Installed | undefined {
  return i && { ...i, rendered: { ...i.rendered, layer: i.rendered.layer ?? i.fetched.layer } };
}
