// How a rollout under way is carried into the next run when its history grows long, and restored
// there: compactly (each Kyma's name once, its phase a letter; the difference's Kymas by their
// position in the waves), so that a rollout of many thousand Kymas fits Temporal's payload limit.
import type {
  CarriedRollout,
  CarriedRolloutState,
  OwedSignal,
  PromotionDiff,
  RolloutPhase,
  RolloutPolicy,
  RolloutProgress,
} from '../contract/rollout';
import type { SeenVersions } from '../contract/seen-versions';
import { seenField } from './seen-versions';

export type KymaPhase = 'pending' | 'upgrading' | 'done' | 'failed';

/** A Kyma of the rollout: its wave, its phase, when it was admitted and why it failed. */
export interface KymaEntry {
  wave: number;
  phase: KymaPhase;
  admittedAt?: number;
  message?: string;
}

/** How a Kyma's phase is carried across continue-as-new: one letter. */
const LETTER: Record<KymaPhase, string> = { pending: 'p', upgrading: 'u', done: 'd', failed: 'f' };
const PHASE_OF: Record<string, KymaPhase> = { p: 'pending', u: 'upgrading', d: 'done', f: 'failed' };

/** A rollout as it stands: what one run hands the next. */
export interface RolloutStanding {
  version?: string;
  phase: RolloutPhase;
  message: string;
  from?: string;
  policy?: RolloutPolicy;
  waves: string[][];
  wave: number;
  kymas: Map<string, KymaEntry>;
  diff?: PromotionDiff;
  seen: SeenVersions;
  soakUntil?: number;
  /** Failures and settled Kymas when the budget was last reset (by resume). */
  base: { failed: number; settled: number };
  actions: RolloutProgress['actions'];
  /** The phase to go back to on resume from a pause. */
  pausedFrom?: RolloutPhase;
  /** Kymas that said they hold the module for a version (kyma → version), not taken in yet. */
  joiners: Map<string, string>;
  /** Steps owed to Kymas before anything else. */
  outbox: OwedSignal[];
  /** The newest promotion not yet begun. */
  promotedTo?: string;
}

/** The rollout as it stands, for a new run to go on where this one is. */
export function carryRollout(r: RolloutStanding): CarriedRollout {
  const admittedAt: Record<string, number> = {};
  const failures: Record<string, string> = {};
  for (const [name, k] of r.kymas) {
    if (k.phase === 'upgrading') admittedAt[name] = k.admittedAt!;
    if (k.phase === 'failed') failures[name] = k.message ?? '';
  }
  const state: CarriedRolloutState = {
    message: r.message,
    ...(r.from ? { from: r.from } : {}),
    ...(r.policy ? { policy: r.policy } : {}),
    waves: r.waves,
    phases: r.waves.map((w) => w.map((name) => LETTER[r.kymas.get(name)!.phase]).join('')),
    wave: r.wave,
    admittedAt,
    failures,
    ...(r.diff ? { diff: compactDiff(r.diff, r.waves) } : {}),
    ...seenField(r.seen),
    ...(r.soakUntil !== undefined ? { soakUntil: r.soakUntil } : {}),
    base: r.base,
    actions: r.actions,
    ...(r.pausedFrom ? { pausedFrom: r.pausedFrom } : {}),
    joiners: Object.fromEntries(r.joiners),
    owed: r.outbox,
    ...(r.promotedTo ? { promoted: r.promotedTo } : {}),
  };
  return { version: r.version ?? '', phase: r.phase, state };
}

/** The rollout a run before carried (`version` and `phase` beside its `state`), as it stood. */
export function restoreRollout(version: string, phase: RolloutPhase, s: CarriedRolloutState): RolloutStanding {
  const kymas = new Map<string, KymaEntry>();
  s.waves.forEach((w, i) =>
    w.forEach((name, j) => {
      const p = PHASE_OF[s.phases[i]![j]!]!;
      kymas.set(name, {
        wave: i,
        phase: p,
        ...(p === 'upgrading' ? { admittedAt: s.admittedAt[name] } : {}),
        ...(p === 'failed' ? { message: s.failures[name] } : {}),
      });
    }),
  );
  const flat = s.waves.flat();
  return {
    version: version || undefined,
    phase,
    message: s.message,
    from: s.from,
    policy: s.policy,
    waves: s.waves,
    wave: s.wave,
    kymas,
    diff: s.diff && {
      version: s.diff.version,
      groups: s.diff.groups.map((g) => ({ ...g, kymas: g.kymas.map((k) => (typeof k === 'number' ? flat[k]! : k)) })),
    },
    seen: s.seen ?? {},
    soakUntil: s.soakUntil,
    base: s.base,
    actions: s.actions,
    pausedFrom: s.pausedFrom,
    joiners: new Map(Object.entries(s.joiners)),
    outbox: s.owed,
    promotedTo: s.promoted,
  };
}

/** The difference with its Kymas named by their position in the waves: each name is carried once. */
function compactDiff(diff: PromotionDiff, waves: string[][]): CarriedRolloutState['diff'] {
  const position = new Map(waves.flat().map((kyma, i) => [kyma, i]));
  return {
    version: diff.version,
    groups: diff.groups.map((g) => ({ ...g, kymas: g.kymas.map((kyma) => position.get(kyma) ?? kyma) })),
  };
}
