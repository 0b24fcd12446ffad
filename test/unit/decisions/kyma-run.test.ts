// One run of a Kyma's workflow, driven as the workflow drives it (take, run each piece, done),
// without Temporal: what runs at once, whatever the number of modules; when it waits, wakes and
// continues as new.
import { describe, expect, it } from 'vitest';
import type { KymaSnapshot, SpecModule } from '../../../src/contract/kyma';
import type { Resolution } from '../../../src/contract/module';
import type { ReadinessCheck } from '../../../src/contract/readiness';
import { KymaRun, LOCAL_BATCH, type Work } from '../../../src/decisions/kyma-run';
import type { KymaOutcome } from '../../../src/decisions/kyma-steps';
import type { ModuleOutcome } from '../../../src/decisions/module-state';
import { installResult, KYMA, mod, SETTINGS, snapshot } from './fixtures';

const READY: ReadinessCheck = { reason: 'Ready', message: 'module is ready' };

const spec = (names: string[]): SpecModule[] =>
  names.map((name) => ({ name, customResourcePolicy: 'CreateAndDelete', managed: true }));

const names = (n: number) => Array.from({ length: n }, (_, i) => `m${String(i).padStart(4, '0')}`);

interface Fleet {
  snapshot: KymaSnapshot;
  /** An install's outcome for a module (a Ready install by default). */
  install?: (module: string) => ModuleOutcome;
}

/** What the workflow's activities would answer. */
function answer(w: Work, f: Fleet): KymaOutcome | ModuleOutcome | ModuleOutcome[] | undefined {
  switch (w.kind) {
    case 'kyma': {
      const a = w.action;
      if (a.kind === 'load') return { kind: 'load', value: f.snapshot };
      if (a.kind === 'resolve')
        return {
          kind: 'resolve',
          value: a.snapshot.modules.map((m): Resolution => ({ name: m.name, module: mod('1.0.0', { name: m.name }) })),
        };
      if (a.kind === 'awaitRollout') return { kind: a.kind, missing: false };
      return { kind: a.kind } as KymaOutcome;
    }
    case 'module': {
      const a = w.started.action;
      if (a.kind === 'install')
        return f.install?.(w.started.module) ?? { kind: 'install', value: { ...installResult('1.0.0'), check: READY } };
      return { kind: 'checkReadiness', value: READY };
    }
    case 'modules':
      return w.started.map((s): ModuleOutcome => {
        if (s.action.kind === 'checkPaused') return { kind: 'checkPaused', value: false };
        if (s.action.kind === 'deleteManifest') return { kind: 'deleteManifest' };
        return { kind: 'checkReadiness', value: READY };
      });
    case 'write':
      return undefined;
  }
}

interface Trace {
  /** The most module activities under way at once. */
  maxModuleActivities: number;
  /** The most local module actions in one local activity. */
  maxLocalBatch: number;
  /** The most local activities for modules under way at once. */
  maxLocalInFlight: number;
  works: Work[];
}

/** Runs the work the run asks for, finishing the oldest first, until it has none (it waits). */
function settle(run: KymaRun, f: Fleet, now = 0, trace: Trace = newTrace()): Trace {
  const pending: Work[] = [];
  for (let i = 0; i < 100_000; i++) {
    const taken = run.take(now);
    trace.works.push(...taken);
    pending.push(...taken);
    trace.maxModuleActivities = Math.max(trace.maxModuleActivities, pending.filter((w) => w.kind === 'module').length);
    trace.maxLocalInFlight = Math.max(trace.maxLocalInFlight, pending.filter((w) => w.kind === 'modules').length);
    for (const w of taken)
      if (w.kind === 'modules') trace.maxLocalBatch = Math.max(trace.maxLocalBatch, w.started.length);
    const w = pending.shift();
    if (!w) return trace;
    run.done(w, answer(w, f), now);
  }
  throw new Error('the run never settled');
}

const newTrace = (): Trace => ({ maxModuleActivities: 0, maxLocalBatch: 0, maxLocalInFlight: 0, works: [] });

const newRun = (over: Partial<typeof SETTINGS> = {}) =>
  new KymaRun({ kyma: KYMA, settings: { ...SETTINGS, ...over }, maxRunning: over.moduleParallelism ?? 50 });

