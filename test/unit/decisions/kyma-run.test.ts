// One run of a Kyma's workflow, driven as the workflow drives it (take, run each piece, done),
// without Temporal: what runs at once, whatever the number of modules; when it waits, wakes and
// continues as new.
import { describe, expect, it } from 'vitest';
import type { KymaSnapshot, SpecModule } from '../../../src/contract/kyma';
import type { Resolution } from '../../../src/contract/module';
import type { Readiness, ReadinessCheck } from '../../../src/contract/readiness';
import type { CatalogSync, RuntimeKymaSync } from '../../../src/contract/runtime';
import { KymaRun, LOCAL_BATCH, type HistoryInfo, type InstallsDone, type Work } from '../../../src/decisions/kyma-run';
import type { KymaOutcome } from '../../../src/decisions/kyma-steps';
import type { ModuleOutcome } from '../../../src/decisions/module-steps';
import type { StartedAction } from '../../../src/decisions/module-pool';
import { installResult, KYMA, mod, SETTINGS, snapshot } from './fixtures';

const READY: ReadinessCheck = { reason: 'Ready', message: 'module is ready' };

const spec = (names: string[]): SpecModule[] =>
  names.map((name) => ({ name, customResourcePolicy: 'CreateAndDelete', managed: true }));

const names = (n: number) => Array.from({ length: n }, (_, i) => `m${String(i).padStart(4, '0')}`);

interface Fleet {
  snapshot: KymaSnapshot;
  /** An install's outcome for a module (a Ready install by default). */
  install?: (module: string) => ModuleOutcome;
  /** What a runtime sync finds (the control plane itself by default). */
  runtime?: RuntimeKymaSync;
  /** How a catalog sync goes (it writes nothing by default). */
  catalog?: CatalogSync | { failure: Readiness };
}

const SYNCED: CatalogSync = { applied: 0, deleted: 0, foreign: 0 };

/** What the workflow's activities would answer. */
function answer(w: Work, f: Fleet): KymaOutcome | ModuleOutcome | ModuleOutcome[] | InstallsDone | undefined {
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
      if (a.kind === 'syncRuntime') return { kind: a.kind, value: f.runtime ?? { kind: 'controlPlane' } };
      if (a.kind === 'syncCatalog') return { kind: a.kind, value: f.catalog ?? SYNCED };
      return { kind: a.kind };
    }
    case 'module': {
      const a = w.started.action;
      if (a.kind === 'install')
        return f.install?.(w.started.module) ?? { kind: 'install', value: { ...installResult('1.0.0'), check: READY } };
      // A removal goes through at once.
      if (a.kind === 'findBlockers') return { kind: a.kind, value: { count: 0, first: [], sharedWith: 0 } };
      if (a.kind === 'deleteDefaultCr') return { kind: a.kind, value: null };
      if (a.kind === 'deleteObjects') return { kind: a.kind, value: { deleted: 4, done: true } };
      return { kind: 'checkReadiness', value: READY };
    }
    case 'installs':
      return {
        modules: w.started.map(
          (s): ModuleOutcome =>
            f.install?.(s.module) ?? { kind: 'install', value: { ...installResult('1.0.0'), check: READY } },
        ),
        ...(w.catalog ? { catalog: { kind: 'syncCatalog', value: f.catalog ?? SYNCED } } : {}),
      };
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
    trace.maxModuleActivities = Math.max(trace.maxModuleActivities, moduleStarts(pending).length);
    trace.maxLocalInFlight = Math.max(trace.maxLocalInFlight, pending.filter((w) => w.kind === 'modules').length);
    for (const w of taken)
      if (w.kind === 'modules') trace.maxLocalBatch = Math.max(trace.maxLocalBatch, w.started.length);
    const w = pending.shift();
    if (!w) return trace;
    run.done(w, answer(w, f), now);
  }
  throw new Error('the run never settled');
}

