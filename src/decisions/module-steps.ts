// The steps a module's decisions ask its Kyma's workflow to take (an activity, an Event, a
// report, a wait), and the mode they are planned in: the vocabulary ModuleState and its parts
// (removal, report) speak.
import type { KymaEvent } from '../api/events';
import type { ObjectRef } from '../api/shared';
import type { DefaultCrRef, RenderedRef } from '../contract/artifacts';
import type { Blockers, DeletedObjects, Installed, InstallResult, ResolvedModule } from '../contract/module';
import type { ModuleReport, ObservedObject, Readiness, ReadinessCheck } from '../contract/readiness';
import type { SeenVersions } from '../contract/seen-versions';

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

/** Where a part of a module's decisions queues its steps and the reports it wants published. */
export interface StepSink {
  push(step: ModuleStep): void;
  /** Queues the report's publication, unless it is what was published last. */
  publish(r: Readiness): void;
}

/** An Event step. */
export function moduleEvent(type: KymaEvent['type'], reason: KymaEvent['reason'], message: string): ModuleStep {
  return { kind: 'event', event: { type, reason, message } };
}

/** How an action went: its result, or the failure (typed reason and message) it ended in. */
export type ModuleOutcome =
  | { kind: 'install'; value: InstallResult }
  | { kind: 'checkReadiness'; value: ReadinessCheck }
  | { kind: 'checkPaused'; value: boolean }
  | { kind: 'findBlockers'; value: Blockers }
  | { kind: 'deleteDefaultCr'; value: string[] | null }
  /** `left`: objects the module's install found there, left in place. */
  | { kind: 'deleteObjects'; value: DeletedObjects }
  | { kind: 'releaseObjects' | 'deleteManifest'; value?: undefined }
  /** `attempt`: what a failed install was installing, once it had rendered it (its objects may be there in part). */
  | { kind: ModuleAction['kind']; failure: Readiness; attempt?: Installed };