describe('KymaRun: one loop for a Kyma and all its modules', () => {
  it('installs 1,000 modules with at most 50 activities under way and their checks in batches, then is Ready', () => {
    const run = newRun({ moduleParallelism: 50 });
    const fleet = { snapshot: snapshot(spec(names(1_000))) };
    const t = settle(run, fleet);
    expect(t.works.filter((w) => w.kind === 'module' && w.started.action.kind === 'install')).toHaveLength(1_000);
    expect(t.maxModuleActivities).toBe(50);
    expect(t.maxLocalInFlight).toBeLessThanOrEqual(1);
    expect(t.maxLocalBatch).toBeLessThanOrEqual(LOCAL_BATCH);
    const status = run.status();
    expect(status.state).toBe('Ready');
    expect(status.modules).toHaveLength(1_000);
    // Every module's Manifest was written, each once the install reported it.
    const manifests = t.works.flatMap((w) => (w.kind === 'write' ? (w.writes.manifests ?? []) : []));
    expect(new Set(manifests.map((m) => m.module.name)).size).toBe(1_000);
  });

  it('refuses a Kyma of more modules than the limit: Error naming the limit, nothing installed', () => {
    const run = newRun({ maxModulesPerKyma: 1_000 });
    const t = settle(run, { snapshot: snapshot(spec(names(1_001))) });
    expect(t.works.filter((w) => w.kind === 'module')).toEqual([]);
    const status = run.status();
    expect(status.state).toBe('Error');
    expect(status.lastOperation?.operation).toMatch(/lists 1001 modules, more than the 1000 one Kyma may have/);
  });

  it('continues as new only when nothing is under way and the Kyma waits, carrying every module, which the next run does not install again', () => {
    const run = newRun();
    const fleet = { snapshot: snapshot(spec(names(3))) };
    const first = run.take(0);
    expect(run.stop({ events: 10, suggested: true })).toBeUndefined();
    run.done(first[0]!, answer(first[0]!, fleet), 0);
    settle(run, fleet);
    expect(run.stop({ events: 10, suggested: false })).toBeUndefined();
    const stop = run.stop({ events: 10, suggested: true });
    expect(stop?.kind).toBe('continueAsNew');
    const carried = stop?.kind === 'continueAsNew' ? stop.carried : undefined;
    expect(Object.keys(carried?.modules ?? {})).toEqual(names(3));
    const next = new KymaRun({ kyma: KYMA, settings: SETTINGS, carried: carried!, maxRunning: 50 });
    const t = settle(next, fleet);
    expect(t.works.filter((w) => w.kind === 'module' && w.started.action.kind === 'install')).toEqual([]);
    expect(next.status().state).toBe('Ready');
  });

  it("carries a Kyma of 1,000 modules in well under Temporal's 2 MB payload limit; the next run rebuilds their statuses", () => {
    const run = newRun();
    settle(run, { snapshot: snapshot(spec(names(1_000))) });
    const stop = run.stop({ events: 10, suggested: true });
    const carried = stop?.kind === 'continueAsNew' ? stop.carried : undefined;
    expect(Buffer.byteLength(JSON.stringify(carried))).toBeLessThan(1_000_000);
    const next = new KymaRun({ kyma: KYMA, settings: SETTINGS, carried: carried!, maxRunning: 50 });
    expect(Object.keys(next.kyma.reports)).toHaveLength(1_000);
    const t = settle(next, { snapshot: snapshot(spec(names(1_000))) });
    expect(next.status()).toEqual(run.status());
    // Nothing installed again; a status written once, its Manifests not written again (their reports did not change).
    expect(t.works.filter((w) => w.kind === 'module' && w.started.action.kind === 'install')).toEqual([]);
    expect(t.works.flatMap((w) => (w.kind === 'write' ? (w.writes.manifests ?? []) : []))).toEqual([]);
  });

  it('wakes a failed install on its backoff through the alarm, and every module on the drift timer', () => {
    const run = newRun();
    let fail = true;
    const fleet: Fleet = {
      snapshot: snapshot(spec(names(2))),
      install: (m) =>
        fail && m === 'm0000'
          ? { kind: 'install', failure: { reason: 'RegistryUnavailable', message: 'no answer' } }
          : { kind: 'install', value: { ...installResult('1.0.0'), check: READY } },
    };
    settle(run, fleet, 1_000);
    expect(run.status().state).toBe('Error');
    expect(run.alarmAt()).toBe(1_000 + SETTINGS.installRetryMs);
    fail = false;
    // Nothing is due before the alarm.
    expect(settle(run, fleet, 2_000).works).toEqual([]);
    const retried = settle(run, fleet, 1_000 + SETTINGS.installRetryMs);
    expect(
      retried.works.filter((w) => w.kind === 'module').map((w) => w.kind === 'module' && w.started.module),
    ).toEqual(['m0000']);
    expect(run.status().state).toBe('Ready');
    expect(run.takeDriftArm()).toBe(SETTINGS.driftIntervalMs);
    run.driftFired();
    const drifted = settle(run, fleet, 5_000);
    // The drift timer re-applies every module (idempotent) and loads the Kyma again.
    expect(drifted.works.filter((w) => w.kind === 'module').length).toBe(2);
    expect(drifted.works.some((w) => w.kind === 'kyma' && w.action.kind === 'load')).toBe(true);
  });

  it("takes news of a module's objects to that module alone", () => {
    const run = newRun();
    const fleet = { snapshot: snapshot(spec(names(3))) };
    settle(run, fleet);
    run.modulesChanged([{ module: 'm0001', change: { observed: [] } }]);
    const t = settle(run, fleet);
    const checked = t.works.flatMap((w) =>
      w.kind === 'modules' ? w.started.map((s) => s.module) : w.kind === 'module' ? [w.started.module] : [],
    );
    expect(checked).toEqual(['m0001']);
  });
});
