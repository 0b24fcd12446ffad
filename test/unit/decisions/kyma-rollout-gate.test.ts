// The Kyma's rollout gate, driven directly: which resolutions it holds, what it tells each
// channel's rollout, and what it carries across continue-as-new.
import { describe, expect, it } from 'vitest';
import type { SpecModule } from '../../../src/contract/kyma';
import type { Resolution } from '../../../src/contract/module';
import type { ModuleReport } from '../../../src/contract/readiness';
import { followsAdmission, KymaRolloutGate } from '../../../src/decisions/kyma-rollout-gate';
import { mod, snapshot } from './fixtures';

const at = (version: string, channel = 'regular'): Resolution => ({
  name: 'greeter',
  module: mod(version, { channel }),
});
const report = (version: string, state: 'Ready' | 'Error' | 'Processing', message?: string): ModuleReport => ({
  reason: state === 'Error' ? 'ApplyRejected' : 'Ready',
  status: { name: 'greeter', channel: 'regular', version, state, ...(message ? { message } : {}) },
});
const admission = { module: 'greeter', channel: 'regular', version: '1.1.0' };
const spec = (over: Partial<SpecModule> = {}): SpecModule => ({
  name: 'greeter',
  customResourcePolicy: 'CreateAndDelete',
  managed: true,
  ...over,
});

