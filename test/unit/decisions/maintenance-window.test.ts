// Maintenance windows as upstream's policy has them: matching, the next window, and the hold.
import { describe, expect, it } from 'vitest';
import type { Resolution } from '../../../src/contract/module';
import {
  holdForMaintenance,
  parsePolicy,
  resolveWindow,
  type MaintenancePolicy,
} from '../../../src/decisions/maintenance-window';
import { mod } from './fixtures';

const at = (iso: string) => Date.parse(iso);
/** 2024-01-06 is a Saturday. */
const SAT = '2024-01-06';

const POLICY: MaintenancePolicy = {
  rules: [
    {
      match: { plan: 'trial|free' },
      windows: [
        { days: ['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun'], begin: '01:00:00+00:00', end: '01:00:00+00:00' },
      ],
    },
    { match: { region: 'europe|eu-' }, windows: [{ days: ['Sat'], begin: '21:00:00+00:00', end: '00:00:00+00:00' }] },
    { match: { region: 'asia' }, windows: [{ days: ['Sat'], begin: '14:00:00+09:00', end: '17:00:00+09:00' }] },
  ],
  default: { days: ['Sun'], begin: '21:00:00Z', end: '23:00:00Z' },
};

describe('resolveWindow', () => {
  it('takes the first rule whose expression finds the runtime value, in UTC', () => {
    expect(resolveWindow(POLICY, { region: 'eu-central-1' }, at(`${SAT}T10:00:00Z`))).toEqual({
      begin: at(`${SAT}T21:00:00Z`),
      end: at('2024-01-07T00:00:00Z'),
    });
    // Any matching field counts (upstream ORs them); the first matching rule wins.
    expect(resolveWindow(POLICY, { region: 'eu-west-1', plan: 'trial' }, at(`${SAT}T10:00:00Z`))?.begin).toBe(
      at(`${SAT}T01:00:00Z`),
    );
  });

  it('reads begin and end in their own offset', () => {
    // 14:00+09:00 on Saturday is 05:00 UTC.
    expect(resolveWindow(POLICY, { region: 'asia-east' }, at(`${SAT}T01:00:00Z`))).toEqual({
      begin: at(`${SAT}T05:00:00Z`),
      end: at(`${SAT}T08:00:00Z`),
    });
  });

  it('spans midnight when the end is not after the begin (equal: a whole day)', () => {
    expect(resolveWindow(POLICY, { plan: 'free' }, at(`${SAT}T02:00:00Z`))).toEqual({
      begin: at(`${SAT}T01:00:00Z`),
      end: at('2024-01-07T01:00:00Z'),
    });
    expect(resolveWindow(POLICY, { region: 'eu-' }, at(`${SAT}T20:00:00Z`))).toEqual({
      begin: at(`${SAT}T21:00:00Z`),
      end: at('2024-01-07T00:00:00Z'),
    });
  });

  it('keeps an ongoing window while at least the minimum is left, else moves to the next one', () => {
    expect(resolveWindow(POLICY, { region: 'europe' }, at(`${SAT}T22:00:00Z`))).toEqual({
      begin: at(`${SAT}T21:00:00Z`),
      end: at('2024-01-07T00:00:00Z'),
    });
    expect(resolveWindow(POLICY, { region: 'europe' }, at(`${SAT}T23:50:00Z`))).toEqual({
      begin: at('2024-01-13T21:00:00Z'),
      end: at('2024-01-14T00:00:00Z'),
    });
  });

  it('falls back to the default when no rule matches (or the runtime has no labels)', () => {
    const sunday = { begin: at('2024-01-07T21:00:00Z'), end: at('2024-01-07T23:00:00Z') };
    expect(resolveWindow(POLICY, { region: 'us-east' }, at(`${SAT}T10:00:00Z`))).toEqual(sunday);
    expect(resolveWindow(POLICY, {}, at(`${SAT}T10:00:00Z`))).toEqual(sunday);
  });

  it('takes windows without days as absolute timestamps, and finds none once they are past', () => {
    const once: MaintenancePolicy = { default: { begin: '2024-01-06T12:00:00Z', end: '2024-01-06T14:00:00Z' } };
    expect(resolveWindow(once, {}, at(`${SAT}T10:00:00Z`))).toEqual({
      begin: at(`${SAT}T12:00:00Z`),
      end: at(`${SAT}T14:00:00Z`),
    });
    expect(resolveWindow(once, {}, at(`${SAT}T15:00:00Z`))).toBeUndefined();
  });
});

