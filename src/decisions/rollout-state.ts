// The decisions of one channel's rollout, without I/O: for each version the channel is promoted
// to, find the Kymas to move (plan), admit them wave by wave under a concurrency cap, wait for
// each wave to settle and soak, halt when the failure budget is spent, and follow operators'
// pause, resume and abort; and continue as new when the run's history grows long, carrying the
// rollout as it stands (rollout-carry.ts; what it shows: rollout-progress.ts). The workflow asks
// `next(now, history)` for a step, runs it and feeds back.
import type {
  CarriedRollout,
  CarriedRolloutState,
  ChannelRef,
  OperatorAction,
  OwedSignal,
  Promotion,
  PromotionDiff,
  RolloutPhase,
  RolloutPlan,
  RolloutPlanView,
  RolloutPolicy,
  RolloutProgress,
  RolloutReport,
  RolloutWaiting,
} from '../contract/rollout';
import type { SeenVersions } from '../contract/seen-versions';
import { carryRollout, restoreRollout, type KymaEntry, type KymaPhase, type RolloutStanding } from './rollout-carry';
import { rolloutPlanView, rolloutProgress } from './rollout-progress';
import { budgetExceeded, cutWaves } from './rollout-policy';
import { mergeSeen, seenField } from './seen-versions';

export type RolloutStep =
  | { kind: 'plan'; version: string; seen?: SeenVersions }
  /** Admissions or news of an abort, to these Kymas. */
  | OwedSignal
  /** Search attributes and the UI's details changed. */
  | { kind: 'publish'; progress: RolloutProgress }
  /** Until a signal or update, or `untilMs` (workflow time). */
  | { kind: 'wait'; untilMs?: number }
  /** Continue as new with `carried`: for a newer promotion while this one is under way, or because the run's history grew long. */
  | { kind: 'restart'; carried: CarriedRollout };

/** What the workflow knows of its run's history: its length in events, and whether Temporal suggests continuing as new. */
export interface RunHistory {
  events: number;
  suggested: boolean;
}

export interface RolloutOptions {
  /**
   * Continue as new past this many history events (ROLLOUT_CONTINUE_AS_NEW_EVENTS by default),
   * or when Temporal suggests it; a step signals at most `STEP_KYMAS` Kymas, so that it never
   * outgrows what is left.
   */
  continueAsNewAfterEvents?: number;
}

/**
 * A rollout continues as new past this many events of its history, unless Temporal suggests it
 * sooner (by default past 4,096 events or 4 MB): a fifth of Temporal's limit of 50,000, so that
 * what may happen before its next step (a step's signals to at most 1,000 Kymas, their
 * reports) fits many times over in what is left, also where a server suggests nothing.
 */
export const ROLLOUT_CONTINUE_AS_NEW_EVENTS = 10_000;

/** Kymas signalled in one step at most. */
export const STEP_KYMAS = 1_000;

/** Phases in which the rollout admits nobody until an operator or a promotion acts. */
const STOPPED: RolloutPhase[] = ['Idle', 'Waiting', 'Paused', 'Halted', 'Completed', 'Aborted'];

export class RolloutState {
  phase: RolloutPhase = 'Idle';
  version?: string;
  from?: string;
  policy?: RolloutPolicy;
  waves: string[][] = [];
  wave = 0;
  /** The object-level difference of the version planned. */
  diff?: PromotionDiff;
  private message = 'no promotion yet';
  private readonly kymas = new Map<string, KymaEntry>();
  /** The newest promotion not yet begun. */
  private promotedTo?: string;
  private seen: SeenVersions = {};
  private soakUntil?: number;
  /** Failures and settled Kymas when the budget was last reset (by resume). */
  private base = { failed: 0, settled: 0 };
  private actions: RolloutProgress['actions'] = [];
  private lastPublished = '';
  private planning = false;
  /** The phase to go back to on resume from a pause. */
  private pausedFrom?: RolloutPhase;
  /** Kymas that said they hold the module for a version (kyma → version), not taken in yet. */
  private readonly joiners = new Map<string, string>();
  /** Steps owed to Kymas before anything else (admissions of late joiners, news of an abort). */
  private outbox: OwedSignal[] = [];
  private readonly continueAsNewAfterEvents: number;
  /** The history's length at this run's first step. */
  private firstEvents?: number;

