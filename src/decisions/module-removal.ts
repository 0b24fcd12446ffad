// A module's removal and release, in order, without I/O. Remove: wait while CRs block, delete
// the default CR and wait until it is gone, delete the objects and wait until its CRDs are gone,
// the Manifest, finish. Release
// (managed: false, or the Kyma is gone): drop our label from the objects, delete the Manifest,
// finish. ModuleState plans with it when its mode is `remove` or `release`, and feeds each step's
// result back; the steps and reports go to the module's queue (a StepSink).
import type { RenderedRef } from '../contract/artifacts';
import type { Blockers, DeletedObjects, Installed } from '../contract/module';
import type { Readiness } from '../contract/readiness';
import { moduleEvent, type Mode, type StepSink } from './module-steps';

type RemovalPhase = 'blockers' | 'defaultCr' | 'objects' | 'terminating' | 'manifest';

/**
 * How soon a removal looks again at objects it deleted that are still being deleted (a CRD
 * whose custom resources the API server is cleaning up): nothing tells it when they are gone.
 */
export const TERMINATING_RECHECK_MS = 30_000;
type ReleasePhase = 'objects' | 'manifest';

/** What a removal or release goes by, as the module knows it now. */
export interface RemovalBasis {
  /** The version installed, else one whose install failed part-way (its objects may be there all the same). */
  basis?: Installed;
  /** What a failed install of another version than the basis rendered: its objects go with the basis's. */
  also?: RenderedRef;
  /** The module manages its default CR (CreateAndDelete). */
  ownsDefaultCr: boolean;
}

/** A failed install's rendering, deleted with the basis's. */
function also(b: RemovalBasis): { also?: RenderedRef } {
  return b.also ? { also: b.also } : {};
}

export interface ModuleRemovalOptions {
  /** The module's name, for messages and Events. */
  name: string;
  /** How long a blocked removal waits before it looks again, unless news comes. */
  driftMs: number;
  /** A removal was blocked already (carried: its Warning is not sent again). */
  blockedBefore?: boolean;
}

export class ModuleRemoval {
  /** The removal was blocked by CRs (its Warning was sent). */
  blockedBefore: boolean;
  private removal: RemovalPhase = 'blockers';
  private release: ReleasePhase = 'objects';
  /** Other installations of the module in the cluster, as the last blocker check found. */
  private sharedWith = 0;
  private readonly name: string;
  private readonly driftMs: number;

  constructor(o: ModuleRemovalOptions) {
    this.name = o.name;
    this.driftMs = o.driftMs;
    this.blockedBefore = o.blockedBefore ?? false;
  }

  /** A removal begins (again) from its first step. */
  beginRemoval(): void {
    this.removal = 'blockers';
    this.blockedBefore = false;
  }

  /** A release begins (again) from its first step. */
  beginRelease(): void {
    this.release = 'objects';
  }

  planRemoval(b: RemovalBasis, sink: StepSink): void {
    const installed = b.basis;
    const cr = installed?.fetched.defaultCr;
    if (!installed) this.removal = 'manifest';
    else if (!cr && (this.removal === 'blockers' || this.removal === 'defaultCr')) this.removal = 'objects';
    switch (this.removal) {
      case 'blockers':
        sink.push({ kind: 'findBlockers', cr: cr!, exceptDefault: b.ownsDefaultCr, rendered: installed!.rendered });
        return;
      case 'defaultCr':
        sink.push({ kind: 'deleteDefaultCr', cr: cr!, keepClusterScoped: this.sharedWith > 0 });
        return;
      case 'objects':
        sink.publish({
          reason: 'DeletingObjects',
          message: `deleting the objects of ${this.name} ${installed!.version}`,
        });
        sink.push(
          moduleEvent('Normal', 'DeletingObjects', `module ${this.name}: default resource gone, deleting its objects`),
        );
        sink.push({ kind: 'deleteObjects', rendered: installed!.rendered, ...(cr ? { cr } : {}), ...also(b) });
        return;
      case 'terminating':
        // Deleting again is idempotent: it finds what is still there, and waits a little for it.
        sink.push({ kind: 'deleteObjects', rendered: installed!.rendered, ...(cr ? { cr } : {}), ...also(b) });
        return;
      case 'manifest':
        sink.push({ kind: 'deleteManifest' });
    }
  }