describe('parsePolicy', () => {
  it("reads upstream's format", () => {
    expect(parsePolicy(JSON.stringify(POLICY))).toEqual({ policy: POLICY });
  });

  it.each([
    ['no JSON', '{', 'not JSON'],
    ['no default', JSON.stringify({ rules: [] }), 'no default window'],
    [
      'a time without offset',
      JSON.stringify({ default: { days: ['Sat'], begin: '21:00', end: '23:00:00Z' } }),
      'default: "21:00" is not a time of day with offset',
    ],
    [
      'an unknown day',
      JSON.stringify({ default: { days: ['Saturday'], begin: '21:00:00Z', end: '23:00:00Z' } }),
      '"Saturday" is not a week day',
    ],
    [
      'a broken expression',
      JSON.stringify({ rules: [{ match: { region: '(' }, windows: [] }], default: POLICY.default }),
      'rule 1: "(" is not a regular expression',
    ],
  ])('says why it cannot use %s', (_what, json, problem) => {
    expect(parsePolicy(json)).toEqual({ problem: expect.stringContaining(problem) as string });
  });
});

describe('holdForMaintenance', () => {
  const window = { begin: at(`${SAT}T21:00:00Z`), end: at(`${SAT}T23:00:00Z`) };
  const upgrade = (
    downtime?: Extract<Resolution, { module: object }>['downtime'],
  ): Extract<Resolution, { module: object }> => ({
    name: 'greeter',
    module: mod('1.1.0'),
    ...(downtime ? { downtime } : {}),
  });
  const installed = mod('1.0.0');

  it('holds an upgrade outside the window until it opens, and keeps the installed module', () => {
    const r = holdForMaintenance(upgrade({ window }), installed, at(`${SAT}T10:00:00Z`));
    expect(r.module).toBe(installed);
    expect(r.hold).toEqual({
      until: window.begin,
      message:
        'upgrading greeter from 1.0.0 to 1.1.0 requires downtime: waiting for the maintenance window 2024-01-06T21:00:00.000Z – 2024-01-06T23:00:00.000Z',
    });
  });

  it('lets it move inside the window', () => {
    expect(holdForMaintenance(upgrade({ window }), installed, window.begin)).toEqual({ module: mod('1.1.0') });
  });

  it('never holds a first install, the installed version, or a template without downtime (no policy, or skipMaintenanceWindows)', () => {
    const now = at(`${SAT}T10:00:00Z`);
    expect(holdForMaintenance(upgrade({ window }), undefined, now).hold).toBeUndefined();
    expect(
      holdForMaintenance(
        upgrade({ window }),
        mod('1.1.0', { template: { name: 'greeter-1.1.0', namespace: 'kcp', generation: 2 } }),
        now,
      ).hold,
    ).toBeUndefined();
    expect(holdForMaintenance(upgrade(), installed, now).hold).toBeUndefined();
  });

  it('holds without a wake-up when the policy has no window ahead or cannot be used', () => {
    const now = at(`${SAT}T10:00:00Z`);
    expect(holdForMaintenance(upgrade({}), installed, now)).toEqual({
      module: installed,
      hold: {
        message:
          'upgrading greeter from 1.0.0 to 1.1.0 requires downtime, and the maintenance policy has no window ahead',
      },
    });
    expect(holdForMaintenance(upgrade({ problem: 'not JSON' }), installed, now).hold).toEqual({
      reason: 'MaintenancePolicyInvalid',
      message:
        'upgrading greeter from 1.0.0 to 1.1.0 requires downtime, and the maintenance policy cannot be used: not JSON',
    });
  });
});