describe('the rollout gate', () => {
  it("holds a module's upgrade until its rollout admits the version; first installs, pins and channel switches go through", () => {
    const gate = new KymaRolloutGate();
    const running = mod('1.0.0');
    expect(gate.pass(at('1.1.0'), running).resolution).toEqual({ name: 'greeter', module: running });
    expect(gate.awaitingRollout).toEqual({ greeter: '1.1.0' });
    expect(gate.pass(at('1.1.0'), undefined).resolution).toEqual(at('1.1.0'));
    expect(gate.pass(at('1.1.0', 'fast'), running).resolution).toEqual(at('1.1.0', 'fast'));
    expect(gate.pass(at('1.1.0'), mod('1.0.0', { channel: '' })).resolution).toEqual(at('1.1.0'));
    expect(gate.awaitingRollout).toEqual({});
    gate.admit(admission, { follows: true, running });
    expect(gate.pass(at('1.1.0'), running).resolution).toEqual(at('1.1.0'));
  });

  it('tells the rollout once when a hold begins, and again for the next version', () => {
    const gate = new KymaRolloutGate();
    const running = mod('1.0.0');
    expect(gate.pass(at('1.1.0'), running).told).toEqual({
      kind: 'awaitRollout',
      module: 'greeter',
      channel: 'regular',
      version: '1.1.0',
    });
    expect(gate.pass(at('1.1.0'), running).told).toBeUndefined();
    expect(gate.pass(at('1.2.0'), running).told).toMatchObject({ version: '1.2.0' });
  });

  it('resolves an admitted module alone, tells the rollout at once when the module runs the version, and answers for a module it does not follow', () => {
    const gate = new KymaRolloutGate();
    expect(gate.admit(admission, { running: mod('1.0.0') })).toBeUndefined();
    expect(gate.admittedPending).toBe(false);
    expect(
      gate.admit(admission, { follows: true, running: mod('1.0.0'), report: report('1.0.0', 'Ready') }),
    ).toBeUndefined();
    expect(gate.takeAdmitted()).toEqual(new Set(['greeter']));
    expect(gate.admittedPending).toBe(false);
    expect(gate.admit(admission, { follows: true, running: mod('1.1.0'), report: report('1.1.0', 'Ready') })).toEqual({
      kind: 'rolloutReport',
      module: 'greeter',
      channel: 'regular',
      report: { version: '1.1.0', state: 'Ready' },
    });
    expect(gate.admit({ ...admission, module: 'other' }, { follows: false })).toMatchObject({
      kind: 'rolloutReport',
      module: 'other',
      report: { state: 'Ready', message: expect.stringMatching(/^skipped: this Kyma does not follow/) as unknown },
    });
  });

  it("follows an admission on the module's channel only, unpinned and managed", () => {
    expect(followsAdmission(snapshot([spec()]), admission)).toBe(true);
    expect(followsAdmission(snapshot([spec({ channel: 'fast' })]), admission)).toBe(false);
    expect(followsAdmission(snapshot([spec({ version: '1.0.0' })]), admission)).toBe(false);
    expect(followsAdmission(snapshot([spec({ managed: false })]), admission)).toBe(false);
    expect(followsAdmission(snapshot([]), admission)).toBe(false);
  });

  it('tells the rollout each state at the admitted version once: Ready when it runs, an Error while the upgrade is installed', () => {
    const gate = new KymaRolloutGate();
    gate.admit(admission, { follows: true, running: mod('1.0.0') });
    expect(gate.tell('greeter', mod('1.1.0'), report('1.0.0', 'Ready'))).toBeUndefined();
    expect(gate.tell('greeter', mod('1.1.0'), report('1.1.0', 'Processing'))).toBeUndefined();
    expect(gate.tell('greeter', mod('1.1.0'), report('1.0.0', 'Error', 'applying x: invalid'))).toEqual({
      kind: 'rolloutReport',
      module: 'greeter',
      channel: 'regular',
      report: { version: '1.1.0', state: 'Error', message: 'applying x: invalid' },
    });
    expect(gate.tell('greeter', mod('1.1.0'), report('1.0.0', 'Error', 'applying x: invalid'))).toBeUndefined();
    expect(gate.tell('greeter', mod('1.1.0'), report('1.1.0', 'Ready'))).toMatchObject({ report: { state: 'Ready' } });
    expect(gate.tell('other', mod('1.1.0'), report('1.1.0', 'Ready'))).toBeUndefined();
  });

  it('counts an admitted upgrade held for its maintenance window as done for the rollout, once', () => {
    const gate = new KymaRolloutGate();
    expect(gate.deferred('greeter', '1.1.0')).toBeUndefined();
    gate.admit(admission, { follows: true, running: mod('1.0.0') });
    expect(gate.deferred('greeter', '1.1.0')).toEqual({
      kind: 'rolloutReport',
      module: 'greeter',
      channel: 'regular',
      report: { version: '1.1.0', state: 'Ready', message: 'deferred: the upgrade waits for its maintenance window' },
    });
    expect(gate.deferred('greeter', '1.1.0')).toBeUndefined();
  });

  it('starts a rollout that cannot be found once per version, only for the version the module waits for', () => {
    const gate = new KymaRolloutGate();
    expect(gate.missing('greeter', 'regular', '1.1.0')).toEqual([]);
    gate.pass(at('1.1.0'), mod('1.0.0'));
    const started = gate.missing('greeter', 'regular', '1.1.0');
    expect(started.map((s) => (s.kind === 'event' ? s.event.reason : s.kind))).toEqual([
      'startRollout',
      'RolloutStarted',
    ]);
    expect(gate.missing('greeter', 'regular', '1.1.0')).toEqual([]);
    // Asked again on the next resolution: the rollout is told again, not started twice.
    expect(gate.pass(at('1.1.0'), mod('1.0.0')).told).toMatchObject({ kind: 'awaitRollout' });
  });

  it('keeps the news of an aborted rollout while the module waits for that version, and drops it for the next one', () => {
    const gate = new KymaRolloutGate();
    const ended = { ...admission, message: 'aborted: canary broke' };
    gate.ended(ended);
    gate.pass(at('1.1.0'), mod('1.0.0'));
    expect(gate.rolloutEnded).toEqual({ greeter: ended });
    gate.pass(at('1.2.0'), mod('1.0.0'));
    expect(gate.rolloutEnded).toEqual({});
  });

  it('tells the rollout of a module that went before it heard anything that it was skipped, and forgets the module', () => {
    const gate = new KymaRolloutGate();
    gate.admit(admission, { follows: true, running: mod('1.0.0') });
    expect(gate.removed('greeter')).toMatchObject({
      kind: 'rolloutReport',
      report: { version: '1.1.0', state: 'Ready', message: 'skipped: the module was removed from this Kyma' },
    });
    expect(gate.carry()).toEqual({});
    gate.admit(admission, { follows: true, running: mod('1.1.0'), report: report('1.1.0', 'Ready') });
    expect(gate.removed('greeter')).toBeUndefined();
  });

  it("carries admissions and aborted rollouts across continue-as-new, without the passing admission's control-plane versions", () => {
    const gate = new KymaRolloutGate();
    gate.admit({ ...admission, seen: { ModuleReleaseMeta: '42' } }, {});
    gate.ended({ ...admission, message: 'aborted' });
    const carried = gate.carry();
    expect(carried).toEqual({
      admitted: { greeter: admission },
      rolloutEnded: { greeter: { ...admission, message: 'aborted' } },
    });
    const next = new KymaRolloutGate(carried);
    expect(next.pass(at('1.1.0'), mod('1.0.0')).resolution).toEqual(at('1.1.0'));
    expect(next.rolloutEnded).toEqual(carried.rolloutEnded);
  });
});
