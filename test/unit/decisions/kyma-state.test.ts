// The Kyma workflow's decisions, driven step by step without Temporal.
import { describe, expect, it } from 'vitest';
import type { KymaSnapshot, SpecModule } from '../../../src/contract/kyma';
import type { Resolution } from '../../../src/contract/module';
import type { ModuleReport } from '../../../src/contract/readiness';
import { aggregateState, KymaState, type KymaStep } from '../../../src/decisions/kyma-state';
import { kymaNameProblem } from '../../../src/decisions/names';
import { mod, SETTINGS, snapshot } from './fixtures';

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

function report(name: string, reason: ModuleReport['reason'], state: string, message: string = reason): ModuleReport {
  return { reason, status: { name, version: '1.0.0', state: state as ModuleReport['status']['state'], message } };
}

/** Answers steps until the state asks to wait (or ends); load and resolve answers come from the test. */
function untilWait(
  st: KymaState,
  load: KymaSnapshot | null,
  resolve: (s: KymaSnapshot) => Resolution[] = (s) => s.modules.map((m) => ok(m.name)),
  now = 0,
): KymaStep[] {
  const trace: KymaStep[] = [];
  for (let i = 0; i < 50; i++) {
    const step = st.next();
    trace.push(step);
    if (step.kind === 'load') st.loaded(load);
    else if (step.kind === 'resolve') st.resolved(resolve(step.snapshot), now);
    else if (step.kind === 'wait' || step.kind === 'end' || step.kind === 'restart') return trace;
  }
  throw new Error(`no wait within 50 steps: ${trace.map((s) => s.kind).join(', ')}`);
}

const kinds = (t: KymaStep[]) => t.map((s) => (s.kind === 'event' ? `event:${s.event.reason}` : s.kind));
const status = (t: KymaStep[]) =>
  t.find((s): s is Extract<KymaStep, { kind: 'writeStatus' }> => s.kind === 'writeStatus')?.status;
const dispatch = (t: KymaStep[]) => t.find((s): s is Extract<KymaStep, { kind: 'dispatch' }> => s.kind === 'dispatch');

function running(modules: string[]): KymaState {
  const st = new KymaState({ settings: SETTINGS });
  const s = snapshot(modules.map((m) => spec(m)));
  untilWait(st, s);
  for (const m of modules) st.reported(report(m, 'Ready', 'Ready', 'module is ready'));
  untilWait(st, s);
  return st;
}

