// Rollouts without Temporal: the policy operators write, the plan, the waves with their soak and
// failure budget, the operators' actions, and the Kyma's gate that holds a module until admitted.
import { describe, expect, it } from 'vitest';
import type { Kyma, KymaModule } from '../../../src/api/kyma';
import type { KymaSnapshot, SpecModule } from '../../../src/contract/kyma';
import type { Resolution } from '../../../src/contract/module';
import type { CarriedRollout, RolloutPolicy } from '../../../src/contract/rollout';
import { KymaState, type KymaStep } from '../../../src/decisions/kyma-state';
import { diffObjects } from '../../../src/decisions/object-diff';
import { rolloutCandidates } from '../../../src/decisions/rollout-plan';
import {
  budgetExceeded,
  cutWaves,
  DEFAULT_ROLLOUT_POLICY,
  parseDuration,
  rolloutPolicyOf,
} from '../../../src/decisions/rollout-policy';
import {
  RolloutState,
  STEP_KYMAS,
  type RolloutOptions,
  type RolloutStep,
  type RunHistory,
} from '../../../src/decisions/rollout-state';
import { wantsMandatoryFinalizer } from '../../../src/starter/mandatory-finalizer';
import { mod, SETTINGS } from './fixtures';

const CHANNEL = { namespace: 'kcp', module: 'greeter', channel: 'regular' };

describe('rollout policy', () => {
  it('reads what operators write over the default, and says what is wrong with the rest', () => {
    expect(rolloutPolicyOf({ waves: [1, '10%'], soak: '1m30s', failureBudget: 0, start: 'manual' })).toEqual({
      policy: { ...DEFAULT_ROLLOUT_POLICY, waves: [1, '10%'], soakMs: 90_000, failureBudget: 0, start: 'manual' },
    });
    expect(rolloutPolicyOf({ waves: [0] }).problem).toBe(
      'waves: the size 0 is neither a positive whole count (5) nor a share between 0 and 100 % ("10%")',
    );
    expect(rolloutPolicyOf({ waves: ['150%'] }).problem).toMatch(/150%/);
    expect(rolloutPolicyOf({ soak: 'ten minutes' }).problem).toBe(
      'soak "ten minutes" is not a duration ("90s", "10m", "1h")',
    );
    expect(rolloutPolicyOf({ wave: [] }).problem).toMatch(/^unknown field wave/);
    expect(rolloutPolicyOf('waves: 3').problem).toMatch(/must be a map/);
    expect(rolloutPolicyOf({ maxConcurrent: 0 }).problem).toMatch(/at least 1/);
    expect(rolloutPolicyOf({ start: 'now' }).problem).toMatch(/auto or manual/);
    expect(parseDuration('250ms')).toBe(250);
    expect(parseDuration('1h')).toBe(3_600_000);
  });

  it('takes quoted counts as counts (YAML reads "5" as a string)', () => {
    expect(rolloutPolicyOf({ waves: ['1', '2', '10%'], maxConcurrent: '10', failureBudget: '2' })).toEqual({
      policy: { ...DEFAULT_ROLLOUT_POLICY, waves: [1, 2, '10%'], maxConcurrent: 10, failureBudget: 2 },
    });
    expect(rolloutPolicyOf({ failureBudget: '0' }).policy?.failureBudget).toBe(0);
    expect(cutWaves(['a', 'b', 'c', 'd'], rolloutPolicyOf({ waves: ['1', '2'] }).policy!)).toEqual([
      ['a'],
      ['b', 'c'],
      ['d'],
    ]);
  });

  it.each([
    [
      'waves',
      { waves: ['abc'] },
      'waves: the size "abc" is neither a positive whole count (5) nor a share between 0 and 100 % ("10%")',
    ],
    ['waves', { waves: ['-1'] }, 'waves: the size "-1" is neither'],
    ['waves', { waves: [-1] }, 'waves: the size -1 is neither'],
    ['waves', { waves: ['1.5'] }, 'waves: the size "1.5" is neither'],
    ['waves', { waves: [2.5] }, 'waves: the size 2.5 is neither'],
    ['waves', { waves: '1' }, 'waves "1" must be a list of sizes'],
    ['maxConcurrent', { maxConcurrent: 'abc' }, 'maxConcurrent "abc" must be a whole number of at least 1'],
    ['maxConcurrent', { maxConcurrent: '-3' }, 'maxConcurrent "-3" must be a whole number of at least 1'],
    ['maxConcurrent', { maxConcurrent: '2.5' }, 'maxConcurrent "2.5" must be a whole number of at least 1'],
    ['maxConcurrent', { maxConcurrent: '0' }, 'maxConcurrent "0" must be a whole number of at least 1'],
    [
      'failureBudget',
      { failureBudget: 'abc' },
      'failureBudget "abc" must be a whole count (0, 2) or a share of the Kymas reached ("5%")',
    ],
    ['failureBudget', { failureBudget: '-1' }, 'failureBudget "-1" must be a whole count'],
    ['failureBudget', { failureBudget: 1.5 }, 'failureBudget 1.5 must be a whole count'],
  ] as const)('refuses a %s that is no count, naming the key and the value', (_key, raw, problem) => {
    expect(rolloutPolicyOf(raw).problem).toContain(problem);
  });

  it('cuts the default into a 1 % canary and growing waves, the rest last; no waves is one wave', () => {
    const kymas = Array.from({ length: 1000 }, (_, i) => `k${i}`);
    expect(cutWaves(kymas, DEFAULT_ROLLOUT_POLICY).map((w) => w.length)).toEqual([10, 100, 300, 590]);
    expect(cutWaves(kymas.slice(0, 3), DEFAULT_ROLLOUT_POLICY).map((w) => w.length)).toEqual([1, 1, 1]);
    expect(cutWaves(kymas, { ...DEFAULT_ROLLOUT_POLICY, waves: [] }).map((w) => w.length)).toEqual([1000]);
    expect(cutWaves([], DEFAULT_ROLLOUT_POLICY)).toEqual([]);
  });

  it('spends the budget as a count, or as a share of the Kymas reached', () => {
    expect(budgetExceeded({ ...DEFAULT_ROLLOUT_POLICY, failureBudget: 2 }, 2, 10)).toBe(false);
    expect(budgetExceeded({ ...DEFAULT_ROLLOUT_POLICY, failureBudget: 2 }, 3, 10)).toBe(true);
    expect(budgetExceeded({ ...DEFAULT_ROLLOUT_POLICY, failureBudget: '5%' }, 1, 1)).toBe(true);
    expect(budgetExceeded({ ...DEFAULT_ROLLOUT_POLICY, failureBudget: '5%' }, 1, 40)).toBe(false);
  });
});