/** The module actions started as activities (an install batch's each). */
const moduleStarts = (works: Work[]): StartedAction[] =>
  works.flatMap((w) => (w.kind === 'module' ? [w.started] : w.kind === 'installs' ? w.started : []));

/** The installs started. */
const installStarts = (works: Work[]): StartedAction[] =>
  moduleStarts(works).filter((s) => s.action.kind === 'install');

const newTrace = (): Trace => ({ maxModuleActivities: 0, maxLocalBatch: 0, maxLocalInFlight: 0, works: [] });

const newRun = (over: Partial<typeof SETTINGS> = {}) =>
  new KymaRun({
    kyma: KYMA,
    settings: { ...SETTINGS, ...over },
    maxRunning: over.moduleParallelism ?? 50,
    runStartedAt: 0,
  });

/** What Temporal says of a run that is neither long nor on an old version, at time 0. */
const history = (over: Partial<HistoryInfo> = {}): HistoryInfo => ({
  events: 10,
  suggested: false,
  versionChanged: false,
  now: 0,
  ...over,
});

describe('KymaRun: one loop for a Kyma and all its modules', () => {
  it('installs 1,000 modules with at most 50 activities under way and their checks in batches, then is Ready', () => {
    const run = newRun({ moduleParallelism: 50 });
    const fleet = { snapshot: snapshot(spec(names(1_000))) };
    const t = settle(run, fleet);
    expect(installStarts(t.works)).toHaveLength(1_000);
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
    expect(moduleStarts(t.works)).toEqual([]);
    const status = run.status();
    expect(status.state).toBe('Error');
    expect(status.lastOperation?.operation).toMatch(/lists 1001 modules, more than the 1000 one Kyma may have/);
  });

  it.each([
    ['Temporal suggests it', { suggested: true }],
    ['its worker version is no longer the current one', { versionChanged: true }],
  ] as const)(
    'continues as new when %s, only when nothing is under way and the Kyma waits, carrying every module, which the next run does not install again',
    (_, due) => {
      const run = newRun();
      const fleet = { snapshot: snapshot(spec(names(3))) };
      const first = run.take(0);
      expect(run.stop(history(due))).toBeUndefined();
      run.done(first[0]!, answer(first[0]!, fleet), 0);
      settle(run, fleet);
      expect(run.stop(history())).toBeUndefined();
      const stop = run.stop(history(due));
      expect(stop?.kind).toBe('continueAsNew');
      const carried = stop?.kind === 'continueAsNew' ? stop.carried : undefined;
      expect(Object.keys(carried?.modules ?? {})).toEqual(names(3));
      const next = new KymaRun({ kyma: KYMA, settings: SETTINGS, carried: carried!, maxRunning: 50, runStartedAt: 0 });
      const t = settle(next, fleet);
      expect(installStarts(t.works)).toEqual([]);
      expect(next.status().state).toBe('Ready');
    },
  );

  it('asks which worker version is current only when it could continue as new at once, at most once a minute, the first a minute after the run started', () => {
    const run = newRun();
    const fleet = { snapshot: snapshot(spec(names(2))) };
    const first = run.take(0);
    // Work under way: the answer could not be acted on.
    expect(run.versionCheckDue(0)).toBe(false);
    run.done(first[0]!, answer(first[0]!, fleet), 0);
    settle(run, fleet);
    expect(run.versionCheckDue(1_000)).toBe(false);
    expect(run.versionCheckDue(60_000)).toBe(true);
    expect(run.versionCheckDue(90_000)).toBe(false);
    expect(run.versionCheckDue(120_000)).toBe(true);
  });

  it('lives at most maxRunAgeMs: continues as new once it is that old and idle, not before', () => {
    const day = 24 * 60 * 60_000;
    const run = newRun({ maxRunAgeMs: day, driftIntervalMs: 2 * day });
    settle(run, { snapshot: snapshot(spec(names(2))) });
    expect(run.endsAt).toBe(day);
    expect(run.stop(history({ now: day - 1 }))).toBeUndefined();
    expect(run.stop(history({ now: day }))?.kind).toBe('continueAsNew');
  });

  it('arms the drift timer to fire by the run’s end, and for its whole interval once that end is past', () => {
    const run = newRun({ maxRunAgeMs: 60 * 60_000, driftIntervalMs: 10 * 60_000 });
    settle(run, { snapshot: snapshot(spec(names(1))) });
    expect(run.takeDriftArm(0)).toBe(10 * 60_000);
    run.driftFired();
    settle(run, { snapshot: snapshot(spec(names(1))) }, 55 * 60_000);
    expect(run.takeDriftArm(55 * 60_000)).toBe(5 * 60_000);
    // Past its end (work under way held the run): not a timer that fires at once, again and again.
    run.driftFired();
    settle(run, { snapshot: snapshot(spec(names(1))) }, 61 * 60_000);
    expect(run.takeDriftArm(61 * 60_000)).toBe(10 * 60_000);
    // Asked once, taken once.
    expect(run.takeDriftArm(61 * 60_000)).toBeUndefined();
  });

  it("carries a Kyma of 1,000 modules in well under Temporal's 2 MB payload limit; the next run rebuilds their statuses", () => {
    const run = newRun();
    settle(run, { snapshot: snapshot(spec(names(1_000))) });
    const stop = run.stop(history({ suggested: true }));
    const carried = stop?.kind === 'continueAsNew' ? stop.carried : undefined;
    expect(Buffer.byteLength(JSON.stringify(carried))).toBeLessThan(1_000_000);
    const next = new KymaRun({ kyma: KYMA, settings: SETTINGS, carried: carried!, maxRunning: 50, runStartedAt: 0 });
    expect(Object.keys(next.kyma.reports)).toHaveLength(1_000);
    const t = settle(next, { snapshot: snapshot(spec(names(1_000))) });
    expect(next.status()).toEqual(run.status());
    // Nothing installed again; a status written once, its Manifests not written again (their reports did not change).
    expect(installStarts(t.works)).toEqual([]);
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
    expect(moduleStarts(retried.works).map((s) => s.module)).toEqual(['m0000']);
    expect(run.status().state).toBe('Ready');
    expect(run.takeDriftArm(5_000)).toBe(SETTINGS.driftIntervalMs);
    run.driftFired();
    const drifted = settle(run, fleet, 5_000);
    // The drift timer re-applies every module (idempotent) and loads the Kyma again.
    expect(moduleStarts(drifted.works).length).toBe(2);
    expect(drifted.works.some((w) => w.kind === 'kyma' && w.action.kind === 'load')).toBe(true);
  });

  it("takes news of a module's objects to that module alone", () => {
    const run = newRun();
    const fleet = { snapshot: snapshot(spec(names(3))) };
    settle(run, fleet);
    run.modulesChanged([{ module: 'm0001', change: { observed: [] } }]);
    const t = settle(run, fleet);
    const checked = t.works.flatMap((w) =>
      w.kind === 'modules' || w.kind === 'installs'
        ? w.started.map((s) => s.module)
        : w.kind === 'module'
          ? [w.started.module]
          : [],
    );
    expect(checked).toEqual(['m0001']);
  });
});

