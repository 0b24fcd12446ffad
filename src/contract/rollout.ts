// Staged rollouts: what the bridge, the rollout workflow and the Kyma workflows exchange. One
// rollout workflow per (namespace, module, channel), id `rollout/<ns>/<module>/<channel>`: it
// lives as long as the channel does and rolls each version the channel is promoted to.
import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import { SA } from '../api/search-attributes';
import type { State } from '../api/shared';
import { WORKFLOW_TASK_TIMEOUT } from './settings';
import type { SeenVersions } from './seen-versions';

export const ROLLOUT_WORKFLOW = 'rolloutWorkflow';

/** A module on a channel of a namespace: what a rollout workflow rolls. */
export interface ChannelRef {
  namespace: string;
  module: string;
  channel: string;
}

export function rolloutWorkflowId(c: ChannelRef): string {
  return `rollout/${c.namespace}/${c.module}/${c.channel}`;
}

/** How a channel's rollout workflow is started (with signalWithStart), by the bridge on a promotion or by a Kyma that found none. */
export function rolloutStart(channel: ChannelRef, taskQueue: string, defaultNamespace: string) {
  return {
    workflowId: rolloutWorkflowId(channel),
    taskQueue,
    args: [{ channel, defaultNamespace }] as [RolloutWorkflowInput],
    workflowTaskTimeout: WORKFLOW_TASK_TIMEOUT,
    typedSearchAttributes: [
      { key: SA.ModuleName, value: channel.module },
      { key: SA.Channel, value: channel.channel },
      { key: SA.KymaNamespace, value: channel.namespace },
    ],
  };
}

/** One wave's size: a number of Kymas, or a share of those to move (`"10%"`). */
export type WaveSize = number | `${number}%`;

/**
 * How a channel's promotions reach the fleet. Operators set it per channel in the ConfigMap
 * `klm-rollout-policy` of the Kymas' namespace (key: the channel, else `default`).
 */
export interface RolloutPolicy {
  /** The waves' sizes in order; the Kymas left after them form one last wave. Empty: one wave. */
  waves: WaveSize[];
  /** After a wave has settled, how long its modules must stay Ready before the next one starts. */
  soakMs: number;
  /** At most this many Kymas upgrading at once. */
  maxConcurrent: number;
  /** The rollout halts when more Kymas than this failed: a count, or a share of those reached. */
  failureBudget: WaveSize;
  /** A Kyma whose module is not Ready (or Error) this long after its admission counts as failed. */
  waveTimeoutMs: number;
  /** `manual`: the rollout waits for `resume` before its first wave (the plan can be read first). */
  start: 'auto' | 'manual';
}

/** Bridge → rollout workflow (signalWithStart): the channel now carries this version. */
export interface Promotion {
  version: string;
  /** The control-plane versions behind the event, for the rollout's reads. */
  seen?: SeenVersions;
}

export const promoted = defineSignal<[Promotion]>('promoted');

/** Rollout workflow → Kyma workflow: this Kyma's module may move to `version` on `channel`. */
export interface Admission {
  module: string;
  channel: string;
  version: string;
  /** The control-plane versions behind the promotion: the Kyma's resolution must see them. */
  seen?: SeenVersions;
}

export const admitModule = defineSignal<[Admission]>('admitModule');

/** Kyma workflow → rollout workflow: the admitted module's state at the admitted version. */
export interface RolloutReport {
  kyma: string;
  version: string;
  state: State;
  message?: string;
}

export const rolloutReport = defineSignal<[RolloutReport]>('rolloutReport');

/**
 * Kyma workflow → rollout workflow: the Kyma holds its module at the installed version because
 * the channel carries `version` and no rollout admitted it yet. The rollout takes it in (or
 * admits it at once when it has rolled that version already, or says it was aborted).
 */
export interface RolloutWaiting {
  kyma: string;
  version: string;
}

export const rolloutWaiting = defineSignal<[RolloutWaiting]>('rolloutWaiting');

/** Rollout workflow → Kyma workflow: the rollout of `version` ended without reaching this Kyma (aborted). */
export interface RolloutEnded {
  module: string;
  channel: string;
  version: string;
  message: string;
}

export const rolloutEnded = defineSignal<[RolloutEnded]>('rolloutEnded');

/** Why an operator pauses, resumes or aborts a rollout (recorded in its progress). */
export interface OperatorAction {
  reason: string;
}

export const pauseRollout = defineUpdate<RolloutProgress, [OperatorAction]>('pause');
export const resumeRollout = defineUpdate<RolloutProgress, [OperatorAction]>('resume');
export const abortRollout = defineUpdate<RolloutProgress, [OperatorAction]>('abort');

/**
 * Idle: no promotion to roll. Planning: finding the Kymas. Waiting: `start: manual`, for resume.
 * Rolling, Soaking: a wave upgrading or soaking. Paused: by an operator. Halted: the failure
 * budget is spent (or the policy is invalid). Completed, Aborted: this version is done.
 */
export type RolloutPhase =
  'Idle' | 'Planning' | 'Waiting' | 'Rolling' | 'Soaking' | 'Paused' | 'Halted' | 'Completed' | 'Aborted';

export interface WaveProgress {
  size: number;
  done: number;
  failed: number;
  /** Admitted, not settled yet. */
  upgrading: number;
  pending: number;
}