  constructor(
    readonly channel: ChannelRef,
    carried?: CarriedRollout,
    options: RolloutOptions = {},
  ) {
    this.continueAsNewAfterEvents = options.continueAsNewAfterEvents ?? ROLLOUT_CONTINUE_AS_NEW_EVENTS;
    if (!carried) return;
    if (carried.state) {
      // The history grew long: go on where the run before was.
      this.restore(carried.version, carried.phase, carried.state);
      return;
    }
    if (carried.next) {
      // The run for the next promotion: it begins at once, so that nothing (an update, a
      // query) mistakes the version left behind for the one rolling.
      this.version = carried.next;
      this.set(
        'Planning',
        `finding the Kymas on ${channel.channel} to move to ${carried.next} (the rollout of ${carried.version} ended ${carried.phase})`,
      );
      return;
    }
    this.version = carried.version;
    this.set(carried.phase, `${carried.phase.toLowerCase()} at ${carried.version}`);
  }

  // ---- signals and updates ---------------------------------------------------------------

  promoted(p: Promotion): void {
    this.seen = mergeSeen(this.seen, p.seen);
    // The version being rolled (or last rolled): a repeat of the same event, or the bridge relisting.
    if (p.version === (this.promotedTo ?? this.version)) return;
    this.promotedTo = p.version;
  }

  reported(r: RolloutReport): void {
    if (r.version !== this.version) return;
    const k = this.kymas.get(r.kyma);
    if (!k || k.phase === 'pending') return;
    if (r.state === 'Ready' || r.state === 'Warning' || r.state === 'Unmanaged') {
      k.phase = 'done';
      k.message = undefined;
    } else if (r.state === 'Error') {
      k.phase = 'failed';
      k.message = r.message ?? 'Error';
      this.checkBudget();
    }
  }

  /** A Kyma holds its module until this rollout admits the version: it is taken in (see `absorbJoiners`). */
  waiting(w: RolloutWaiting): void {
    this.joiners.set(w.kyma, w.version);
  }

  /** Why an update cannot be taken now, or undefined. */
  refusal(action: 'pause' | 'resume' | 'abort', a: OperatorAction | undefined): string | undefined {
    if (typeof a !== 'object' || a === null || typeof a.reason !== 'string' || !a.reason.trim())
      return `${action} needs { reason: "why" }: a non-empty reason, recorded with the rollout`;
    if (!this.version)
      return `no rollout to ${action}: ${this.channel.module} has not been promoted on ${this.channel.channel} since this workflow started`;
    switch (action) {
      case 'pause':
        return ['Rolling', 'Soaking', 'Waiting'].includes(this.phase)
          ? undefined
          : `the rollout of ${this.version} is ${this.phase}: only a rollout that is rolling, soaking or waiting can be paused`;
      case 'resume':
        return ['Paused', 'Halted', 'Waiting'].includes(this.phase)
          ? undefined
          : `the rollout of ${this.version} is ${this.phase}: only a paused, halted or waiting rollout can be resumed`;
      case 'abort':
        return ['Completed', 'Aborted', 'Idle'].includes(this.phase)
          ? `the rollout of ${this.version} is ${this.phase} already`
          : undefined;
    }
  }

  act(action: 'pause' | 'resume' | 'abort', a: OperatorAction, at: string): void {
    this.actions.push({ action, reason: a.reason, at });
    if (action === 'pause') {
      this.pausedFrom = this.phase;
      this.set('Paused', `paused: ${a.reason}`);
    } else if (action === 'abort') {
      this.set('Aborted', `aborted: ${a.reason}; the Kymas not reached stay at their version until the next promotion`);
      const notReached = [...this.kymas].filter(([, k]) => k.phase === 'pending').map(([name]) => name);
      if (notReached.length) this.outbox.push(...this.abortNews(notReached));
    } else if (this.phase === 'Paused' && this.pausedFrom) {
      this.set(this.pausedFrom === 'Waiting' ? 'Rolling' : this.pausedFrom, `resumed: ${a.reason}`);
    } else if (this.phase === 'Halted' && !this.policy) {
      // Halted on a policy that could not be read: plan again.
      this.planning = false;
      this.set('Planning', `resumed: ${a.reason}`);
    } else {
      this.base = { failed: this.count('failed'), settled: this.count('done') + this.count('failed') };
      this.set('Rolling', `resumed: ${a.reason}`);
    }
  }