describe('KymaRun: the catalog of a Kyma with a runtime', () => {
  const runtime: RuntimeKymaSync = {
    kind: 'synced',
    spec: { channel: 'regular', modules: spec(names(2)) },
    created: true,
  };
  const cluster = { server: 'https://a.example:6443', uid: 'uid-of-a' };
  const fleet = (over: Partial<Fleet> = {}): Fleet => ({
    snapshot: snapshot(spec(names(2)), { remote: true, cluster }),
    runtime,
    ...over,
  });
  const syncs = (t: Trace) =>
    t.works.flatMap((w) =>
      w.kind === 'kyma' && w.action.kind === 'syncCatalog'
        ? [{ alone: true, full: w.action.full, after: w.action.after }]
        : w.kind === 'installs' && w.catalog
          ? [{ alone: false, full: w.catalog.full, after: w.catalog.after }]
          : [],
    );
  const runtimeCondition = (run: KymaRun) => run.status().conditions?.find((c) => c.type === 'Runtime');

  it('syncs a new runtime’s catalog in the activity of its first installs, and writes the status after both', () => {
    const run = newRun();
    const t = settle(run, fleet());
    expect(syncs(t)).toEqual([{ alone: false, full: true, after: 0 }]);
    const batch = t.works.findIndex((w) => w.kind === 'installs');
    expect(installStarts(t.works).map((s) => s.module)).toEqual(names(2));
    const statusWrites = t.works.flatMap((w, i) => (w.kind === 'write' && w.status ? [i] : []));
    expect(statusWrites.length).toBeGreaterThan(0);
    expect(Math.min(...statusWrites)).toBeGreaterThan(batch);
    expect(run.status().state).toBe('Ready');
    expect(runtimeCondition(run)).toMatchObject({ status: 'True', reason: 'Synced' });
  });

  it('writes once when the installs and the catalog return, the status showing what the modules reported then, with their Manifests', () => {
    const run = newRun();
    const waiting: ReadinessCheck = {
      reason: 'ResourceNotReady',
      message: 'waiting for the default CR to report a state',
    };
    const t = settle(
      run,
      fleet({ install: () => ({ kind: 'install', value: { ...installResult('1.0.0'), check: waiting } }) }),
    );
    const batch = t.works.findIndex((w) => w.kind === 'installs');
    const after = t.works.slice(batch + 1).flatMap((w) => (w.kind === 'write' ? [w.writes] : []));
    expect(after).toHaveLength(1);
    expect(after[0]!.manifests?.map((m) => m.module.name)).toEqual(names(2));
    expect(after[0]!.status?.modules?.map((m) => [m.name, m.state])).toEqual([
      ['m0000', 'Processing'],
      ['m0001', 'Processing'],
    ]);
  });

  it('syncs the catalog in an activity of its own when it changes with nothing to install', () => {
    const run = newRun();
    settle(run, fleet());
    run.catalogChanged();
    const t = settle(run, fleet());
    expect(syncs(t)).toEqual([{ alone: true, full: false, after: 1 }]);
    expect(installStarts(t.works)).toEqual([]);
  });

  it('shows a catalog sync that failed beside the installs, and syncs in full on the next change', () => {
    const run = newRun();
    const failure = { reason: 'TargetClusterUnreachable', message: 'runtime does not answer' } as const;
    settle(run, fleet({ catalog: { failure } }));
    expect(runtimeCondition(run)).toMatchObject({ status: 'False', reason: 'TargetClusterUnreachable' });
    expect(runtimeCondition(run)?.message).toContain('runtime does not answer');
    run.changed();
    const t = settle(run, fleet());
    expect(syncs(t)).toEqual([{ alone: true, full: true, after: 0 }]);
  });
});