describe('rollout plan', () => {
  const kyma = (
    name: string,
    module: Omit<KymaModule, 'name'> | undefined,
    over: { channel?: string; priority?: string; status?: string } = {},
  ): Kyma => ({
    apiVersion: 'operator.kyma-project.io/v1beta2',
    kind: 'Kyma',
    metadata: {
      name,
      namespace: 'kcp',
      ...(over.priority ? { labels: { 'operator.kyma-project.io/rollout-priority': over.priority } } : {}),
    },
    spec: { channel: over.channel ?? 'regular', modules: module ? [{ name: 'greeter', ...module }] : [] },
    ...(over.status ? { status: { modules: [{ name: 'greeter', version: over.status, state: 'Ready' }] } } : {}),
  });

  it('takes the Kymas that follow the module on the channel and do not run the version, by priority then name', () => {
    const plan = rolloutCandidates(
      [
        kyma('b', {}, { status: '1.0.0' }),
        kyma('a', {}, { status: '1.0.0' }),
        kyma('z', {}, { priority: '1', status: '1.0.0' }),
        kyma('pinned', { version: '1.0.0' }),
        kyma('fast', {}, { channel: 'fast' }),
        kyma('own-channel', { channel: 'fast' }),
        kyma('moved-own', { channel: 'regular' }, { channel: 'fast', status: '0.9.0' }),
        kyma('unmanaged', { managed: false }),
        kyma('none', undefined),
        kyma('there', {}, { status: '1.1.0' }),
      ],
      CHANNEL,
      '1.1.0',
    );
    expect(plan).toEqual({ kymas: ['z', 'a', 'b', 'moved-own'], from: '1.0.0' });
  });

  it('takes, on the channel "mandatory", every Kyma that does not list the module itself and is not paused or being deleted', () => {
    const paused = kyma('paused', undefined);
    paused.metadata.labels = { 'operator.kyma-project.io/skip-reconciliation': 'true' };
    const deleting = kyma('deleting', undefined);
    deleting.metadata.deletionTimestamp = '2026-11-22T00:00:00Z';
    const plan = rolloutCandidates(
      [kyma('b', undefined), kyma('a', undefined, { channel: 'fast' }), kyma('lists-it', {}), paused, deleting],
      { ...CHANNEL, channel: 'mandatory' },
      '2.0.0',
    );
    expect(plan).toEqual({ kymas: ['a', 'b'] });
  });
});

describe('the object-level difference of a promotion', () => {
  const obj = (
    apiVersion: string,
    kind: string,
    name: string,
    namespace?: string,
    extra: Record<string, unknown> = {},
  ) => ({ apiVersion, kind, metadata: { name, ...(namespace ? { namespace } : {}) }, ...extra });

  it('names what is added, changed and removed; key order does not make a change', () => {
    const before = [
      obj('v1', 'ConfigMap', 'kept', 'ns', { data: { a: '1', b: '2' } }),
      obj('apps/v1', 'Deployment', 'manager', 'ns', { spec: { replicas: 1 } }),
      obj('rbac.authorization.k8s.io/v1', 'ClusterRole', 'gone'),
    ];
    const after = [
      obj('v1', 'ConfigMap', 'kept', 'ns', { data: { b: '2', a: '1' } }),
      obj('apps/v1', 'Deployment', 'manager', 'ns', { spec: { replicas: 2 } }),
      obj('v1', 'ConfigMap', 'new', 'ns'),
    ];
    expect(diffObjects(before, after)).toEqual({
      added: ['ConfigMap ns/new'],
      changed: ['Deployment.apps ns/manager'],
      removed: ['ClusterRole.rbac.authorization.k8s.io gone'],
    });
    expect(diffObjects([], after).added).toHaveLength(3);
  });

  it('keeps a hundred names per list and counts the rest', () => {
    const many = Array.from({ length: 130 }, (_, i) => obj('v1', 'ConfigMap', `c${String(i).padStart(3, '0')}`, 'ns'));
    const d = diffObjects([], many);
    expect({ kept: d.added.length, first: d.added[0], more: d.more }).toEqual({
      kept: 100,
      first: 'ConfigMap ns/c000',
      more: 30,
    });
  });
});

describe('the finalizer of a mandatory ModuleReleaseMeta', () => {
  const meta = (mandatory: boolean, deleting = false) => ({
    metadata: { name: 'logging', ...(deleting ? { deletionTimestamp: '2026-11-22T00:00:00Z' } : {}) },
    spec: { moduleName: 'logging', ...(mandatory ? { mandatory: { version: '1.0.0' } } : { channels: [] }) },
  });

  it('is wanted while the module is mandatory, and while a mandatory Manifest of it is left', () => {
    expect(wantsMandatoryFinalizer(meta(true), 0)).toBe(true);
    expect(wantsMandatoryFinalizer(meta(true, true), 3)).toBe(true);
    expect(wantsMandatoryFinalizer(meta(true, true), 0)).toBe(false);
    expect(wantsMandatoryFinalizer(meta(false), 1)).toBe(true);
    expect(wantsMandatoryFinalizer(meta(false), 0)).toBe(false);
  });
});

