// The module set of a Kyma, driven directly: resolutions in, what to tell the module workflows
// out (start, update, remove, release, Events), and the records the status is made of.
import { describe, expect, it } from 'vitest';
import type { SpecModule } from '../../../src/contract/kyma';
import type { Resolution } from '../../../src/contract/module';
import type { ModuleReport } from '../../../src/contract/readiness';
import { KymaModuleSet } from '../../../src/decisions/kyma-module-set';
import type { KymaStep } from '../../../src/decisions/kyma-steps';
import { mod } from './fixtures';

const spec = (name: string, over: Partial<SpecModule> = {}): SpecModule => ({
  name,
  customResourcePolicy: 'CreateAndDelete',
  managed: true,
  ...over,
});
const ok = (name: string, version = '1.0.0'): Resolution => ({
  name,
  module: mod(version, { name, template: { name: `${name}-${version}`, namespace: 'kcp', generation: 1 } }),
});
const failed = (
  name: string,
  reason: 'ModuleNotFound' | 'ModuleNotVisible' | 'TemplateNotFound',
  message = `${name}: ${reason}`,
): Resolution => ({ name, channel: 'regular', failure: { reason, message } });
const report = (name: string): ModuleReport => ({
  reason: 'Ready',
  status: { name, version: '1.0.0', state: 'Ready' },
});

/** One full resolution of `modules` (the spec) with `resolutions`; the dispatch step, if any. */
function resolve(
  set: KymaModuleSet,
  modules: SpecModule[],
  resolutions: Resolution[],
  uid = 'uid-1',
  now = 0,
): KymaStep | undefined {
  const pass = set.beginResolution(modules, uid, now);
  for (const r of resolutions) set.apply(pass, r);
  return set.endResolution(pass);
}
const dispatched = (step: KymaStep | undefined) => (step?.kind === 'dispatch' ? step : undefined);