describe('KymaState: a Kyma and its modules', () => {
  it('loads, resolves, starts the modules, writes Processing and waits on the drift timer', () => {
    const st = new KymaState({ settings: SETTINGS });
    const t = untilWait(st, snapshot([spec('greeter'), spec('counter')]));
    expect(kinds(t)).toEqual(['load', 'resolve', 'dispatch', 'writeStatus', 'wait']);
    expect(dispatch(t)?.start.map((m) => m.name)).toEqual(['greeter', 'counter']);
    expect(dispatch(t)?.events.map((e) => e.reason)).toEqual(['ModuleInstalling', 'ModuleInstalling']);
    expect(status(t)).toMatchObject({
      state: 'Processing',
      conditions: [{ type: 'Modules', status: 'False', reason: 'Installing' }],
    });
    expect(t[t.length - 1]).toEqual({ kind: 'wait', driftMs: SETTINGS.driftIntervalMs });
  });

  it('aggregates reports into Ready, and writes nothing when nothing changed', () => {
    const st = running(['greeter', 'counter']);
    st.reported(report('greeter', 'Ready', 'Ready', 'module is ready'));
    expect(st.awake()).toBe(true);
    expect(kinds(untilWait(st, null))).toEqual(['wait']);
    const s = st.status();
    expect(s).toMatchObject({
      state: 'Ready',
      conditions: [{ status: 'True', reason: 'Ready', message: 'all modules are ready' }],
      lastOperation: { operation: 'kyma is ready' },
    });
  });

  it('re-loads on a change or the drift timer, and tells a module only what changed', () => {
    const st = running(['greeter']);
    st.changed();
    const same = untilWait(st, snapshot([spec('greeter')]));
    expect(kinds(same)).toEqual(['load', 'resolve', 'wait']);
    st.woke({ drift: true });
    // Another channel: no rollout holds a channel switch.
    const t = untilWait(st, snapshot([spec('greeter', { channel: 'fast' })]), () => [
      { name: 'greeter', module: mod('1.1.0', { channel: 'fast' }) },
    ]);
    expect(dispatch(t)?.update).toEqual([
      { name: 'greeter', desired: { uid: 'uid-1', module: expect.objectContaining({ version: '1.1.0' }) as unknown } },
    ]);
  });

  it('asks its reads to reflect the newest version of each kind the signals told of, and carries them across continue-as-new', () => {
    const st = running(['greeter']);
    st.changed({ ModuleReleaseMeta: '42', ModuleTemplate: '40' });
    st.changed({ Kyma: '43', ModuleTemplate: '39' });
    const t = untilWait(st, snapshot([spec('greeter')]));
    const seen = { ModuleReleaseMeta: '42', ModuleTemplate: '40', Kyma: '43' };
    expect(t[0]).toEqual({ kind: 'load', seen });
    expect(t[1]).toMatchObject({ kind: 'resolve', seen });
    expect(st.carry().seen).toEqual(seen);
    const next = new KymaState({ settings: SETTINGS, carried: st.carry() });
    next.changed();
    expect(next.next()).toEqual({ kind: 'load', seen });
  });

  it('puts the most severe reason first, and names a blocked removal in the condition and message', () => {
    const st = running(['greeter', 'counter']);
    st.changed();
    const t = untilWait(st, snapshot([spec('counter')]));
    expect(dispatch(t)?.remove).toEqual(['greeter']);
    expect(status(t)?.modules?.find((m) => m.name === 'greeter')).toMatchObject({
      state: 'Deleting',
      message: 'removing the module',
    });
    st.reported(
      report(
        'greeter',
        'DeletionBlocked',
        'Deleting',
        'deletion blocked by 1 Greeter resource(s): Greeter a/x; delete them to continue',
      ),
    );
    const s = status(untilWait(st, null));
    expect(s).toMatchObject({
      state: 'Processing',
      conditions: [
        {
          status: 'False',
          reason: 'DeletionBlocked',
          message: 'greeter: deletion blocked by 1 Greeter resource(s): Greeter a/x; delete them to continue',
        },
      ],
    });
    st.reported(report('counter', 'ResourceError', 'Error', 'Counter is Error: boom'));
    expect(status(untilWait(st, null))).toMatchObject({
      state: 'Error',
      conditions: [
        {
          reason: 'ResourceError',
          message:
            'counter: Counter is Error: boom; greeter: deletion blocked by 1 Greeter resource(s): Greeter a/x; delete them to continue',
        },
      ],
    });
  });

  it('names at most ten modules that are not ready in its condition, and says how many more: a Kyma of hundreds stays writable', () => {
    const st = new KymaState({ settings: SETTINGS });
    const names = Array.from({ length: 300 }, (_, i) => `m${String(i).padStart(3, '0')}`);
    const failure = (name: string): Resolution => ({
      name,
      channel: 'regular',
      failure: { reason: 'ModuleNotFound', message: `module "${name}": ${'no ModuleReleaseMeta '.repeat(100)}` },
    });
    const t = untilWait(st, snapshot(names.map((n) => spec(n))), (s) => s.modules.map((m) => failure(m.name)));
    const s = status(t)!;
    expect(s.modules).toHaveLength(300);
    const condition = s.conditions?.find((c) => c.type === 'Modules');
    expect(condition?.message).toMatch(/^m000: module "m000": no ModuleReleaseMeta/);
    expect(condition?.message).toMatch(/; and 290 more not ready \(see \.status\.modules\)$/);
    expect(Buffer.byteLength(condition!.message)).toBeLessThan(12_000);
    expect(s.lastOperation?.operation).toBe(condition?.message);
    const write = t.find((x): x is Extract<KymaStep, { kind: 'writeStatus' }> => x.kind === 'writeStatus')!;
    expect(write.searchAttributes.modules.length + write.searchAttributes.omitted).toBe(300);
  });

  it('says once per run that a run of its workflow ended, in an Event and a Workflow condition', () => {
    const st = new KymaState({ settings: SETTINGS });
    untilWait(st, snapshot([spec('greeter')]));
    const ended = {
      workflowId: 'kyma/kcp/k1',
      runId: 'r1',
      status: 'Terminated',
      at: '2026-11-25T10:00:00Z',
      reason: 'by hand',
    };
    st.workflowEnded(ended);
    const t = untilWait(st, null);
    expect(t.find((s) => s.kind === 'event')).toMatchObject({
      event: {
        type: 'Warning',
        reason: 'WorkflowEnded',
        message:
          "a run of this Kyma's workflow (r1) was terminated at 2026-11-25T10:00:00Z: by hand; this run took over",
      },
    });
    expect(status(t)?.conditions).toContainEqual({
      type: 'Workflow',
      status: 'True',
      reason: 'Restarted',
      message: expect.stringMatching(/^a run of this Kyma's workflow \(r1\)/) as unknown,
    });
    st.workflowEnded(ended);
    expect(untilWait(st, null).filter((s) => s.kind === 'event')).toEqual([]);
  });

  it("records the news of its own predecessor's end once it knows the Kyma's uid", () => {
    const st = new KymaState({ settings: SETTINGS });
    st.workflowEnded({
      workflowId: 'kyma/kcp/k1',
      runId: 'r0',
      status: 'Failed',
      at: '2026-11-25T10:00:00Z',
      reason: 'boom',
    });
    const t = untilWait(st, snapshot([spec('greeter')]));
    expect(kinds(t).slice(0, 2)).toEqual(['load', 'event:WorkflowEnded']);
  });

  it('drops a removed module, and starts it anew when it is wanted again', () => {
    const st = running(['greeter', 'counter']);
    st.changed();
    untilWait(st, snapshot([spec('counter')]));
    st.removed('greeter');
    expect(status(untilWait(st, null))?.modules?.map((m) => m.name)).toEqual(['counter']);
    st.changed();
    const t = untilWait(st, snapshot([spec('counter'), spec('greeter')]));
    expect(dispatch(t)?.start.map((m) => m.name)).toEqual(['greeter']);
  });

  it('stops a removal when the module is wanted again, even unchanged', () => {
    const st = running(['greeter', 'counter']);
    st.changed();
    untilWait(st, snapshot([spec('counter')]));
    st.changed();
    const t = untilWait(st, snapshot([spec('counter'), spec('greeter')]));
    expect(dispatch(t)?.update).toEqual([
      { name: 'greeter', desired: { uid: 'uid-1', module: expect.objectContaining({ name: 'greeter' }) as unknown } },
    ]);
    expect(st.removing).toEqual({});
  });

  it('restarts a module workflow that ended while it was wanted again', () => {
    const st = running(['greeter']);
    st.changed();
    untilWait(st, snapshot([]));
    st.changed();
    untilWait(st, snapshot([spec('greeter')]));
    // Its removal had finished already: it reports removed after being wanted again.
    st.removed('greeter');
    expect(st.awake()).toBe(true);
    expect(dispatch(untilWait(st, snapshot([spec('greeter')])))?.start.map((m) => m.name)).toEqual(['greeter']);
  });

  it('shows a module that cannot be resolved, and keeps the others going', () => {
    const st = new KymaState({ settings: SETTINGS });
    const failure: Resolution = {
      name: 'nosuch',
      channel: 'regular',
      failure: { reason: 'ModuleNotFound', message: 'module "nosuch" is unknown' },
    };
    const t = untilWait(st, snapshot([spec('nosuch'), spec('greeter')]), () => [failure, ok('greeter')]);
    expect(dispatch(t)?.start.map((m) => m.name)).toEqual(['greeter']);
    expect(status(t)?.modules?.[0]).toEqual({
      name: 'nosuch',
      channel: 'regular',
      state: 'Error',
      message: 'module "nosuch" is unknown',
    });
    expect(status(t)?.state).toBe('Error');
  });

  it('claims no installed version for a module never installed: one that cannot be resolved, one not reported yet', () => {
    const st = new KymaState({ settings: SETTINGS });
    const missing: Resolution = {
      name: 'greeter',
      channel: 'fast',
      version: '1.2.0',
      failure: { reason: 'TemplateNotFound', message: 'module "greeter": no ModuleTemplate "greeter-1.2.0"' },
    };
    const t = untilWait(st, snapshot([spec('greeter', { channel: 'fast' }), spec('counter')]), () => [
      missing,
      ok('counter', '1.1.0'),
    ]);
    expect(status(t)?.modules).toEqual([
      { name: 'greeter', channel: 'fast', state: 'Error', message: missing.failure.message },
      { name: 'counter', channel: 'regular', state: 'Processing', message: 'installing 1.1.0' },
    ]);
    // Installed: its version is the one its module workflow reports.
    st.reported({
      reason: 'Ready',
      status: { name: 'counter', version: '1.1.0', state: 'Ready', message: 'module is ready' },
    });
    expect(st.status().modules?.[1]).toMatchObject({ name: 'counter', version: '1.1.0', state: 'Ready' });
  });

  it('tells a running module once that it cannot be resolved any more (it shows it on its Manifest too)', () => {
    const st = running(['greeter']);
    const failure: Resolution = {
      name: 'greeter',
      channel: 'regular',
      version: '1.0.0',
      failure: { reason: 'TemplateNotFound', message: 'no ModuleTemplate' },
    };
    st.changed();
    const t = untilWait(st, snapshot([spec('greeter')]), () => [failure]);
    expect(dispatch(t)?.update).toEqual([{ name: 'greeter', desired: { uid: 'uid-1', failure: failure.failure } }]);
    st.changed();
    expect(dispatch(untilWait(st, snapshot([spec('greeter')]), () => [failure]))).toBeUndefined();
  });

  it('shows a module whose template this Kyma may not see, starts nothing, and removes it when it was running (as upstream)', () => {
    const hidden: Resolution = {
      name: 'greeter',
      channel: 'regular',
      version: '1.0.0',
      failure: {
        reason: 'ModuleNotVisible',
        message: 'module "greeter": ModuleTemplate kcp/greeter-1.0.0 is beta: not available to this Kyma',
      },
    };
    const fresh = new KymaState({ settings: SETTINGS });
    const first = untilWait(fresh, snapshot([spec('greeter')]), () => [hidden]);
    expect(dispatch(first)).toBeUndefined();
    // Nothing of it was installed: no version, as upstream.
    expect(status(first)?.modules).toEqual([
      { name: 'greeter', channel: 'regular', state: 'Error', message: hidden.failure.message },
    ]);

    const st = running(['greeter']);
    st.changed();
    const t = untilWait(st, snapshot([spec('greeter')]), () => [hidden]);
    expect(dispatch(t)).toMatchObject({
      remove: ['greeter'],
      update: [],
      events: [{ reason: 'ModuleRemoving', message: `removing module greeter: ${hidden.failure.message}` }],
    });
    expect(status(t)).toMatchObject({
      state: 'Error',
      modules: [{ name: 'greeter', state: 'Error', message: hidden.failure.message }],
    });
    // Resolved again while it goes: it is neither told again nor wanted back.
    st.changed();
    expect(dispatch(untilWait(st, snapshot([spec('greeter')]), () => [hidden]))).toBeUndefined();
    // Gone: it stays shown, and nothing starts it again.
    st.removed('greeter');
    const after = untilWait(st, snapshot([spec('greeter')]), () => [hidden]);
    expect(dispatch(after)).toBeUndefined();
    expect(kinds(after)).toEqual(['load', 'resolve', 'wait']);
    expect(st.status().modules).toEqual([
      { name: 'greeter', channel: 'regular', state: 'Error', message: hidden.failure.message },
    ]);
  });

  it('keeps a running module at its version until its maintenance window opens, shows it, and wakes up then', () => {
    const st = running(['greeter']);
    const window = { begin: 10_000, end: 20_000 };
    const upgrade: Resolution = {
      name: 'greeter',
      // A version pin: no rollout holds it, the maintenance window does.
      module: mod('1.1.0', { channel: '', template: { name: 'greeter-1.1.0', namespace: 'kcp', generation: 1 } }),
      downtime: { window },
    };
    st.changed();
    const t = untilWait(st, snapshot([spec('greeter')]), () => [upgrade], 1_000);
    expect(dispatch(t)).toBeUndefined();
    expect(status(t)?.modules?.[0]).toMatchObject({
      name: 'greeter',
      version: '1.0.0',
      state: 'Ready',
      maintenance: true,
      message: expect.stringContaining('waiting for the maintenance window') as string,
    });
    expect(t[t.length - 1]).toEqual({ kind: 'wait', driftMs: SETTINGS.driftIntervalMs, wakeAt: window.begin });
    // The window opens: the upgrade goes ahead and the hold is gone.
    st.woke({ drift: true });
    const open = untilWait(st, snapshot([spec('greeter')]), () => [upgrade], window.begin);
    expect(dispatch(open)?.update).toEqual([{ name: 'greeter', desired: { uid: 'uid-1', module: upgrade.module } }]);
    expect(status(open)?.modules?.[0]).not.toHaveProperty('maintenance');
    expect(open[open.length - 1]).toEqual({ kind: 'wait', driftMs: SETTINGS.driftIntervalMs });
  });

  it('shows a held upgrade whose maintenance policy cannot be used as its failure, and keeps the installed version', () => {
    const st = running(['greeter']);
    const upgrade: Resolution = {
      name: 'greeter',
      // A version pin: no rollout holds it, the maintenance window does.
      module: mod('1.1.0', { channel: '', template: { name: 'greeter-1.1.0', namespace: 'kcp', generation: 1 } }),
      downtime: { problem: 'ConfigMap kcp/policy key policy.json: not JSON' },
    };
    st.changed();
    const t = untilWait(st, snapshot([spec('greeter')]), () => [upgrade]);
    expect(dispatch(t)).toBeUndefined();
    expect(status(t)).toMatchObject({
      state: 'Error',
      conditions: [{ reason: 'MaintenancePolicyInvalid' }],
      modules: [
        {
          version: '1.0.0',
          state: 'Error',
          message: expect.stringContaining('the maintenance policy cannot be used: ConfigMap kcp/policy') as string,
        },
      ],
    });
    expect(t[t.length - 1]).toEqual({ kind: 'wait', driftMs: SETTINGS.driftIntervalMs });
  });

  it('releases an unmanaged module and shows it Unmanaged', () => {
    const st = running(['greeter']);
    st.changed();
    const t = untilWait(st, snapshot([spec('greeter', { managed: false })]));
    expect(dispatch(t)?.release).toEqual(['greeter']);
    expect(status(t)).toMatchObject({ state: 'Ready', modules: [{ name: 'greeter', state: 'Unmanaged' }] });
  });
});

describe('KymaState: label values that mean nothing', () => {
  it('tells each by a Warning Event once, across a continue-as-new, and again should it come back after a fix', () => {
    const skip = 'label operator.kyma-project.io/skip-reconciliation: "True" means nothing: it takes …';
    const priority = 'label operator.kyma-project.io/rollout-priority: "high" means nothing: it takes …';
    const warned = (t: KymaStep[]) =>
      t.flatMap((s) => (s.kind === 'event' && s.event.reason === 'InvalidLabelValue' ? [s.event] : []));
    const st = new KymaState({ settings: SETTINGS });
    expect(warned(untilWait(st, snapshot([spec('greeter')], { labelProblems: [skip] })))).toEqual([
      { type: 'Warning', reason: 'InvalidLabelValue', message: skip },
    ]);
    st.changed();
    expect(warned(untilWait(st, snapshot([spec('greeter')], { labelProblems: [skip, priority] })))).toEqual([
      { type: 'Warning', reason: 'InvalidLabelValue', message: priority },
    ]);
    const next = new KymaState({ settings: SETTINGS, carried: st.carry() });
    expect(warned(untilWait(next, snapshot([spec('greeter')], { labelProblems: [skip, priority] })))).toEqual([]);
    next.changed();
    expect(warned(untilWait(next, snapshot([spec('greeter')])))).toEqual([]);
    next.changed();
    expect(warned(untilWait(next, snapshot([spec('greeter')], { labelProblems: [skip] })))).toHaveLength(1);
  });
});

describe('KymaState: pause, deletion and the Kyma going away', () => {
  it('waits without a timer while paused and ignores reports until resumed', () => {
    const st = running(['greeter']);
    st.changed();
    expect(kinds(untilWait(st, snapshot([spec('greeter')], { paused: true })))).toEqual(['load', 'wait']);
    st.reported(report('greeter', 'ResourceError', 'Error'));
    expect(st.awake()).toBe(false);
  });

  it('removes every module on deletion, then writes the last status (conditions kept), records Deleted and drops the finalizer', () => {
    const st = running(['greeter', 'counter']);
    st.changed();
    const deleting = snapshot([spec('greeter'), spec('counter')], { deleting: true });
    const t = untilWait(st, deleting);
    expect(kinds(t)).toEqual(['load', 'event:Deleting', 'dispatch', 'writeStatus', 'wait']);
    expect(dispatch(t)?.remove).toEqual(['greeter', 'counter']);
    expect(status(t)?.state).toBe('Deleting');
    st.removed('greeter');
    st.removed('counter');
    const end = untilWait(st, deleting);
    expect(kinds(end)).toEqual(['writeStatus', 'event:Deleted', 'removeFinalizer', 'end']);
    expect(status(end)).toMatchObject({
      state: 'Deleting',
      modules: [],
      conditions: [{ type: 'Modules', status: 'True' }],
      lastOperation: { operation: 'all modules removed; removing the finalizer' },
    });
  });

  it('releases the modules of a Kyma deleted without its finalizer, then ends', () => {
    const st = running(['greeter', 'counter']);
    st.changed();
    const t = untilWait(st, null);
    expect(dispatch(t)).toMatchObject({
      release: ['greeter', 'counter'],
      events: [{ type: 'Warning', reason: 'KymaGone' }],
    });
    expect(st.awake()).toBe(false);
    st.removed('greeter');
    st.removed('counter');
    expect(st.awake()).toBe(true);
    expect(kinds(untilWait(st, null))).toEqual(['end']);
  });

  it('starts over for a re-created Kyma (another uid): running modules it wants take its uid, the others go', () => {
    const st = running(['greeter', 'counter']);
    st.changed();
    const recreated = snapshot([spec('greeter')], { uid: 'uid-2' });
    expect(kinds(untilWait(st, recreated))).toEqual(['load', 'restart']);
    const next = new KymaState({ settings: SETTINGS, carried: st.carryToRecreated() });
    const t = untilWait(next, recreated);
    expect(dispatch(t)).toMatchObject({
      start: [],
      update: [{ name: 'greeter', desired: { uid: 'uid-2' } }],
      remove: ['counter'],
    });
  });

  it('ends the modules and lets the Kyma go when its target Secret is gone at deletion', () => {
    const st = new KymaState({ settings: SETTINGS });
    untilWait(st, snapshot([spec('greeter')], { remote: true }));
    st.changed();
    const t = untilWait(st, snapshot([spec('greeter')], { remote: false, deleting: true }));
    expect(kinds(t)).toEqual(['load', 'event:TargetClusterGone', 'cancelModules', 'removeFinalizer', 'end']);
  });

  it('refuses a Kyma whose name cannot be a label value with a status, no finalizer and no modules', () => {
    const st = new KymaState({ settings: SETTINGS });
    const invalid = kymaNameProblem('k'.repeat(64))!;
    const t = untilWait(st, snapshot([spec('greeter')], { finalized: false, invalid }));
    expect(kinds(t)).toEqual(['load', 'writeStatus', 'wait']);
    expect(status(t)).toMatchObject({
      state: 'Error',
      modules: [],
      conditions: [{ status: 'False', reason: 'InvalidKymaName' }],
    });
    expect(t[t.length - 1]).toEqual({ kind: 'wait' });
    st.changed();
    expect(kinds(untilWait(st, snapshot([], { deleting: true, finalized: true, invalid })))).toEqual([
      'load',
      'removeFinalizer',
      'end',
    ]);
  });

  it("begins with the run's first read: no load step, and news that read reflected asks for none", () => {
    const st = new KymaState({
      settings: SETTINGS,
      loaded: { seen: { Kyma: '120' }, snapshot: snapshot([spec('greeter')]) },
    });
    const t = untilWait(st, null);
    expect(kinds(t)).toEqual(['resolve', 'dispatch', 'writeStatus', 'wait']);
    // The signal that started the run tells the version the first read reflected already.
    st.changed({ Kyma: '120' });
    expect(st.awake()).toBe(false);
    st.changed({ Kyma: '119' });
    expect(st.awake()).toBe(false);
  });

  it('loads again for news newer than the last load, of another kind, or without a version', () => {
    const first = () =>
      new KymaState({ settings: SETTINGS, loaded: { seen: { Kyma: '120' }, snapshot: snapshot([spec('greeter')]) } });
    for (const news of [{ Kyma: '121' }, { ModuleTemplate: '5' }, {}, undefined]) {
      const st = first();
      untilWait(st, null);
      st.changed(news);
      expect(st.awake()).toBe(true);
      const t = untilWait(st, snapshot([spec('greeter')]));
      expect(t[0]).toEqual({ kind: 'load', seen: { Kyma: '120', ...news } });
    }
  });

  it('a run whose first read found the Kyma gone releases what it carried and ends', () => {
    const before = running(['greeter']);
    const st = new KymaState({ settings: SETTINGS, carried: before.carry(), loaded: { snapshot: null } });
    const t = untilWait(st, null);
    expect(kinds(t)).toContain('dispatch');
    expect(dispatch(t)?.release).toEqual(['greeter']);
  });

  it('carries what it knows across a continue-as-new and does not re-tell unchanged modules', () => {
    const before = running(['greeter']);
    const st = new KymaState({ settings: SETTINGS, carried: before.carry() });
    const t = untilWait(st, snapshot([spec('greeter')]));
    expect(dispatch(t)).toBeUndefined();
    expect(status(t)?.state).toBe('Ready');
  });
});

describe('aggregateState', () => {
  it.each([
    [['Ready', 'Error', 'Warning'], 'Error'],
    [['Ready', 'Warning', 'Processing'], 'Warning'],
    [['Ready', 'Deleting'], 'Processing'],
    [['Ready', ''], 'Processing'],
    [['Ready', 'Unmanaged'], 'Ready'],
    [[], 'Ready'],
  ] as const)('%j → %s', (states, expected) => {
    expect(aggregateState([...states])).toBe(expected);
  });
});

describe('KymaState: mandatory modules', () => {
  const logging = spec('logging', { channel: 'mandatory', mandatory: true });
  const okOn = (name: string, channel: string, version = '1.0.0'): Resolution => ({
    name,
    module: mod(version, {
      name,
      channel,
      template: { name: `${name}-${version}`, namespace: 'kcp', generation: 1 },
      ...(channel === 'mandatory' ? { mandatory: true as const } : {}),
    }),
  });
  const resolveAll =
    (versions: Record<string, string> = {}) =>
    (s: KymaSnapshot) =>
      s.modules.map((m) => okOn(m.name, m.channel ?? 'regular', versions[m.name]));

  it('installs a mandatory module without an entry in the status, and its Error does not sway the state', () => {
    const st = new KymaState({ settings: SETTINGS });
    const t = untilWait(st, snapshot([spec('greeter'), logging]), resolveAll());
    expect(dispatch(t)?.start.map((m) => [m.name, m.mandatory ?? false])).toEqual([
      ['greeter', false],
      ['logging', true],
    ]);
    st.reported(report('greeter', 'Ready', 'Ready', 'module is ready'));
    st.reported(report('logging', 'ApplyRejected', 'Error', 'applying ConfigMap x: invalid'));
    untilWait(st, snapshot([spec('greeter'), logging]), resolveAll());
    expect(st.status()).toMatchObject({ state: 'Ready', modules: [{ name: 'greeter', state: 'Ready' }] });
  });

  it('tells by one Warning Event, not by the status, that a mandatory module cannot be resolved', () => {
    const st = new KymaState({ settings: SETTINGS });
    const missing = (s: KymaSnapshot): Resolution[] =>
      s.modules.map((m) =>
        m.mandatory
          ? {
              name: m.name,
              channel: 'mandatory',
              failure: { reason: 'TemplateNotFound', message: 'no ModuleTemplate "logging-1.0.0"' },
            }
          : okOn(m.name, 'regular'),
      );
    const t = untilWait(st, snapshot([spec('greeter'), logging]), missing);
    expect(
      t
        .filter((s) => s.kind === 'event')
        .map((s) => s.kind === 'event' && [s.event.type, s.event.reason, s.event.message]),
    ).toEqual([['Warning', 'MandatoryModuleFailed', 'mandatory module logging: no ModuleTemplate "logging-1.0.0"']]);
    expect(status(t)?.modules?.map((m) => m.name)).toEqual(['greeter']);
    st.changed();
    expect(untilWait(st, snapshot([spec('greeter'), logging]), missing).filter((s) => s.kind === 'event')).toEqual([]);
  });

  it('removes a module that stops being mandatory, without showing it as Deleting', () => {
    const st = new KymaState({ settings: SETTINGS });
    untilWait(st, snapshot([spec('greeter'), logging]), resolveAll());
    st.reported(report('greeter', 'Ready', 'Ready', 'module is ready'));
    st.reported(report('logging', 'Ready', 'Ready', 'module is ready'));
    st.changed();
    const t = untilWait(st, snapshot([spec('greeter')]), resolveAll());
    expect(dispatch(t)?.remove).toEqual(['logging']);
    expect(st.status().modules?.map((m) => m.name)).toEqual(['greeter']);
  });

  it('moves a mandatory module to a new version only when the rollout of the channel "mandatory" admits it', () => {
    const st = new KymaState({ settings: SETTINGS });
    const snap = snapshot([logging]);
    untilWait(st, snap, resolveAll());
    st.reported({
      reason: 'Ready',
      status: { name: 'logging', channel: 'mandatory', version: '1.0.0', state: 'Ready' },
    });
    st.changed();
    const held = untilWait(st, snap, resolveAll({ logging: '2.0.0' }));
    expect(dispatch(held)).toBeUndefined();
    st.admit({ module: 'logging', channel: 'mandatory', version: '2.0.0' });
    const moved = untilWait(st, snap, resolveAll({ logging: '2.0.0' }));
    expect(dispatch(moved)?.update.map((u) => `${u.name}@${u.desired.module?.version}`)).toEqual(['logging@2.0.0']);
  });
});

describe('KymaState: a template whose spec.moduleName names another module', () => {
  const twin = (generation: number): Resolution => ({
    name: 'twin',
    module: mod('1.0.0', {
      name: 'twin',
      template: { name: 'twin-1.0.0', namespace: 'kcp', generation },
      templateModuleName: 'other',
    }),
  });
  const warnings = (t: KymaStep[]) =>
    (dispatch(t)?.events ?? []).filter((e) => e.reason === 'ModuleNameMismatch').map((e) => [e.type, e.message]);

  it('installs it all the same and says so by one Warning Event per template generation, also across continue-as-new', () => {
    const st = new KymaState({ settings: SETTINGS });
    const s = snapshot([spec('twin')]);
    const t = untilWait(st, s, () => [twin(1)]);
    expect(dispatch(t)?.start.map((m) => m.name)).toEqual(['twin']);
    expect(warnings(t)).toEqual([
      [
        'Warning',
        expect.stringContaining(
          'ModuleTemplate kcp/twin-1.0.0 says spec.moduleName "other", not "twin" (generation 1)',
        ) as unknown,
      ],
    ]);
    st.changed();
    expect(kinds(untilWait(st, s, () => [twin(1)]))).toEqual(['load', 'resolve', 'wait']);
    st.changed();
    const next = untilWait(st, s, () => [twin(2)]);
    expect(warnings(next)).toEqual([['Warning', expect.stringContaining('(generation 2)') as unknown]]);
    const resumed = new KymaState({ settings: SETTINGS, carried: st.carry() });
    expect(warnings(untilWait(resumed, s, () => [twin(2)]))).toEqual([]);
  });
});