/**
 * Drives a rollout as its workflow does: answers plans with these Kymas, records admissions (and
 * news of an abort), tells each step the run's history (`grow` lengthens it) and, on
 * `continueAsNew`, goes on in a fresh state from what the restart carried, as the next run.
 */
function driver(policy: Partial<RolloutPolicy>, kymas: string[], options: RolloutOptions = {}) {
  let st = new RolloutState(CHANNEL, undefined, options);
  const admitted: string[][] = [];
  const notified: { kymas: string[]; message: string }[] = [];
  let now = 1_000;
  let history: RunHistory = { events: 3, suggested: false };
  /** One step, run. */
  function one(): RolloutStep {
    const step = st.next(now, history);
    if (step.kind === 'plan') st.planned({ kymas, policy: { ...DEFAULT_ROLLOUT_POLICY, ...policy } });
    else if (step.kind === 'admit') admitted.push(step.kymas);
    else if (step.kind === 'notify') notified.push({ kymas: step.kymas, message: step.message });
    return step;
  }
  /** Steps until a wait or a restart. */
  function run(): RolloutStep {
    for (let i = 0; i < 100; i++) {
      const step = one();
      if (step.kind === 'wait' || step.kind === 'restart') return step;
    }
    throw new Error('no wait');
  }
  const report = (kymas: string[], state: 'Ready' | 'Error', version = '1.1.0') =>
    kymas.forEach((kyma) =>
      st.reported({ kyma, version, state, message: state === 'Error' ? 'ApplyRejected' : undefined }),
    );
  return {
    get st() {
      return st;
    },
    admitted,
    notified,
    one,
    run,
    report,
    advance: (ms: number) => (now += ms),
    at: () => now,
    grow: (events: number, suggested = false) => (history = { events: history.events + events, suggested }),
    continueAsNew(step: RolloutStep) {
      if (step.kind !== 'restart') throw new Error(`no restart but ${step.kind}`);
      st = new RolloutState(CHANNEL, JSON.parse(JSON.stringify(step.carried)) as CarriedRollout, options);
      history = { events: 3, suggested: false };
    },
  };
}