  // ---- results ---------------------------------------------------------------------------

  /** `diff`: what the version changes, object by object, for the Kymas planned (absent in runs recorded before it was computed). */
  planned(plan: RolloutPlan, diff?: PromotionDiff): void {
    this.planning = false;
    this.diff = diff;
    // Aborted while the plan was read: nothing more to do for this version.
    if (this.phase === 'Aborted') return;
    if (plan.policyProblem) {
      this.policy = undefined;
      this.set(
        'Halted',
        `the rollout policy cannot be used: ${plan.policyProblem}; fix the ConfigMap klm-rollout-policy and resume`,
      );
      return;
    }
    this.policy = plan.policy;
    this.from = plan.from;
    this.waves = cutWaves(plan.kymas, plan.policy);
    this.kymas.clear();
    this.waves.forEach((w, i) => w.forEach((k) => this.kymas.set(k, { wave: i, phase: 'pending' })));
    this.wave = 0;
    if (this.waves.length === 0) return this.set('Completed', `no Kyma to move to ${this.version}`);
    if (plan.policy.start === 'manual')
      return this.set(
        'Waiting',
        `planned ${plan.kymas.length} Kymas in ${this.waves.length} waves; waiting for resume`,
      );
    this.set('Rolling', this.rollingMessage());
  }

  /** Admissions sent, but these Kymas' workflows are gone: nothing of theirs to move, they count as done. */
  gone(kymas: string[]): void {
    for (const name of kymas) {
      const k = this.kymas.get(name);
      if (k?.phase === 'upgrading') k.phase = 'done';
    }
  }

  // ---- what to do next -------------------------------------------------------------------

  /** `history`: this run's, in runs that continue as new by its length. */
  next(now: number, history?: RunHistory): RolloutStep {
    this.absorbJoiners(now);
    if (this.historyFull(history)) return { kind: 'restart', carried: this.snapshot() };
    const owed = this.outbox.shift();
    if (owed) return owed;
    if (this.promotedTo !== undefined && this.promotedTo !== this.version) {
      // A rollout under way is superseded; an idle or finished one simply begins the next.
      if (this.kymas.size > 0 || (this.version !== undefined && !STOPPED.includes(this.phase))) {
        return {
          kind: 'restart',
          carried: {
            version: this.version ?? '',
            phase: STOPPED.includes(this.phase) ? this.phase : 'Aborted',
            next: this.promotedTo,
          },
        };
      }
      this.version = this.promotedTo;
      this.promotedTo = undefined;
      this.set('Planning', `finding the Kymas on ${this.channel.channel} to move to ${this.version}`);
    }
    const publish = this.publishStep();
    if (publish) return publish;
    if (this.phase === 'Planning' && !this.planning) {
      this.planning = true;
      return { kind: 'plan', version: this.version!, ...seenField(this.seen) };
    }
    if (this.phase === 'Rolling') return this.roll(now) ?? this.next(now);
    if (this.phase === 'Soaking') {
      if (now >= this.soakUntil!) {
        this.advance();
        return this.next(now);
      }
      return { kind: 'wait', untilMs: this.soakUntil };
    }
    return { kind: 'wait' };
  }

  /** The plan of the version rolling, as the `plan` query and `klm rollout plan` show it; null before one is planned. */
  planView(): RolloutPlanView | null {
    return rolloutPlanView(this.channel, this.standing());
  }

  progress(): RolloutProgress {
    return rolloutProgress(this.channel, this.standing());
  }

  // ---- joiners ---------------------------------------------------------------------------