describe('the module set of a Kyma', () => {
  it('starts new modules, tells a running one only what changed, and removes one no longer wanted', () => {
    const set = new KymaModuleSet();
    const first = dispatched(resolve(set, [spec('greeter'), spec('counter')], [ok('greeter'), ok('counter')]));
    expect(first?.start.map((m) => m.name)).toEqual(['greeter', 'counter']);
    expect(first?.events.map((e) => e.reason)).toEqual(['ModuleInstalling', 'ModuleInstalling']);
    expect(resolve(set, [spec('greeter'), spec('counter')], [ok('greeter'), ok('counter')])).toBeUndefined();
    const next = dispatched(resolve(set, [spec('greeter')], [ok('greeter', '1.1.0')]));
    expect(next?.update).toEqual([
      { name: 'greeter', desired: { uid: 'uid-1', module: ok('greeter', '1.1.0').module } },
    ]);
    expect(next?.remove).toEqual(['counter']);
    expect(set.removing).toEqual({ counter: 'remove' });
  });

  it('releases a module no longer managed, and calls off a removal when the module is wanted again, telling it again even unchanged', () => {
    const set = new KymaModuleSet();
    resolve(set, [spec('greeter'), spec('counter')], [ok('greeter'), ok('counter')]);
    expect(dispatched(resolve(set, [spec('greeter', { managed: false })], [ok('greeter')]))).toMatchObject({
      release: ['greeter'],
      remove: ['counter'],
    });
    const back = dispatched(
      resolve(set, [spec('greeter', { managed: false }), spec('counter')], [ok('greeter'), ok('counter')]),
    );
    expect(back?.update).toEqual([{ name: 'counter', desired: { uid: 'uid-1', module: ok('counter').module } }]);
    expect(set.removing).toEqual({ greeter: 'release' });
  });

  it('keeps a module that cannot be resolved as a failure without a workflow, and tells a running one its failure once', () => {
    const set = new KymaModuleSet();
    expect(resolve(set, [spec('nosuch')], [failed('nosuch', 'ModuleNotFound')])).toBeUndefined();
    expect(Object.keys(set.failures)).toEqual(['nosuch']);
    resolve(set, [spec('greeter')], [ok('greeter')]);
    expect(set.failures).toEqual({});
    const gone = failed('greeter', 'TemplateNotFound');
    expect(dispatched(resolve(set, [spec('greeter')], [gone]))?.update).toEqual([
      { name: 'greeter', desired: { uid: 'uid-1', failure: gone.failure } },
    ]);
    expect(resolve(set, [spec('greeter')], [gone])).toBeUndefined();
  });

  it('shows a module this Kyma may not see, and removes it when it runs (as upstream)', () => {
    const set = new KymaModuleSet();
    const hidden = failed('greeter', 'ModuleNotVisible', 'greeter is beta');
    expect(resolve(set, [spec('greeter')], [hidden])).toBeUndefined();
    resolve(set, [spec('greeter')], [ok('greeter')]);
    expect(dispatched(resolve(set, [spec('greeter')], [hidden]))).toMatchObject({
      remove: ['greeter'],
      events: [{ reason: 'ModuleRemoving', message: 'removing module greeter: greeter is beta' }],
    });
    expect(set.failures).toEqual({ greeter: hidden });
    expect(resolve(set, [spec('greeter')], [hidden])).toBeUndefined();
  });

  it('keeps a running module at its version until its maintenance window opens, and names the version that waits', () => {
    const set = new KymaModuleSet();
    resolve(set, [spec('greeter')], [ok('greeter')]);
    const window = { begin: 10_000, end: 20_000 };
    const upgrade: Resolution = {
      name: 'greeter',
      module: mod('1.1.0', { name: 'greeter', template: { name: 'greeter-1.1.0', namespace: 'kcp', generation: 1 } }),
      downtime: { window },
    };
    const pass = set.beginResolution([spec('greeter')], 'uid-1', 1_000);
    expect(set.apply(pass, upgrade)).toEqual({ deferred: '1.1.0' });
    expect(set.endResolution(pass)).toBeUndefined();
    expect(set.held.greeter).toMatchObject({ until: window.begin });
    expect(set.desired.greeter?.version).toBe('1.0.0');
    const open = set.beginResolution([spec('greeter')], 'uid-1', window.begin);
    expect(set.apply(open, upgrade)).toEqual({});
    expect(set.held).toEqual({});
  });

  it('tells of a mandatory module that cannot be resolved once per message, with an Event and no entry of its own', () => {
    const set = new KymaModuleSet();
    const base = [spec('base', { mandatory: true })];
    const apply = (r: Resolution) => set.apply(set.beginResolution(base, 'uid-1', 0), r).event;
    expect(apply(failed('base', 'TemplateNotFound', 'no template'))).toEqual({
      kind: 'event',
      event: { type: 'Warning', reason: 'MandatoryModuleFailed', message: 'mandatory module base: no template' },
    });
    expect(apply(failed('base', 'TemplateNotFound', 'no template'))).toBeUndefined();
    expect(apply(ok('base'))).toBeUndefined();
    expect(apply(failed('base', 'TemplateNotFound', 'no template'))).toMatchObject({ kind: 'event' });
  });

  it("takes the report of a running module, marks a leaving one's as its own, and ignores a late one of a module gone", () => {
    const set = new KymaModuleSet();
    resolve(set, [spec('greeter'), spec('counter')], [ok('greeter'), ok('counter')]);
    expect(set.reported(report('greeter'))).toBe(true);
    resolve(set, [spec('greeter')], [ok('greeter')]);
    expect(set.reported(report('counter'))).toBe(true);
    expect([...set.leavingReported]).toEqual(['counter']);
    set.removed('counter');
    expect([set.desired.counter, set.reports.counter, set.removing.counter, set.leavingReported.size]).toEqual([
      undefined,
      undefined,
      undefined,
      0,
    ]);
    expect(set.reported(report('counter'))).toBe(false);
  });

  it('releases every module once when the Kyma is gone without its finalizer', () => {
    const set = new KymaModuleSet();
    resolve(set, [spec('greeter'), spec('counter')], [ok('greeter'), ok('counter')]);
    expect(set.releaseAll()).toMatchObject({
      kind: 'dispatch',
      release: ['greeter', 'counter'],
      events: [{ type: 'Warning', reason: 'KymaGone' }],
    });
    expect(set.releaseAll()).toBeUndefined();
  });

  it('tells the modules a continue-as-new carried only what changed, and those carried to a re-created Kyma its uid', () => {
    const desired = {
      greeter: mod('1.0.0', { name: 'greeter', template: { name: 'greeter-1.0.0', namespace: 'kcp', generation: 1 } }),
    };
    const carried = new KymaModuleSet({ uid: 'uid-1', desired: { ...desired }, reports: {}, removing: {} });
    expect(resolve(carried, [spec('greeter')], [ok('greeter')])).toBeUndefined();
    const recreated = new KymaModuleSet({ uid: '', desired: { ...desired }, reports: {}, removing: {} });
    expect(dispatched(resolve(recreated, [spec('greeter')], [ok('greeter')], 'uid-2'))?.update).toEqual([
      { name: 'greeter', desired: { uid: 'uid-2', module: desired.greeter } },
    ]);
  });
});