describe('RolloutState: waves', () => {
  const kymas = Array.from({ length: 10 }, (_, i) => `k${i}`);

  it('admits wave by wave under the concurrency cap, soaks after each, and completes', () => {
    const d = driver({ waves: [2, 3], soakMs: 60_000, maxConcurrent: 2, failureBudget: 0 }, kymas);
    d.st.promoted({ version: '1.1.0' });
    expect(d.run()).toEqual({ kind: 'wait', untilMs: d.at() + DEFAULT_ROLLOUT_POLICY.waveTimeoutMs });
    expect(d.admitted).toEqual([['k0', 'k1']]);
    d.report(['k0', 'k1'], 'Ready');
    expect(d.run()).toEqual({ kind: 'wait', untilMs: d.at() + 60_000 });
    expect(d.st.phase).toBe('Soaking');
    d.advance(60_000);
    d.run();
    // Wave 2 of 3 Kymas, two at a time.
    expect(d.admitted.slice(1)).toEqual([['k2', 'k3']]);
    d.report(['k2'], 'Ready');
    d.run();
    expect(d.admitted.slice(2)).toEqual([['k4']]);
    d.report(['k3', 'k4'], 'Ready');
    d.run();
    d.advance(60_000);
    d.run();
    d.report(['k5', 'k6'], 'Ready');
    d.run();
    d.report(['k7', 'k8'], 'Ready');
    d.run();
    d.report(['k9'], 'Ready');
    d.run();
    d.advance(60_000);
    expect(d.run()).toEqual({ kind: 'wait' });
    expect(d.st.progress()).toMatchObject({
      phase: 'Completed',
      waves: [
        { size: 2, done: 2 },
        { size: 3, done: 3 },
        { size: 5, done: 5 },
      ],
    });
  });

  it('one wave without soak is everyone at once', () => {
    const d = driver({ waves: [], soakMs: 0, maxConcurrent: 1000 }, kymas);
    d.st.promoted({ version: '1.1.0' });
    d.run();
    expect(d.admitted).toEqual([kymas]);
    d.report(kymas, 'Ready');
    d.run();
    expect(d.st.phase).toBe('Completed');
  });

  it('halts beyond the failure budget, also during the soak, and holds the rest until resumed', () => {
    const d = driver({ waves: [3], soakMs: 60_000, failureBudget: 1 }, kymas);
    d.st.promoted({ version: '1.1.0' });
    d.run();
    d.report(['k0'], 'Error');
    d.report(['k1', 'k2'], 'Ready');
    d.run();
    expect(d.st.phase).toBe('Soaking');
    d.report(['k1'], 'Error');
    expect(d.run()).toEqual({ kind: 'wait' });
    expect(d.st.progress()).toMatchObject({
      phase: 'Halted',
      failed: [{ kyma: 'k0', message: 'ApplyRejected' }, { kyma: 'k1' }],
    });
    expect(d.admitted).toEqual([['k0', 'k1', 'k2']]);
    // A report of another version changes nothing.
    d.report(['k2'], 'Error', '1.0.0');
    expect(d.st.progress().failed).toHaveLength(2);
    expect(d.st.refusal('pause', { reason: 'x' })).toMatch(/is Halted/);
    // Resumed during the soak: the wave soaks again (with a fresh budget), then the rest goes.
    d.st.act('resume', { reason: 'known issue' }, 'now');
    d.run();
    expect(d.st.phase).toBe('Soaking');
    d.advance(60_000);
    d.run();
    expect(d.admitted.at(-1)).toEqual(kymas.slice(3));
  });

  it('counts a Kyma silent past the wave timeout as failed', () => {
    const d = driver({ waves: [], soakMs: 0, failureBudget: 0, waveTimeoutMs: 1000 }, ['k0']);
    d.st.promoted({ version: '1.1.0' });
    d.run();
    d.advance(1000);
    d.run();
    expect(d.st.progress()).toMatchObject({
      phase: 'Halted',
      failed: [{ kyma: 'k0', message: 'not Ready 0 min after its admission' }],
    });
  });

  it('pauses and resumes where it was; abort ends the version for good; bad arguments are refused', () => {
    const d = driver({ waves: [1], soakMs: 0 }, kymas);
    expect(d.st.refusal('pause', { reason: 'x' })).toMatch(/no rollout to pause/);
    d.st.promoted({ version: '1.1.0' });
    d.run();
    expect(d.st.refusal('pause', { reason: '  ' })).toMatch(/non-empty reason/);
    expect(d.st.refusal('pause', undefined)).toMatch(/non-empty reason/);
    expect(d.st.refusal('resume', { reason: 'x' })).toMatch(/is Rolling/);
    d.st.act('pause', { reason: 'look' }, 't1');
    d.report(['k0'], 'Ready');
    d.run();
    expect(d.admitted).toEqual([['k0']]);
    d.st.act('resume', { reason: 'ok' }, 't2');
    d.run();
    expect(d.admitted).toHaveLength(2);
    d.st.act('abort', { reason: 'bad' }, 't3');
    d.run();
    expect(d.admitted).toHaveLength(2);
    expect(d.st.refusal('abort', { reason: 'again' })).toMatch(/Aborted already/);
    expect(d.st.progress().actions.map((a) => a.action)).toEqual(['pause', 'resume', 'abort']);
    // The same version again (a relist) is no news; a newer one starts a fresh run.
    d.st.promoted({ version: '1.1.0' });
    expect(d.run()).toEqual({ kind: 'wait' });
    d.st.promoted({ version: '1.2.0' });
    expect(d.run()).toEqual({ kind: 'restart', carried: { version: '1.1.0', phase: 'Aborted', next: '1.2.0' } });
  });

  it('a run for the next promotion begins it at once: updates and queries see the new version', () => {
    const st = new RolloutState(CHANNEL, { version: '1.1.0', phase: 'Halted', next: '1.2.0' });
    expect(st.progress()).toMatchObject({
      version: '1.2.0',
      phase: 'Planning',
      message: expect.stringMatching(/rollout of 1\.1\.0 ended Halted/) as unknown,
    });
    expect(st.refusal('resume', { reason: 'x' })).toMatch(/of 1\.2\.0 is Planning/);
    expect(st.next(0)).toMatchObject({ kind: 'publish' });
    expect(st.next(0)).toMatchObject({ kind: 'plan', version: '1.2.0' });
  });

  it('waits for resume before the first wave when the policy starts manually', () => {
    const d = driver({ waves: [], soakMs: 0, start: 'manual' }, kymas);
    d.st.promoted({ version: '1.1.0' });
    d.run();
    expect(d.st.phase).toBe('Waiting');
    expect(d.admitted).toEqual([]);
    d.st.act('resume', { reason: 'plan reviewed' }, 't');
    d.run();
    expect(d.admitted).toEqual([kymas]);
  });

  it('halts on a policy it cannot use, and plans again on resume', () => {
    const st = new RolloutState(CHANNEL);
    st.promoted({ version: '1.1.0' });
    expect(st.next(0)).toMatchObject({ kind: 'publish' });
    expect(st.next(0)).toMatchObject({ kind: 'plan', version: '1.1.0' });
    st.planned({ kymas: ['k0'], policy: DEFAULT_ROLLOUT_POLICY, policyProblem: 'soak "x" is not a duration' });
    expect(st.progress().message).toMatch(/cannot be used: soak "x".*fix the ConfigMap klm-rollout-policy and resume/);
    st.act('resume', { reason: 'fixed' }, 't');
    expect(st.next(0)).toMatchObject({ kind: 'publish' });
    expect(st.next(0)).toMatchObject({ kind: 'plan' });
  });
});

describe('RolloutState: Kymas that join', () => {
  const policy = { waves: [1], soakMs: 60_000, maxConcurrent: 10, failureBudget: 0 };

  it('takes a Kyma that holds the module for the version rolling into the wave under way, or the next one while a wave soaks', () => {
    const d = driver(policy, ['k0', 'k1']);
    d.st.promoted({ version: '1.1.0' });
    d.run();
    expect(d.admitted).toEqual([['k0']]);
    d.st.waiting({ kyma: 'late', version: '1.1.0' });
    d.run();
    expect(d.admitted).toEqual([['k0'], ['late']]);
    d.report(['k0', 'late'], 'Ready');
    d.run();
    expect(d.st.phase).toBe('Soaking');
    d.st.waiting({ kyma: 'later', version: '1.1.0' });
    d.advance(60_000);
    d.run();
    expect(d.admitted.at(-1)).toEqual(['k1', 'later']);
    expect(d.st.progress().waves.map((w) => w.size)).toEqual([2, 2]);
  });

  it('admits a joiner at once when the version has rolled already, and takes in joiners the plan did not list', () => {
    const d = driver({ ...policy, soakMs: 0 }, []);
    d.st.waiting({ kyma: 'early', version: '1.1.0' });
    d.st.promoted({ version: '1.1.0' });
    d.run();
    expect(d.admitted).toEqual([['early']]);
    d.report(['early'], 'Ready');
    d.run();
    expect(d.st.phase).toBe('Completed');
    d.st.waiting({ kyma: 'lost', version: '1.1.0' });
    d.run();
    expect(d.admitted.at(-1)).toEqual(['lost']);
    // A Kyma still pending in its wave, or one waiting for an older version, changes nothing.
    d.st.waiting({ kyma: 'stale', version: '1.0.0' });
    d.run();
    expect(d.admitted).toHaveLength(2);
  });

  it('tells the Kymas not reached, and those that join later, that the rollout was aborted', () => {
    const d = driver(policy, ['k0', 'k1', 'k2']);
    d.st.promoted({ version: '1.1.0' });
    d.run();
    d.st.act('abort', { reason: 'canary broke' }, 't');
    d.run();
    expect(d.notified).toEqual([
      { kymas: ['k1', 'k2'], message: 'the rollout of 1.1.0 on channel regular was aborted: canary broke' },
    ]);
    d.st.waiting({ kyma: 'late', version: '1.1.0' });
    d.run();
    expect(d.notified.at(-1)).toEqual({
      kymas: ['late'],
      message: 'the rollout of 1.1.0 on channel regular was aborted: canary broke',
    });
    // A Kyma of the plan that asks again (its news lost to a continue-as-new) hears it again.
    d.st.waiting({ kyma: 'k1', version: '1.1.0' });
    d.run();
    expect(d.notified.at(-1)).toMatchObject({ kymas: ['k1'] });
    expect(d.admitted).toEqual([['k0']]);
  });
});