  /**
   * Kymas that hold the module for the version rolling and are not in its plan (they did not
   * follow the module on the channel when it was planned, say) join it: into the wave under way
   * (the next one while a wave soaks), admitted at once when the rollout completed already,
   * told when it was aborted. A Kyma admitted before that still waits lost its admission (its
   * module left and came back): it is admitted again the same way. Joiners for a version not
   * planned yet wait for its plan; those for an older version are dropped.
   */
  private absorbJoiners(now: number): void {
    if (this.joiners.size === 0 || this.phase === 'Idle' || this.phase === 'Planning') return;
    const aborted: string[] = [];
    for (const [kyma, version] of this.joiners) {
      if (version !== this.version) {
        if (version !== this.promotedTo) this.joiners.delete(kyma);
        continue;
      }
      if (this.phase === 'Halted' && !this.policy) continue; // not planned: the plan after resume takes it in
      this.joiners.delete(kyma);
      const k = this.kymas.get(kyma);
      if (this.phase === 'Aborted') {
        // Reached or not, it waits: it hears why it stays (its news may have been lost to a continue-as-new).
        aborted.push(kyma);
        continue;
      }
      if (k?.phase === 'pending' || k?.phase === 'upgrading') continue;
      if (this.phase === 'Completed') {
        this.place(kyma, Math.max(0, this.waves.length - 1), { phase: 'upgrading', admittedAt: now });
        this.outbox.push({ kind: 'admit', version: this.version, kymas: [kyma], ...seenField(this.seen) });
      } else {
        const last = this.wave >= this.waves.length - 1;
        if (this.phase === 'Soaking' && last) this.set('Rolling', this.rollingMessage());
        this.place(kyma, this.phase === 'Soaking' ? this.wave + 1 : this.wave, { phase: 'pending' });
      }
    }
    if (aborted.length) this.outbox.push(...this.abortNews(aborted));
  }

  /** Puts a Kyma into a wave (out of the one it was in). */
  private place(kyma: string, wave: number, entry: Omit<KymaEntry, 'wave'>): void {
    const had = this.kymas.get(kyma);
    if (had) this.waves[had.wave] = this.waves[had.wave]!.filter((k) => k !== kyma);
    while (this.waves.length <= wave) this.waves.push([]);
    this.waves[wave]!.push(kyma);
    this.kymas.set(kyma, { wave, ...entry });
  }

  /** The news of the abort to these Kymas, a step's worth at a time. */
  private abortNews(kymas: string[]): OwedSignal[] {
    const reason = [...this.actions].reverse().find((a) => a.action === 'abort')?.reason;
    const message = `the rollout of ${this.version} on channel ${this.channel.channel} was aborted${reason ? `: ${reason}` : ''}`;
    const news: OwedSignal[] = [];
    for (let i = 0; i < kymas.length; i += this.stepKymas())
      news.push({ kind: 'notify', version: this.version!, kymas: kymas.slice(i, i + this.stepKymas()), message });
    return news;
  }

  /** Kymas signalled in one step at most. */
  private stepKymas(): number {
    return STEP_KYMAS;
  }

  // ---- continue-as-new -------------------------------------------------------------------

  /**
   * Past the threshold, or when Temporal suggests it, and only once this run has moved the
   * rollout on (its history grew since its first step): a run always does something, whatever
   * the threshold. Asked between steps, when nothing is under way.
   */
  private historyFull(history: RunHistory | undefined): boolean {
    if (!history) return false;
    this.firstEvents ??= history.events;
    return history.events > this.firstEvents && (history.suggested || history.events >= this.continueAsNewAfterEvents);
  }

  /** The rollout as it stands, for a new run to go on where this one is. */
  private snapshot(): CarriedRollout {
    return carryRollout(this.standing());
  }

  /** The rollout as it stands: what its views show and a new run goes on from. */
  private standing(): RolloutStanding {
    return {
      version: this.version,
      phase: this.phase,
      message: this.message,
      from: this.from,
      policy: this.policy,
      waves: this.waves,
      wave: this.wave,
      kymas: this.kymas,
      diff: this.diff,
      seen: this.seen,
      soakUntil: this.soakUntil,
      base: this.base,
      actions: this.actions,
      pausedFrom: this.pausedFrom,
      joiners: this.joiners,
      outbox: this.outbox,
      promotedTo: this.promotedTo,
    };
  }

