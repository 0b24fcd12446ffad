// The workflow types, their ids and inputs: what the bridge starts and the worker registers.
import type { KymaRef } from './kyma';
import type { DesiredModule, Installed, ResolvedModule } from './module';
import type { ModuleReport, ObservedObject } from './readiness';
import type { Admission, RolloutEnded } from './rollout';
import type { RuntimeSide } from './runtime';
import type { ReconcileSettings } from './settings';
import type { SeenVersions } from './seen-versions';

export const KYMA_WORKFLOW = 'kymaWorkflow';
export const MODULE_WORKFLOW = 'moduleWorkflow';

/**
 * The shape a Kyma workflow run begins in when the bridge starts it: shape 1 has every patch of
 * the Kyma and module loops on from the start (rollout-gate, runtime-side, truthful-status,
 * hosted-modules, lean-hosting) without asking `patched()`, which records a
 * marker and upserts a search attribute per patch and run. Runs begun without it ask each patch
 * as before; a patch added since (outage-and-blocked-status) is asked in every run. A worker must
 * know a shape before a bridge starts runs in it: workers are upgraded first (README, Upgrading
 * workflows).
 */
export const KYMA_WORKFLOW_SHAPE = 1;

export interface KymaWorkflowInput {
  kyma: KymaRef;
  settings: ReconcileSettings;
  /** KYMA_WORKFLOW_SHAPE of the bridge that started the run; absent in runs begun before. */
  shape?: number;
  /** Carried across continue-as-new. */
  carried?: {
    uid: string;
    desired: Record<string, ResolvedModule>;
    reports: Record<string, ModuleReport>;
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
    /** The modules this workflow runs, and the state each carries. */
    hosted?: Record<string, HostedModule>;
    /** The Kyma's label values that mean nothing, as told by a Warning Event already. */
    labelProblems?: string[];
  };
}

/** A module the Kyma's workflow runs: what a module workflow would be started or continued with. */
export interface HostedModule {
  name: string;
  uid: string;
  module: ResolvedModule;
  carried?: ModuleWorkflowInput['carried'];
  after?: 'remove' | 'release';
}

export interface ModuleWorkflowInput {
  kyma: KymaRef;
  /** The uid of the Kyma this module belongs to (a re-created Kyma's modules adopt the new one). */
  uid: string;
  module: ResolvedModule;
  settings: ReconcileSettings;
  /**
   * A run started again after the server ended the one before in the middle of a removal or
   * release: it installs what is wanted (learning what its objects are), then goes on with it.
   */
  after?: 'remove' | 'release';
  /** Carried across continue-as-new. */
  carried?: {
    installed?: Installed;
    /** A resolution failure the module shows. */
    failure?: DesiredModule['failure'];
    mode: 'run' | 'remove' | 'release';
    /** The Manifest's skip-reconciliation label was last seen set. */
    paused?: boolean;
    /** Workflow time since when the manager has been unavailable. */
    unavailableSince?: number;
    /** Workflow time since when the manager has been missing although applied. */
    missingSince?: number;
    /** A removal or release to go on with once installed (see `after` above). */
    after?: 'remove' | 'release';
    /** Events already recorded, not to be recorded again. */
    reportedTimeout?: boolean;
    blockedBefore?: boolean;
    /** The newest Manifest version its signals told of. */
    seen?: SeenVersions;
    /** The manager and default CR as the bridge last saw them, and the manager's version as applied. */
    views?: Record<string, ObservedObject>;
    managerApplied?: string;
  };
}