describe('RolloutState: continuing as new when its history grows long', () => {
  const kymas = Array.from({ length: 6 }, (_, i) => `k${i}`);
  const options = { continueAsNewAfterEvents: 100 };
  /** A rollout promoted to 1.1.0 that asks for its plan, its history still short. */
  const planning = () => {
    const st = new RolloutState(CHANNEL, undefined, options);
    st.promoted({ version: '1.1.0' });
    for (let i = 0; i < 2; i++) st.next(0, { events: 3, suggested: false });
    return st;
  };
  /** What operators see of a rollout: its progress, its plan, its waves. */
  const view = (st: RolloutState) => ({ progress: st.progress(), plan: st.planView(), waves: st.waves });
  /** What a restart carries, as the next run receives it (a JSON payload). */
  const carried = (step: RolloutStep): CarriedRollout => {
    if (step.kind !== 'restart') throw new Error(`no restart but ${step.kind}`);
    return JSON.parse(JSON.stringify(step.carried)) as CarriedRollout;
  };

  it('continues as new between steps once past the threshold; the next run goes on mid-wave with its admissions, reports and budget', () => {
    const d = driver(
      { waves: [3], soakMs: 0, maxConcurrent: 2, failureBudget: 1, waveTimeoutMs: 600_000 },
      kymas,
      options,
    );
    d.st.promoted({ version: '1.1.0', seen: { ModuleReleaseMeta: '7' } });
    d.run();
    expect(d.admitted).toEqual([['k0', 'k1']]);
    d.report(['k0'], 'Error');
    d.advance(5_000);
    expect(d.run()).toEqual({ kind: 'wait', untilMs: 1_000 + 600_000 });
    expect(d.admitted.at(-1)).toEqual(['k2']);
    // Below the threshold nothing happens; past it, the next step is the restart.
    d.grow(50);
    expect(d.run().kind).toBe('wait');
    d.grow(50);
    const restart = d.run();
    expect(restart).toMatchObject({ kind: 'restart', carried: { version: '1.1.0', phase: 'Rolling' } });
    const before = view(d.st);
    d.continueAsNew(restart);
    expect(view(d.st)).toEqual(before);
    // k1 and k2 are still upgrading since their admissions: the wave timeout counts from then.
    expect(d.run()).toEqual({ kind: 'wait', untilMs: 1_000 + 600_000 });
    expect(d.admitted).toHaveLength(2);
    // k0's failure counts: one more is beyond the budget.
    d.report(['k1'], 'Error');
    d.run();
    expect(d.st.progress()).toMatchObject({
      phase: 'Halted',
      failed: [
        { kyma: 'k0', message: 'ApplyRejected' },
        { kyma: 'k1', message: 'ApplyRejected' },
      ],
    });
    // Resumed: the next admission carries the promotion's versions, as before the restart.
    d.st.act('resume', { reason: 'known issue' }, 't');
    d.report(['k2'], 'Ready');
    let step = d.st.next(d.at());
    while (step.kind === 'publish') step = d.st.next(d.at());
    expect(step).toEqual({ kind: 'admit', version: '1.1.0', kymas: ['k3', 'k4'], seen: { ModuleReleaseMeta: '7' } });
  });

  it('carries a pause (who, why, from which phase): the next run stays paused, and resume goes back to the soak it interrupted', () => {
    const d = driver({ waves: [2], soakMs: 60_000, maxConcurrent: 10 }, kymas, options);
    d.st.promoted({ version: '1.1.0' });
    d.run();
    d.report(['k0', 'k1'], 'Ready');
    const soakUntil = d.at() + 60_000;
    expect(d.run()).toEqual({ kind: 'wait', untilMs: soakUntil });
    d.st.act('pause', { reason: 'look at the canaries' }, 't1');
    d.grow(200);
    const restart = d.run();
    const before = view(d.st);
    d.continueAsNew(restart);
    expect(view(d.st)).toEqual(before);
    expect(d.st.progress()).toMatchObject({
      phase: 'Paused',
      message: 'paused: look at the canaries',
      actions: [{ action: 'pause', reason: 'look at the canaries', at: 't1' }],
    });
    expect(d.st.refusal('pause', { reason: 'again' })).toMatch(/is Paused/);
    expect(d.run()).toEqual({ kind: 'wait' });
    d.st.act('resume', { reason: 'they look fine' }, 't2');
    expect(d.run()).toEqual({ kind: 'wait', untilMs: soakUntil });
    d.advance(60_000);
    d.run();
    expect(d.admitted).toEqual([
      ['k0', 'k1'],
      ['k2', 'k3', 'k4', 'k5'],
    ]);
    expect(d.st.progress().actions.map((a) => a.action)).toEqual(['pause', 'resume']);
  });

  it('signals at most a step of Kymas at a time and carries the news of an abort it still owes', () => {
    const fleet = Array.from({ length: 2 * STEP_KYMAS + 500 }, (_, i) => `k${i}`);
    const policy = { waves: [], soakMs: 0, maxConcurrent: 1_000_000 };
    const d = driver({ waves: [1], soakMs: 0 }, fleet, options);
    d.st.promoted({ version: '1.1.0' });
    d.run();
    d.st.act('abort', { reason: 'canary broke' }, 't');
    expect(d.one()).toMatchObject({ kind: 'notify', kymas: fleet.slice(1, STEP_KYMAS + 1) });
    d.grow(200);
    d.continueAsNew(d.one());
    d.run();
    expect(d.notified.map((n) => n.kymas.length)).toEqual([STEP_KYMAS, STEP_KYMAS, fleet.length - 1 - 2 * STEP_KYMAS]);
    expect(d.notified.flatMap((n) => n.kymas)).toEqual(fleet.slice(1));
    expect(new Set(d.notified.map((n) => n.message))).toEqual(
      new Set(['the rollout of 1.1.0 on channel regular was aborted: canary broke']),
    );

    const wide = driver(policy, fleet, options);
    wide.st.promoted({ version: '1.1.0' });
    wide.run();
    expect(wide.admitted.map((a) => a.length)).toEqual([STEP_KYMAS, STEP_KYMAS, 500]);
  });

  it('carries the plan with what the version changes, naming each Kyma once', () => {
    const st = planning();
    const diff = {
      version: '1.1.0',
      groups: [
        { from: '1.0.0', kymas: ['k1', 'k0'], added: ['ConfigMap ns/new'], changed: [], removed: [] },
        { kymas: ['k2'], added: [], changed: [], removed: [], problem: 'TemplateNotFound: greeter-1.1.0' },
      ],
    };
    st.planned({ kymas: ['k0', 'k1', 'k2'], policy: DEFAULT_ROLLOUT_POLICY, from: '1.0.0' }, diff);
    const c = carried(st.next(0, { events: 500, suggested: false }));
    expect(c.state?.diff?.groups.map((g) => g.kymas)).toEqual([[1, 0], [2]]);
    const next = new RolloutState(CHANNEL, c, options);
    expect(next.planView()).toEqual(st.planView());
    expect(next.planView()?.diff).toEqual(diff);
  });

  it('carries a newer promotion that came with the restart: the next run sends what it owes, then continues as new for it', () => {
    const d = driver({ waves: [1], soakMs: 0 }, kymas, options);
    d.st.promoted({ version: '1.1.0' });
    d.run();
    d.st.act('abort', { reason: 'canary broke' }, 't');
    d.st.promoted({ version: '1.2.0' });
    d.grow(200);
    d.continueAsNew(d.run());
    expect(d.run()).toEqual({ kind: 'restart', carried: { version: '1.1.0', phase: 'Aborted', next: '1.2.0' } });
    expect(d.notified).toEqual([
      { kymas: kymas.slice(1), message: 'the rollout of 1.1.0 on channel regular was aborted: canary broke' },
    ]);
  });

  it('carries the Kymas waiting to join: a halted rollout that continued as new takes them into its plan on resume', () => {
    const st = planning();
    st.planned({ kymas: ['k0'], policy: DEFAULT_ROLLOUT_POLICY, policyProblem: 'soak "x" is not a duration' });
    st.waiting({ kyma: 'late', version: '1.1.0' });
    const next = new RolloutState(CHANNEL, carried(st.next(0, { events: 500, suggested: false })), options);
    expect(next.progress()).toEqual(st.progress());
    next.act('resume', { reason: 'fixed' }, 't');
    expect(next.next(0)).toMatchObject({ kind: 'publish' });
    expect(next.next(0)).toMatchObject({ kind: 'plan', version: '1.1.0' });
    next.planned({ kymas: ['k0'], policy: { ...DEFAULT_ROLLOUT_POLICY, waves: [] } });
    next.next(0);
    expect(next.next(0)).toMatchObject({ kind: 'admit', kymas: ['k0', 'late'] });
  });

  it('continues as new when Temporal suggests it, and never before its run moved on', () => {
    // A threshold below where any run begins: each run still takes its first steps.
    const eager = new RolloutState(CHANNEL, undefined, { continueAsNewAfterEvents: 1 });
    eager.promoted({ version: '1.1.0' });
    expect(eager.next(0, { events: 3, suggested: true })).toMatchObject({ kind: 'publish' });
    expect(eager.next(0, { events: 3, suggested: true })).toMatchObject({ kind: 'plan' });
    eager.planned({ kymas: ['k0'], policy: DEFAULT_ROLLOUT_POLICY });
    expect(eager.next(0, { events: 9, suggested: false })).toMatchObject({
      kind: 'restart',
      carried: { version: '1.1.0', phase: 'Rolling' },
    });

    // Suggested below the threshold; an idle rollout carries nothing to roll.
    const idle = new RolloutState(CHANNEL, undefined, options);
    expect(idle.next(0, { events: 3, suggested: false })).toMatchObject({ kind: 'publish' });
    const fresh = new RolloutState(CHANNEL, carried(idle.next(0, { events: 8, suggested: true })), options);
    expect(fresh.refusal('pause', { reason: 'x' })).toMatch(/no rollout to pause/);
    expect(fresh.progress()).toEqual(idle.progress());
    fresh.promoted({ version: '1.1.0' });
    fresh.next(0);
    expect(fresh.next(0)).toMatchObject({ kind: 'plan', version: '1.1.0' });
  });
});