  private restore(version: string, phase: RolloutPhase, s: CarriedRolloutState): void {
    const r = restoreRollout(version, phase, s);
    this.version = r.version;
    this.set(r.phase, r.message);
    this.from = r.from;
    this.policy = r.policy;
    this.waves = r.waves;
    this.wave = r.wave;
    for (const [name, k] of r.kymas) this.kymas.set(name, k);
    this.diff = r.diff;
    this.seen = r.seen;
    this.soakUntil = r.soakUntil;
    this.base = r.base;
    this.actions = r.actions;
    this.pausedFrom = r.pausedFrom;
    for (const [kyma, v] of r.joiners) this.joiners.set(kyma, v);
    this.outbox = r.outbox;
    this.promotedTo = r.promotedTo;
  }

  // ---- rolling ---------------------------------------------------------------------------

  /** The next admissions, a wait for the wave, or undefined when the phase changed. */
  private roll(now: number): RolloutStep | undefined {
    const policy = this.policy!;
    const wave = this.waves[this.wave]!;
    const entries = wave.map((name) => [name, this.kymas.get(name)!] as const);
    // A Kyma silent for longer than the wave timeout has failed.
    for (const [, k] of entries) {
      if (k.phase === 'upgrading' && now - k.admittedAt! >= policy.waveTimeoutMs) {
        k.phase = 'failed';
        k.message = `not Ready ${Math.round(policy.waveTimeoutMs / 60_000)} min after its admission`;
        this.checkBudget();
      }
    }
    if (this.phase !== 'Rolling') return undefined;
    const upgrading = [...this.kymas.values()].filter((k) => k.phase === 'upgrading');
    const room = policy.maxConcurrent - upgrading.length;
    const pending = entries.filter(([, k]) => k.phase === 'pending').map(([n]) => n);
    if (room > 0 && pending.length > 0) {
      // Upgrading from now on: a report may arrive while the admissions are still being sent.
      const admit = pending.slice(0, Math.min(room, this.stepKymas()));
      for (const name of admit) Object.assign(this.kymas.get(name)!, { phase: 'upgrading', admittedAt: now });
      return { kind: 'admit', version: this.version!, kymas: admit, ...seenField(this.seen) };
    }
    if (pending.length === 0 && entries.every(([, k]) => k.phase === 'done' || k.phase === 'failed')) {
      if (policy.soakMs > 0) {
        this.soakUntil = now + policy.soakMs;
        this.set(
          'Soaking',
          `wave ${this.wave + 1} of ${this.waves.length} settled; soaking until its modules have stayed Ready for ${Math.round(policy.soakMs / 1000)} s`,
        );
      } else {
        this.advance();
      }
      return undefined;
    }
    const oldest = Math.min(...upgrading.map((k) => k.admittedAt!));
    return { kind: 'wait', untilMs: oldest + policy.waveTimeoutMs };
  }

  private advance(): void {
    this.wave++;
    if (this.wave >= this.waves.length) {
      const failed = this.count('failed');
      this.set('Completed', `all ${this.kymas.size} Kymas reached${failed ? `; ${failed} failed` : ''}`);
    } else {
      this.set('Rolling', this.rollingMessage());
    }
  }

  private checkBudget(): void {
    if (!this.policy || STOPPED.includes(this.phase)) return;
    const failed = this.count('failed') - this.base.failed;
    const settled = this.count('done') + this.count('failed') - this.base.settled;
    if (!budgetExceeded(this.policy, failed, settled)) return;
    this.set(
      'Halted',
      `halted: ${failed} of ${settled} Kymas reached failed, beyond the failure budget ` +
        `(${this.policy.failureBudget}); the Kymas not reached stay at their version; resume or ` +
        `abort`,
    );
  }

  private rollingMessage(): string {
    return `wave ${this.wave + 1} of ${this.waves.length}: moving ${this.waves[this.wave]!.length} Kymas to ${this.version}`;
  }

  private count(phase: KymaPhase): number {
    let n = 0;
    for (const k of this.kymas.values()) if (k.phase === phase) n++;
    return n;
  }

  private set(phase: RolloutPhase, message: string): void {
    this.phase = phase;
    this.message = message;
  }

  private publishStep(): RolloutStep | undefined {
    const progress = this.progress();
    const key = JSON.stringify([progress.phase, progress.version, progress.wave, progress.message]);
    if (key === this.lastPublished) return undefined;
    this.lastPublished = key;
    return { kind: 'publish', progress };
  }
}