export interface RolloutProgress {
  module: string;
  channel: string;
  version: string;
  from?: string;
  phase: RolloutPhase;
  /** What the phase means now, for a person. */
  message: string;
  waves: WaveProgress[];
  /** The wave under way (0-based); waves.length once all are through. */
  wave: number;
  failed: { kyma: string; message: string }[];
  policy?: RolloutPolicy;
  /** Operators' actions, newest last. */
  actions: { action: 'pause' | 'resume' | 'abort'; reason: string; at: string }[];
}

export const rolloutProgress = defineQuery<RolloutProgress>('progress');
/** The Kymas of each wave, in order (the plan). */
export const rolloutWaves = defineQuery<string[][]>('waves');

export interface RolloutWorkflowInput {
  channel: ChannelRef;
  /** The default namespace setting, for the plan's object-level difference. */
  defaultNamespace?: string;
  /**
   * A run continues as new past this many history events, or sooner when Temporal suggests it
   * (default `ROLLOUT_CONTINUE_AS_NEW_EVENTS`, src/decisions/rollout-state.ts).
   */
  continueAsNewAfterEvents?: number;
  carried?: CarriedRollout;
}

/**
 * Signals a rollout owes Kymas: `admit`, their module may move to the version; `notify`, the
 * rollout of the version ended without reaching them (aborted), and why.
 */
export type OwedSignal =
  | { kind: 'admit'; version: string; kymas: string[]; seen?: SeenVersions }
  | { kind: 'notify'; version: string; kymas: string[]; message: string };

/** What a rollout carries across continue-as-new: the version last rolled (or rolling) and its phase. */
export interface CarriedRollout {
  version: string;
  phase: RolloutPhase;
  /** A newer promotion superseded the version: the new run begins it. */
  next?: string;
  /** The run's history grew long: the rollout as it stands, for the new run to go on where it was. */
  state?: CarriedRolloutState;
}

/** A rollout under way, compactly: Kyma names once, each Kyma's phase a letter. */
export interface CarriedRolloutState {
  message: string;
  from?: string;
  policy?: RolloutPolicy;
  /** The Kymas of each wave, in order. */
  waves: string[][];
  /** Per wave, one letter per Kyma in its order: p pending, u upgrading, d done, f failed. */
  phases: string[];
  /** The wave under way. */
  wave: number;
  /** When each Kyma upgrading was admitted (workflow time, ms). */
  admittedAt: Record<string, number>;
  /** Why each failed Kyma failed. */
  failures: Record<string, string>;
  /** What the version changes: each group's Kymas by their position in `waves` (flattened), or by name when in no wave. */
  diff?: { version: string; groups: (Omit<PromotionDiffGroup, 'kymas'> & { kymas: (number | string)[] })[] };
  seen?: SeenVersions;
  soakUntil?: number;
  /** Failures and settled Kymas when the budget was last reset (by resume). */
  base: { failed: number; settled: number };
  actions: RolloutProgress['actions'];
  /** The phase a pause goes back to on resume. */
  pausedFrom?: RolloutPhase;
  /** Kymas that said they hold the module for a version, not taken in yet (kyma → version). */
  joiners: Record<string, string>;
  owed: OwedSignal[];
  /** A promotion not yet begun. */
  promoted?: string;
}

/** What a new version changes against the installed one, by object name (`Kind.group namespace/name`). */
export interface ObjectChanges {
  added: string[];
  changed: string[];
  removed: string[];
  /** Names left off the lists (each keeps 100). */
  more?: number;
}

/** Kymas that run the same version (the same installed template) in the same default namespace, and what the promotion changes for them. */
export interface PromotionDiffGroup extends ObjectChanges {
  /** The version installed now; absent: the module is not installed yet (everything is added). */
  from?: string;
  kymas: string[];
  /** Why the difference could not be computed (a typed reason and a message); the lists are then empty. */
  problem?: string;
}

/** The object-level difference a promotion to `version` makes, per group of Kymas. */
export interface PromotionDiff {
  version: string;
  groups: PromotionDiffGroup[];
}

/** A promotion's plan as people read it: the Kymas it moves wave by wave, the policy, and what it changes. */
export interface RolloutPlanView {
  module: string;
  channel: string;
  version: string;
  from?: string;
  policy: RolloutPolicy;
  /** The ConfigMap's policy could not be used (the rollout would halt at once). */
  policyProblem?: string;
  waves: string[][];
  diff?: PromotionDiff;
}

/** The rollout's plan of the version it rolls (null before it has planned one). */
export const rolloutPlanQuery = defineQuery<RolloutPlanView | null>('plan');

/** A plan computed on the worker for the command line, applying nothing: `plan/<ns>/<module>/<channel>/<version>`. */
export const PROMOTION_PLAN_WORKFLOW = 'promotionPlanWorkflow';

export function promotionPlanWorkflowId(c: ChannelRef, version: string): string {
  return `plan/${c.namespace}/${c.module}/${c.channel}/${version}`;
}

export interface PromotionPlanInput {
  channel: ChannelRef;
  version: string;
  /** The worker's default namespace setting (`{kyma}` stands for the Kyma's name): where namespaced objects without one go. */
  defaultNamespace: string;
}

/** What the plan activity returns: the Kymas to move, in wave order, and the channel's policy. */
export interface RolloutPlan {
  kymas: string[];
  policy: RolloutPolicy;
  /** The policy in the ConfigMap could not be read: why (the rollout halts until it is fixed). */
  policyProblem?: string;
  /** The version most of the Kymas run now. */
  from?: string;
}