describe('KymaState: the rollout gate', () => {
  const spec = (name: string, over: Partial<SpecModule> = {}): SpecModule => ({
    name,
    customResourcePolicy: 'CreateAndDelete',
    managed: true,
    ...over,
  });
  const snap: KymaSnapshot = {
    uid: 'u',
    generation: 1,
    channel: 'regular',
    modules: [spec('greeter'), spec('counter')],
    deleting: false,
    finalized: true,
    paused: false,
    remote: false,
    visibility: { beta: false, internal: false },
  };
  const ok = (name: string, version: string): Resolution => ({
    name,
    module: mod(version, {
      name,
      channel: 'regular',
      template: { name: `${name}-${version}`, namespace: 'kcp', generation: 1 },
    }),
  });

  /** Answers steps until a wait; resolutions at `versions`, each passed through `decorate`. */
  function drive(
    st: KymaState,
    versions: Record<string, string>,
    decorate: (r: Resolution) => Resolution = (r) => r,
  ): KymaStep[] {
    const trace: KymaStep[] = [];
    for (let i = 0; i < 30; i++) {
      const step = st.next();
      trace.push(step);
      if (step.kind === 'load') st.loaded(snap);
      else if (step.kind === 'resolve')
        st.resolved(
          step.snapshot.modules.map((m) => decorate(ok(m.name, versions[m.name]!))),
          0,
          step.only,
        );
      else if (step.kind === 'wait') return trace;
    }
    throw new Error('no wait');
  }
  const updates = (t: KymaStep[]) =>
    t.flatMap((s) => (s.kind === 'dispatch' ? s.update.map((u) => `${u.name}@${u.desired.module?.version}`) : []));
  const ready = (name: string, version: string) => ({
    reason: 'Ready' as const,
    status: { name, channel: 'regular', version, state: 'Ready' as const },
  });
  /** A gated Kyma with greeter Ready at 1.0.0, just admitted to 1.1.0. */
  function admittedAt110(): KymaState {
    const st = new KymaState({ settings: SETTINGS });
    drive(st, { greeter: '1.0.0', counter: '1.0.0' });
    st.reported(ready('greeter', '1.0.0'));
    drive(st, { greeter: '1.0.0', counter: '1.0.0' });
    st.admit({ module: 'greeter', channel: 'regular', version: '1.1.0' });
    return st;
  }

  it('holds an installed module at its version until the rollout admits the new one, then resolves that module alone and reports back', () => {
    const st = new KymaState({ settings: SETTINGS });
    drive(st, { greeter: '1.0.0', counter: '1.0.0' });
    st.reported(ready('greeter', '1.0.0'));
    st.reported(ready('counter', '1.0.0'));
    drive(st, { greeter: '1.0.0', counter: '1.0.0' });
    // A poke after the promotion: greeter stays, and says why.
    st.changed();
    const held = drive(st, { greeter: '1.1.0', counter: '1.0.0' });
    expect(updates(held)).toEqual([]);
    expect(st.status().modules?.find((m) => m.name === 'greeter')?.message).toBe(
      'version 1.1.0 of channel regular waits for its rollout',
    );
    // Admitted: one resolution of greeter alone, one update.
    st.admit({ module: 'greeter', channel: 'regular', version: '1.1.0' });
    const moved = drive(st, { greeter: '1.1.0', counter: '1.0.0' });
    expect(
      moved
        .filter((s) => s.kind === 'resolve')
        .map((s) => s.kind === 'resolve' && s.snapshot.modules.map((m) => m.name)),
    ).toEqual([['greeter']]);
    expect(updates(moved)).toEqual(['greeter@1.1.0']);
    // Ready at the admitted version: the rollout hears it once.
    st.reported(ready('greeter', '1.1.0'));
    st.reported(ready('greeter', '1.1.0'));
    const told = drive(st, { greeter: '1.1.0', counter: '1.0.0' }).filter((s) => s.kind === 'rolloutReport');
    expect(told).toEqual([
      { kind: 'rolloutReport', module: 'greeter', channel: 'regular', report: { version: '1.1.0', state: 'Ready' } },
    ]);
    expect(st.carry().admitted).toEqual({ greeter: { module: 'greeter', channel: 'regular', version: '1.1.0' } });
  });

  it('tells the rollout of a failed upgrade, which reports the version still installed', () => {
    const st = admittedAt110();
    drive(st, { greeter: '1.1.0', counter: '1.0.0' });
    st.reported({
      reason: 'ApplyRejected',
      status: {
        name: 'greeter',
        channel: 'regular',
        version: '1.0.0',
        state: 'Error',
        message: 'applying ConfigMap x: invalid',
      },
    });
    expect(drive(st, { greeter: '1.1.0', counter: '1.0.0' }).filter((s) => s.kind === 'rolloutReport')).toEqual([
      {
        kind: 'rolloutReport',
        module: 'greeter',
        channel: 'regular',
        report: { version: '1.1.0', state: 'Error', message: 'applying ConfigMap x: invalid' },
      },
    ]);
  });

  it("resolves an admitted module with the promotion's versions, and tells the rollout when the module goes before it is Ready", () => {
    const st = new KymaState({ settings: SETTINGS });
    drive(st, { greeter: '1.0.0', counter: '1.0.0' });
    st.admit({
      module: 'greeter',
      channel: 'regular',
      version: '1.1.0',
      seen: { ModuleReleaseMeta: '42', ModuleTemplate: '41' },
    });
    const t = drive(st, { greeter: '1.1.0', counter: '1.0.0' });
    expect(t.find((s) => s.kind === 'resolve')).toMatchObject({
      seen: { ModuleReleaseMeta: '42', ModuleTemplate: '41' },
    });
    st.removed('greeter');
    expect(drive(st, { counter: '1.0.0' }).filter((s) => s.kind === 'rolloutReport')).toEqual([
      {
        kind: 'rolloutReport',
        module: 'greeter',
        channel: 'regular',
        report: { version: '1.1.0', state: 'Ready', message: 'skipped: the module was removed from this Kyma' },
      },
    ]);
  });

  it('counts an admitted upgrade that waits for its maintenance window as done for the rollout, once', () => {
    const st = admittedAt110();
    const window = { begin: 10_000, end: 20_000 };
    const resolve = () =>
      drive(st, { greeter: '1.1.0', counter: '1.0.0' }, (r) => ({ ...r, downtime: { window } }) as Resolution);
    const t = resolve();
    expect(updates(t)).toEqual([]);
    expect(t.filter((s) => s.kind === 'rolloutReport')).toEqual([
      {
        kind: 'rolloutReport',
        module: 'greeter',
        channel: 'regular',
        report: { version: '1.1.0', state: 'Ready', message: 'deferred: the upgrade waits for its maintenance window' },
      },
    ]);
    st.changed();
    expect(resolve().filter((s) => s.kind === 'rolloutReport')).toEqual([]);
  });

  it('drops an admission it cannot resolve now (the Kyma is being deleted) instead of waking again and again', () => {
    const st = new KymaState({ settings: SETTINGS });
    drive(st, { greeter: '1.0.0', counter: '1.0.0' });
    st.admit({ module: 'greeter', channel: 'regular', version: '1.1.0' });
    st.loaded({ ...snap, deleting: true });
    for (let i = 0; i < 10 && st.next().kind !== 'wait'; i++);
    expect(st.awake()).toBe(false);
  });

  it('does not hold first installs', () => {
    const gated = new KymaState({ settings: SETTINGS });
    const first = drive(gated, { greeter: '1.1.0', counter: '1.0.0' });
    expect(first.some((s) => s.kind === 'dispatch' && s.start.length === 2)).toBe(true);
  });

  it('tells the rollout once when a hold begins, and says what it runs and why when that rollout was aborted', () => {
    const st = new KymaState({ settings: SETTINGS });
    drive(st, { greeter: '1.0.0', counter: '1.0.0' });
    st.reported(ready('greeter', '1.0.0'));
    st.changed();
    const held = drive(st, { greeter: '1.1.0', counter: '1.0.0' });
    expect(held.filter((s) => s.kind === 'awaitRollout')).toEqual([
      { kind: 'awaitRollout', module: 'greeter', channel: 'regular', version: '1.1.0' },
    ]);
    st.changed();
    expect(drive(st, { greeter: '1.1.0', counter: '1.0.0' }).filter((s) => s.kind === 'awaitRollout')).toEqual([]);
    st.rolloutEnded({
      module: 'greeter',
      channel: 'regular',
      version: '1.1.0',
      message: 'the rollout of 1.1.0 on channel regular was aborted: canary broke',
    });
    drive(st, { greeter: '1.1.0', counter: '1.0.0' });
    expect(st.status().modules?.find((m) => m.name === 'greeter')).toMatchObject({
      version: '1.0.0',
      state: 'Ready',
      message:
        'the rollout of 1.1.0 on channel regular was aborted: canary broke; it stays at 1.0.0 until the next promotion',
    });
    // The next promotion: a new hold, a new join, and the old news no longer applies.
    st.changed();
    const next = drive(st, { greeter: '1.2.0', counter: '1.0.0' });
    expect(next.filter((s) => s.kind === 'awaitRollout')).toMatchObject([{ version: '1.2.0' }]);
    expect(st.status().modules?.find((m) => m.name === 'greeter')?.message).toBe(
      'version 1.2.0 of channel regular waits for its rollout',
    );
  });

  it('starts the rollout when no rollout governs the version (once per version), and stays held until it admits the Kyma', () => {
    const st = new KymaState({ settings: SETTINGS });
    drive(st, { greeter: '1.0.0', counter: '1.0.0' });
    st.reported(ready('greeter', '1.0.0'));
    st.changed();
    drive(st, { greeter: '1.1.0', counter: '1.0.0' });
    st.rolloutMissing('greeter', 'regular', '1.1.0');
    const started = drive(st, { greeter: '1.1.0', counter: '1.0.0' });
    expect(started.filter((s) => s.kind === 'startRollout')).toEqual([
      { kind: 'startRollout', module: 'greeter', channel: 'regular', version: '1.1.0' },
    ]);
    expect(started.filter((s) => s.kind === 'event').map((s) => s.kind === 'event' && s.event.reason)).toEqual([
      'RolloutStarted',
    ]);
    expect(updates(started)).toEqual([]);
    // Still not found on the next resolution: asked again, not started twice.
    st.changed();
    const again = drive(st, { greeter: '1.1.0', counter: '1.0.0' });
    expect(again.filter((s) => s.kind === 'awaitRollout')).toHaveLength(1);
    st.rolloutMissing('greeter', 'regular', '1.1.0');
    expect(drive(st, { greeter: '1.1.0', counter: '1.0.0' }).filter((s) => s.kind === 'startRollout')).toEqual([]);
    st.admit({ module: 'greeter', channel: 'regular', version: '1.1.0' });
    expect(updates(drive(st, { greeter: '1.1.0', counter: '1.0.0' }))).toEqual(['greeter@1.1.0']);
  });

  it('carries the news of an aborted rollout across continue-as-new', () => {
    const st = new KymaState({ settings: SETTINGS });
    drive(st, { greeter: '1.0.0', counter: '1.0.0' });
    st.reported(ready('greeter', '1.0.0'));
    st.rolloutEnded({
      module: 'greeter',
      channel: 'regular',
      version: '1.1.0',
      message: 'the rollout of 1.1.0 on channel regular was aborted: x',
    });
    const next = new KymaState({ settings: SETTINGS, carried: st.carry() });
    next.changed();
    drive(next, { greeter: '1.1.0', counter: '1.0.0' });
    expect(next.status().modules?.find((m) => m.name === 'greeter')?.message).toMatch(
      /aborted: x; it stays at 1\.0\.0/,
    );
  });

  it('answers an admission for a module it does not follow at once, so that the rollout need not wait', () => {
    const st = new KymaState({ settings: SETTINGS });
    drive(st, { greeter: '1.0.0', counter: '1.0.0' });
    st.admit({ module: 'other', channel: 'regular', version: '2.0.0' });
    expect(drive(st, {}).find((s) => s.kind === 'rolloutReport')).toMatchObject({
      module: 'other',
      report: { version: '2.0.0', state: 'Ready', message: expect.stringMatching(/^skipped/) as unknown },
    });
  });
});