  planRelease(b: RemovalBasis, sink: StepSink): void {
    const basis = b.basis;
    if (this.release === 'objects' && basis) {
      const cr = b.ownsDefaultCr ? basis.fetched.defaultCr : undefined;
      sink.push({ kind: 'releaseObjects', rendered: basis.rendered, ...(cr ? { cr } : {}) });
      return;
    }
    sink.push({ kind: 'deleteManifest' });
  }

  blockers(found: Blockers, b: RemovalBasis, sink: StepSink): void {
    this.sharedWith = found.sharedWith;
    // Another installation of the module shares the cluster: its objects of cluster scope
    // (CRDs among them) stay, so no CR of the kind is lost by this removal.
    if (found.count === 0 || found.sharedWith > 0) {
      this.removal = b.ownsDefaultCr ? 'defaultCr' : 'objects';
      return;
    }
    const cr = b.basis!.fetched.defaultCr!;
    const more = found.count > found.first.length ? ` and ${found.count - found.first.length} more` : '';
    const message = `deletion blocked by ${found.count} ${cr.kind} resource(s): ${found.first.join(', ')}${more}; delete them to continue`;
    sink.publish({ reason: 'DeletionBlocked', message });
    if (!this.blockedBefore) sink.push(moduleEvent('Warning', 'DeletionBlocked', `module ${this.name}: ${message}`));
    this.blockedBefore = true;
    sink.push({ kind: 'wait', driftMs: this.driftMs });
  }

  /** The default CR's delete was sent; `finalizers` are what it still waits for (null: gone). */
  defaultCrDeleted(finalizers: string[] | null, b: RemovalBasis, sink: StepSink): void {
    if (finalizers === null) {
      this.removal = 'objects';
      return;
    }
    const cr = b.basis!.fetched.defaultCr!;
    sink.publish({
      reason: 'WaitingForResource',
      message: `waiting for ${cr.kind} ${cr.namespace ? `${cr.namespace}/` : ''}${cr.name} to be deleted (finalizers: ${finalizers.join(', ') || 'none'})`,
    });
    sink.push({ kind: 'wait', driftMs: this.driftMs });
  }

  /**
   * The module's objects were deleted. Some may still be being deleted (`terminating`): the
   * removal says which and looks again soon. Otherwise `done` is false when the objects it shares
   * with other installations are left because it turned out to be the last one while CRs of its
   * kind remain: the removal then waits for them like any blocked removal.
   */
  objectsDeleted(o: DeletedObjects, sink: StepSink): void {
    const left = o.left;
    if (left?.length)
      sink.push(
        moduleEvent(
          'Normal',
          'ObjectsLeftInPlace',
          `module ${this.name}: ${left.join(', ')} ${left.length > 1 ? 'were' : 'was'} there before the module, ` +
            `so ${left.length > 1 ? 'they are' : 'it is'} left in place with ${left.length > 1 ? 'their' : 'its'} own labels and annotations`,
        ),
      );
    if (o.terminating?.length) {
      this.removal = 'terminating';
      sink.publish({ reason: 'WaitingForResource', message: `waiting for ${o.terminating.join(', ')} to be deleted` });
      sink.push({ kind: 'wait', driftMs: this.driftMs, retryMs: TERMINATING_RECHECK_MS });
      return;
    }
    this.removal = o.done ? 'manifest' : 'blockers';
  }

  objectsReleased(): void {
    this.release = 'manifest';
  }

  /** The Manifest is gone: the end of a removal (told by an Event) or release. */
  manifestDeleted(mode: Mode, sink: StepSink): void {
    if (mode === 'remove') sink.push(moduleEvent('Normal', 'ModuleRemoved', `module ${this.name} removed`));
    sink.push({ kind: 'finish' });
  }

  /**
   * A removal or release step failed: what to show before starting over after the next change,
   * or undefined when the release goes on without its objects.
   */
  failed(mode: Exclude<Mode, 'run'>, f: Readiness): Readiness | undefined {
    if (mode === 'release' && this.release === 'objects' && f.reason === 'InvalidKubeconfig') {
      // The cluster cannot be reached any more (its Secret is gone): nothing can be released
      // there; the objects keep running as they are. The Manifest still goes.
      this.release = 'manifest';
      return undefined;
    }
    const what = mode === 'release' ? 'unmanaging' : 'removal';
    this.removal = 'blockers';
    this.release = 'objects';
    return { reason: f.reason, message: `${what} failed, will retry: ${f.message}` };
  }
}
