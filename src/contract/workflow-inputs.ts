// The Kyma workflow's type, id and input: what the bridge starts and the worker registers, and
// what a run carries into the next one when it continues as new.
import type { ClusterIdentity } from '../api/cluster-identity';
import type { KymaRef } from './kyma';
import type { DesiredModule, Installed, ResolvedModule } from './module';
import type { ModuleReport, ObservedObject, Readiness } from './readiness';
import type { Admission, RolloutEnded } from './rollout';
import type { RuntimeSide } from './runtime';
import type { SeenVersions } from './seen-versions';

export const KYMA_WORKFLOW = 'kymaWorkflow';

/** What the bridge starts a Kyma's workflow with; the run reads its settings from the worker (`beginKymaRun`). */
export interface KymaWorkflowInput {
  kyma: KymaRef;
  /** The control-plane versions the bridge saw when it started the run: its first read reflects them. */
  seen?: SeenVersions;
  /** What the run before carried across continue-as-new. */
  carried?: CarriedKyma;
}

/** A Kyma's state as one run hands it to the next. */
export interface CarriedKyma {
  uid: string;
  /** What each running module was last told to install. */
  desired: Record<string, ResolvedModule>;
  /** Each module's report (absent: rebuilt from what each running module carries). */
  reports?: Record<string, ModuleReport>;
  removing: Record<string, 'remove' | 'release'>;
  remote: boolean;
  /** The newest control-plane versions its signals told of. */
  seen?: SeenVersions;
  /** What rollouts admitted, per module. */
  admitted?: Record<string, Admission>;
  /** The runtime side, as far as it was synced. */
  runtime?: RuntimeSide;
  /** Per module, the rollout of the version it waits for that ended without reaching it (aborted). */
  rolloutEnded?: Record<string, RolloutEnded>;
  /** The modules the workflow runs, each with its state. */
  modules?: Record<string, RunningModule>;
  /** The Kyma's label values that mean nothing, as told by a Warning Event already. */
  labelProblems?: string[];
  /** The cluster its modules go to, and what switches of its Secret to other clusters left behind. */
  target?: CarriedTarget;
}

/** What a switch of a Kyma's Secret to another cluster left in the cluster it named before (nothing is removed there). */
export interface LeftBehind {
  /** The switch's number (a Kyma's switches count from 1): a person clears those up to a number. */
  n: number;
  cluster: ClusterIdentity;
  /** The modules that may have objects there. */
  modules: string[];
  /** The runtime Kyma, its catalog and CRDs stayed there too. */
  runtime?: true;
}

/** The Kyma's target cluster as one run hands it to the next. */
export interface CarriedTarget {
  cluster?: ClusterIdentity;
  left?: LeftBehind[];
  switches?: number;
}

/** A module the Kyma's workflow runs: what it was started with, and what its state carries. */
export interface RunningModule {
  uid: string;
  /** Absent: what the Kyma last told it to install (`desired`). */
  module?: ResolvedModule;
  carried?: CarriedModule;
}

/** An install as carried: the rendered layer is absent when it is the fetched one. */
export type CarriedInstalled = Omit<Installed, 'rendered'> & {
  rendered: Omit<Installed['rendered'], 'layer'> & { layer?: Installed['rendered']['layer'] };
};

/** A module's state as one run hands it to the next. */
export interface CarriedModule {
  installed?: CarriedInstalled;
  /** A resolution failure the module shows. */
  failure?: DesiredModule['failure'];
  mode: 'run' | 'remove' | 'release';
  /** The Manifest's skip-reconciliation label was last seen set. */
  paused?: boolean;
  /** Workflow time since when the manager has been unavailable. */
  unavailableSince?: number;
  /** Workflow time since when the manager has been missing although applied. */
  missingSince?: number;
  /** Events already recorded, not to be recorded again. */
  reportedTimeout?: boolean;
  blockedBefore?: boolean;
  /** The newest Manifest version its signals told of. */
  seen?: SeenVersions;
  /** The manager and default CR as the bridge last saw them, and the manager's version as applied. */
  views?: Record<string, ObservedObject>;
  managerApplied?: string;
  /** A version whose install failed after it rendered: its objects may be there in part, and a removal deletes them too. */
  attempted?: CarriedInstalled;
  /** What the module's last report said: the next run rebuilds the report (the Kyma's status entry) from it. */
  readiness?: Readiness;
}