describe('KymaRun: a kubeconfig Secret that names another cluster', () => {
  const A = { server: 'https://a.example:6443', uid: 'uid-of-a' };
  const B = { server: 'https://b.example:6443', uid: 'uid-of-b' };
  /** A remote Kyma of modules m0000 and m0001 on `cluster`, each install telling where it applied. */
  const on = (cluster: { server: string; uid?: string }, over: Partial<KymaSnapshot> = {}): Fleet => ({
    snapshot: snapshot(spec(names(2)), { remote: true, cluster, ...over }),
    install: () => ({
      kind: 'install',
      value: { ...installResult('1.0.0'), cluster: cluster.uid ?? cluster.server, check: READY },
    }),
  });
  const installs = (t: Trace) => installStarts(t.works).flatMap((s) => (s.action.kind === 'install' ? [s.action] : []));
  const events = (t: Trace) => t.works.flatMap((w) => (w.kind === 'write' ? (w.writes.events ?? []) : []));
  const condition = (run: KymaRun) => run.status().conditions?.find((c) => c.type === 'TargetCluster');

  it('applies every module to the new cluster at once, its objects there not taken for known, and names the old cluster and what stayed on it', () => {
    const run = newRun();
    settle(run, on(A));
    expect(run.status().state).toBe('Ready');
    run.changed({ Secret: '7' });
    const t = settle(run, on(B));
    // The load reads the Secret as of the event that told of it.
    expect(t.works.find((w) => w.kind === 'kyma' && w.action.kind === 'load')).toMatchObject({
      action: { seen: { Secret: '7' } },
    });
    // Installed again at once (not on the drift timer), each install told where its version went before.
    expect(installs(t).map((i) => [i.module.name, i.previousCluster])).toEqual([
      ['m0000', 'uid-of-a'],
      ['m0001', 'uid-of-a'],
    ]);
    const told = events(t).filter((e) => e.reason === 'TargetClusterSwitched');
    expect(told).toEqual([
      {
        type: 'Warning',
        reason: 'TargetClusterSwitched',
        message:
          'the kubeconfig Secret names another cluster now, https://b.example:6443 (kube-system uid uid-of-b): the ' +
          'modules are installed there; the objects of m0000, m0001 stayed in https://a.example:6443 (kube-system uid ' +
          'uid-of-a), which it named before: a cluster the Secret no longer names is left as it is (switch 1; the ' +
          'condition TargetCluster tells it until operator.kyma-project.io/old-clusters-cleared=1 is set on this Kyma)',
      },
    ]);
    expect(condition(run)).toEqual({
      type: 'TargetCluster',
      status: 'False',
      reason: 'ModulesLeftOnOldCluster',
      message:
        'the kubeconfig Secret of this Kyma named another cluster before, and nothing was removed from it: switch 1: ' +
        'the objects of m0000, m0001 stayed in https://a.example:6443 (kube-system uid uid-of-a). Remove what is left ' +
        'there, then annotate this Kyma operator.kyma-project.io/old-clusters-cleared=1 to clear this',
    });
    const status = run.status();
    expect(status.state).toBe('Warning');
    expect(status.modules?.map((m) => m.state)).toEqual(['Ready', 'Ready']);
    expect(status.lastOperation?.operation).toBe(condition(run)?.message);
    // It persists: the next loads (and the drift timer) do not forget it, and tell it once.
    run.driftFired();
    const again = settle(run, on(B), 1_000);
    expect(events(again).filter((e) => e.reason === 'TargetClusterSwitched')).toEqual([]);
    expect(condition(run)?.reason).toBe('ModulesLeftOnOldCluster');
    // The next install on B is one with B's objects known again.
    expect(installs(again).map((i) => i.previousCluster)).toEqual(['uid-of-b', 'uid-of-b']);
  });

  it('clears what a person annotated as taken care of, up to that switch, and carries the rest across continue-as-new', () => {
    const run = newRun();
    settle(run, on(A));
    run.changed();
    settle(run, on(B));
    run.changed();
    const C = { server: 'https://c.example:6443', uid: 'uid-of-c' };
    settle(run, on(C));
    expect(condition(run)?.message).toContain('switch 1: the objects of m0000, m0001 stayed in https://a.example');
    expect(condition(run)?.message).toContain('switch 2: the objects of m0000, m0001 stayed in https://b.example');
    expect(condition(run)?.message).toContain('old-clusters-cleared=2 to clear this');
    const stop = run.stop(history({ suggested: true }));
    expect(stop?.kind).toBe('continueAsNew');
    const carried = stop?.kind === 'continueAsNew' ? stop.carried : undefined;
    const next = new KymaRun({ kyma: KYMA, settings: SETTINGS, carried: carried!, maxRunning: 50, runStartedAt: 0 });
    settle(next, on(C));
    expect(condition(next)).toEqual(condition(run));
    next.changed();
    settle(next, on(C, { oldClustersCleared: 1 }));
    expect(condition(next)?.message).not.toContain('switch 1');
    expect(condition(next)?.message).toContain('switch 2');
    next.changed();
    settle(next, on(C, { oldClustersCleared: 2 }));
    expect(condition(next)).toBeUndefined();
    expect(next.status().state).toBe('Ready');
    // A later switch is told again, under a number the annotation does not clear yet.
    next.changed();
    settle(next, on(A, { oldClustersCleared: 2 }));
    expect(condition(next)?.message).toContain('switch 3: the objects of m0000, m0001 stayed in https://c.example');
  });

  it('takes another URL of the same cluster, or a cluster it cannot tell, for no switch; nor a Secret that went', () => {
    const run = newRun();
    settle(run, on(A));
    for (const f of [
      on({ server: 'https://127.0.0.1:6443', uid: A.uid }),
      on(A, { cluster: undefined }),
      // The Secret went: the control plane is not where its modules are (they refuse it).
      {
        ...on({ server: 'https://kcp.example', uid: 'uid-of-kcp' }),
        snapshot: snapshot(spec(names(2)), {
          remote: false,
          cluster: { server: 'https://kcp.example', uid: 'uid-of-kcp' },
        }),
      },
    ]) {
      run.changed();
      const t = settle(run, f);
      expect(installs(t)).toEqual([]);
      expect(events(t).map((e) => e.reason)).not.toContain('TargetClusterSwitched');
      expect(condition(run)).toBeUndefined();
    }
  });

  it('names the runtime side when the old cluster had it, forgets a cluster it switches back to, and tells a switch that left nothing as Normal', () => {
    const run = newRun();
    const runtime: RuntimeKymaSync = {
      kind: 'synced',
      spec: { channel: 'regular', modules: spec(names(2)) },
      created: true,
    };
    settle(run, { ...on(A), runtime });
    run.changed();
    settle(run, { ...on(B), runtime });
    expect(condition(run)?.message).toContain(
      'switch 1: the objects of m0000, m0001 and the runtime Kyma kyma-system/default with its catalog and CRDs stayed in https://a.example',
    );
    run.changed();
    settle(run, { ...on(A), runtime });
    expect(condition(run)?.message).not.toContain('https://a.example');
    expect(condition(run)?.message).toContain('switch 2: the objects of m0000, m0001 and the runtime Kyma');
    // A Kyma with nothing installed anywhere yet.
    const empty = newRun();
    settle(empty, { snapshot: snapshot([], { remote: true, cluster: A }) });
    empty.changed();
    const t = settle(empty, { snapshot: snapshot([], { remote: true, cluster: B }) });
    expect(
      events(t)
        .filter((e) => e.reason === 'TargetClusterSwitched')
        .map((e) => e.type),
    ).toEqual(['Normal']);
    expect(condition(empty)).toBeUndefined();
  });

  it('says at its deletion what stays in a cluster its Secret named before', () => {
    const run = newRun();
    settle(run, on(A));
    run.changed();
    settle(run, on(B));
    run.changed();
    const t = settle(run, on(B, { deleting: true }));
    const deleted = events(t).filter((e) => e.reason === 'Deleted');
    expect(deleted).toEqual([
      {
        type: 'Warning',
        reason: 'Deleted',
        message:
          'all modules removed; dropping the finalizer; left as they are in clusters its kubeconfig Secret named ' +
          'before: the objects of m0000, m0001 stayed in https://a.example:6443 (kube-system uid uid-of-a)',
      },
    ]);
  });
});
