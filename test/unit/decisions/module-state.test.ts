// A module's decisions, driven step by step without Temporal: each test answers the
// steps ModuleState asks for and checks what it asks for next.
import { describe, expect, it } from 'vitest';
import type { Blockers, DeletedObjects } from '../../../src/contract/module';
import type { Readiness } from '../../../src/contract/readiness';
import { TERMINATING_RECHECK_MS } from '../../../src/decisions/module-removal';
import { ModuleState } from '../../../src/decisions/module-state';
import type { CheckStep, ModuleStep } from '../../../src/decisions/module-steps';
import { checkReadsTarget } from '../../../src/decisions/module-watch-views';
import { installResult, mod, moduleInput, SETTINGS } from './fixtures';

const READY: Readiness = { reason: 'Ready', message: 'module is ready' };
const NO_BLOCKERS: Blockers = { count: 0, first: [], sharedWith: 0 };

interface Answers {
  readiness?: Readiness[];
  install?: Readiness[];
  blockers?: Blockers[];
  finalizers?: (string[] | null)[];
  objects?: DeletedObjects[];
  paused?: boolean;
  /** Step kinds whose activity fails with this. */
  fail?: { kind: ModuleStep['kind']; failure: Readiness };
  now?: number;
}

/**
 * Answers steps until the state asks to wait or finish, as the Kyma's workflow does (`done`); an
 * install checks readiness itself (its check answers from `readiness` first). Returns every step
 * it asked for.
 */
function untilWait(st: ModuleState, a: Answers = {}): ModuleStep[] {
  const trace: ModuleStep[] = [];
  const now = a.now ?? 0;
  const readiness = () => a.readiness?.shift() ?? READY;
  for (let i = 0; i < 50; i++) {
    const step = st.next();
    trace.push(step);
    if (a.fail?.kind === step.kind) {
      st.done({ kind: step.kind as 'findBlockers', failure: a.fail.failure }, now);
      continue;
    }
    switch (step.kind) {
      case 'install': {
        const failed = a.install?.shift();
        if (failed) st.done({ kind: 'install', failure: failed }, now);
        else st.done({ kind: 'install', value: { ...installResult(step.module.version), check: readiness() } }, now);
        break;
      }
      case 'checkReadiness':
        st.done({ kind: 'checkReadiness', value: readiness() }, now);
        break;
      case 'checkPaused':
        st.done({ kind: 'checkPaused', value: a.paused ?? false }, now);
        break;
      case 'findBlockers':
        st.done({ kind: 'findBlockers', value: a.blockers?.shift() ?? NO_BLOCKERS }, now);
        break;
      case 'deleteDefaultCr':
        st.done({ kind: 'deleteDefaultCr', value: a.finalizers?.length ? a.finalizers.shift()! : null }, now);
        break;
      case 'deleteObjects':
        st.done({ kind: 'deleteObjects', value: a.objects?.shift() ?? { deleted: 1, done: true } }, now);
        break;
      case 'releaseObjects':
      case 'deleteManifest':
        st.done({ kind: step.kind }, now);
        break;
      case 'wait':
      case 'finish':
        return trace;
      default:
        break;
    }
  }
  throw new Error(`no wait within 50 steps: ${trace.map((s) => s.kind).join(', ')}`);
}

const kinds = (t: ModuleStep[]) =>
  t.map((s) =>
    s.kind === 'event' ? `event:${s.event.reason}` : s.kind === 'publish' ? `publish:${s.readiness.reason}` : s.kind,
  );
const last = (t: ModuleStep[]) => t[t.length - 1]!;

function installed(over: Parameters<typeof moduleInput>[0] = {}): ModuleState {
  const st = new ModuleState(moduleInput(over));
  untilWait(st);
  return st;
}

describe('ModuleState: install and follow', () => {
  it('installs a new module, checks it, publishes Ready and waits on the drift timer', () => {
    const st = new ModuleState(moduleInput());
    const t = untilWait(st);
    expect(kinds(t)).toEqual(['install', 'publish:Ready', 'wait']);
    const publish = t[1] as Extract<ModuleStep, { kind: 'publish' }>;
    expect(publish.report.status).toMatchObject({
      name: 'greeter',
      version: '1.0.0',
      state: 'Ready',
      resource: { kind: 'Greeter', metadata: { name: 'default', namespace: 'k1-system' } },
    });
    expect(publish.resourceKind).toBe('greeter.example.io/v1alpha1/Greeter');
    expect(last(t)).toEqual({ kind: 'wait', driftMs: SETTINGS.driftIntervalMs });
  });

  it('notes in its status message that its template names another module (spec.moduleName), and publishes once it learns so', () => {
    const twin = mod('1.0.0', { templateModuleName: 'other' });
    const t = untilWait(new ModuleState(moduleInput({ module: twin })));
    const publish = t.find((s): s is Extract<ModuleStep, { kind: 'publish' }> => s.kind === 'publish');
    expect(publish?.report.status).toMatchObject({
      state: 'Ready',
      message: 'module is ready (note: ModuleTemplate kcp/greeter-1.0.0 says spec.moduleName "other", not "greeter")',
    });
    const st = installed();
    st.want({ uid: 'uid-1', module: twin });
    expect(st.awake()).toBe(true);
    st.woke({ drift: false });
    const again = untilWait(st);
    expect(kinds(again)).toEqual(['checkReadiness', 'publish:Ready', 'wait']);
  });

  it('shows Warning instead of Ready when its manifest ships a system namespace, which the install left alone', () => {
    const st = new ModuleState(moduleInput());
    const step = st.next();
    expect(step.kind).toBe('install');
    st.installedModule(mod(), { ...installResult('1.0.0'), leftAlone: ['Namespace kube-system'] });
    const t = untilWait(st);
    expect(kinds(t)).toEqual(['checkReadiness', 'publish:SystemNamespaceSkipped', 'wait']);
    const publish = t[1] as Extract<ModuleStep, { kind: 'publish' }>;
    expect(publish.report.status.state).toBe('Warning');
    expect(publish.report.status.message).toContain('the manifest ships Namespace kube-system');
    // Not Ready yet: what it is says more.
    st.poke();
    st.woke({ drift: false });
    const processing = untilWait(st, { readiness: [{ reason: 'ManagerNotAvailable', message: 'rolling out' }] });
    expect(kinds(processing)).toContain('publish:ManagerNotAvailable');
  });

  it('sleeps until something happens; a poke re-checks without installing or publishing the same report', () => {
    const st = installed();
    expect(st.awake()).toBe(false);
    st.poke();
    expect(st.awake()).toBe(true);
    st.woke({ drift: false });
    expect(kinds(untilWait(st))).toEqual(['checkReadiness', 'wait']);
  });

  it('asks its readiness check to reflect the Manifest version a poke told of (its pause label), also after continue-as-new', () => {
    const st = installed();
    st.poke({ seen: { Manifest: '77' } });
    st.woke({ drift: false });
    const t = untilWait(st);
    expect(t[0]).toMatchObject({ kind: 'checkReadiness', seen: { Manifest: '77' } });
    expect(st.carry().seen).toEqual({ Manifest: '77' });
  });

  it('keeps a poke that arrives while a step runs: the wait after it returns at once', () => {
    const st = new ModuleState(moduleInput());
    expect(st.next().kind).toBe('install');
    st.poke();
    st.installedModule(mod(), installResult('1.0.0'));
    untilWait(st);
    expect(st.awake()).toBe(true);
  });

  it('takes the readiness an install checked itself for the check that would come next: publish and wait, no check of its own', () => {
    const st = new ModuleState(moduleInput());
    expect(st.next().kind).toBe('install');
    st.installedModule(
      mod(),
      {
        ...installResult('1.0.0'),
        check: {
          reason: 'ManagerNotAvailable',
          message: 'manager Deployment x/greeter-manager: 0 of 1 replicas available',
        },
      },
      0,
    );
    const trace = untilWait(st);
    expect(kinds(trace)).toEqual(['publish:ManagerNotAvailable', 'wait']);
    expect(trace[0]).toMatchObject({ report: { status: { state: 'Processing', version: '1.0.0' } } });
  });

  it('keeps news of the manager that came while its first install ran over the older view the install read itself', () => {
    const st = new ModuleState(moduleInput());
    expect(st.next().kind).toBe('install');
    const key = 'apps/v1/Deployment/k1-system/greeter-manager';
    st.poke({ observed: [{ key, resourceVersion: '9', view: { kind: 'Deployment' } }] });
    st.installedModule(
      mod(),
      {
        ...installResult('1.0.0'),
        managerVersion: '5',
        check: {
          reason: 'ManagerNotAvailable',
          message: 'not yet',
          read: [{ key, resourceVersion: '6', view: { kind: 'Deployment' } }],
        },
      },
      0,
    );
    untilWait(st, { readiness: [] });
    st.woke({ drift: false });
    const next = st.next();
    expect(next).toMatchObject({ kind: 'checkReadiness', observed: { manager: { resourceVersion: '9' } } });
  });

  it("waits without a check of its own when its install's check read past the news that came while the install ran", () => {
    const st = new ModuleState(moduleInput());
    expect(st.next().kind).toBe('install');
    const key = 'apps/v1/Deployment/k1-system/greeter-manager';
    st.poke({ observed: [{ key, resourceVersion: '9', view: { kind: 'Deployment' } }] });
    const read = [{ key, resourceVersion: '10', view: { kind: 'Deployment' } }];
    st.installedModule(
      mod(),
      { ...installResult('1.0.0'), check: { reason: 'ManagerNotAvailable', message: 'not yet', read } },
      0,
    );
    expect(kinds(untilWait(st, { readiness: [] }))).toEqual(['publish:ManagerNotAvailable', 'wait']);
    expect(st.awake()).toBe(false);
    // News after the install wakes it as ever.
    st.poke({ observed: [{ key, resourceVersion: '11', view: { kind: 'Deployment' } }] });
    expect(st.awake()).toBe(true);
  });

  it('checks on its own after an install when news came that its check cannot stand for: a newer version, a pause label, a cluster that answers again', () => {
    const key = 'apps/v1/Deployment/k1-system/greeter-manager';
    const read = [{ key, resourceVersion: '10', view: { kind: 'Deployment' } }];
    const cr = 'greeter.example.io/v1alpha1/Greeter/k1-system/default';
    for (const news of [
      { observed: [{ key, resourceVersion: '11', view: { kind: 'Deployment' } }] },
      { observed: [{ key: cr, resourceVersion: '3', view: { kind: 'Greeter' } }] },
      { seen: { Manifest: '7' } },
      undefined,
    ]) {
      const st = new ModuleState(moduleInput());
      expect(st.next().kind).toBe('install');
      st.poke(news);
      st.installedModule(
        mod(),
        { ...installResult('1.0.0'), check: { reason: 'ManagerNotAvailable', message: 'not yet', read } },
        0,
      );
      untilWait(st, { readiness: [] });
      expect(st.awake(), JSON.stringify(news)).toBe(true);
    }
  });

  it('checks on its own after an install that brought no check (it failed, or was not asked)', () => {
    const st = new ModuleState(moduleInput());
    expect(st.next().kind).toBe('install');
    st.installedModule(mod(), installResult('1.0.0'), 0);
    expect(st.next().kind).toBe('checkReadiness');
  });

  it('re-applies on the drift timer', () => {
    const st = installed();
    st.woke({ drift: true });
    expect(kinds(untilWait(st))).toEqual(['install', 'wait']);
  });

  it('upgrades: says so, installs with the previous rendering to prune, then publishes the new version', () => {
    const st = installed();
    st.want({ uid: 'uid-1', module: mod('1.1.0') });
    expect(st.awake()).toBe(true);
    st.woke({ drift: false });
    const t = untilWait(st);
    expect(kinds(t)).toEqual(['publish:Upgrading', 'event:ModuleUpgrading', 'install', 'publish:Ready', 'wait']);
    expect((t[0] as Extract<ModuleStep, { kind: 'publish' }>).report.status).toMatchObject({
      version: '1.0.0',
      state: 'Processing',
      message: 'upgrading from 1.0.0 to 1.1.0',
    });
    expect(t[2]).toMatchObject({
      kind: 'install',
      module: { version: '1.1.0' },
      previous: { digest: 'sha256:rendered-1.0.0' },
    });
    expect((t[3] as Extract<ModuleStep, { kind: 'publish' }>).report.status.version).toBe('1.1.0');
  });

  it('answers the status query with the report it published last', () => {
    const st = new ModuleState(moduleInput());
    expect(st.current()).toBeUndefined();
    untilWait(st);
    expect(st.current()?.status).toMatchObject({ name: 'greeter', version: '1.0.0', state: 'Ready' });
    st.want({ uid: 'uid-1', module: mod('1.1.0') });
    st.woke({ drift: false });
    untilWait(st);
    st.poke();
    st.woke({ drift: false });
    untilWait(st, { readiness: [{ reason: 'ResourceError', message: 'the CR says Error' }] });
    expect(st.current()).toMatchObject({ reason: 'ResourceError', status: { state: 'Error', version: '1.1.0' } });
  });

  it('re-applies a new template generation of the same version', () => {
    const st = installed();
    st.want({
      uid: 'uid-1',
      module: mod('1.0.0', { template: { name: 'greeter-1.0.0', namespace: 'kcp', generation: 2 } }),
    });
    st.woke({ drift: false });
    const t = untilWait(st);
    expect(kinds(t)).toEqual(['install', 'publish:Ready', 'wait']);
    expect((t[1] as Extract<ModuleStep, { kind: 'publish' }>).report.status.template?.metadata?.generation).toBe(2);
  });

  it('refuses a downgrade and keeps the installed version', () => {
    const st = installed({ module: mod('1.1.0') });
    st.want({ uid: 'uid-1', module: mod('1.0.0') });
    st.woke({ drift: false });
    const t = untilWait(st);
    expect(kinds(t)).toEqual(['publish:DowngradeRefused', 'wait']);
    expect((t[0] as Extract<ModuleStep, { kind: 'publish' }>).report.status).toMatchObject({
      version: '1.1.0',
      state: 'Warning',
    });
  });

  it.each(['ManagerMissing', 'ResourceMissing'] as const)(
    'puts back what was deleted by hand (%s) at once, once',
    (reason) => {
      const st = installed();
      st.poke();
      st.woke({ drift: false });
      const missing = { reason, message: 'gone' };
      // Missing again right after the re-apply: not applied a second time in the cycle.
      expect(kinds(untilWait(st, { readiness: [missing, missing] }))).toEqual([
        'checkReadiness',
        'install',
        `publish:${reason}`,
        'wait',
      ]);
    },
  );

  it('claims no installed version while no install has succeeded', () => {
    const st = new ModuleState(moduleInput());
    const t = untilWait(st, { install: [{ reason: 'BlobNotFound', message: 'the registry does not have the layer' }] });
    const published = t.find((s): s is Extract<ModuleStep, { kind: 'publish' }> => s.kind === 'publish')!;
    expect(published.report.status).toMatchObject({
      name: 'greeter',
      state: 'Error',
      message: 'the registry does not have the layer',
    });
    expect(published.report.status).not.toHaveProperty('version');
    // The retry installs it: now it has a version.
    st.woke({ drift: false });
    untilWait(st);
    expect(st.current()?.status).toMatchObject({ version: '1.0.0', state: 'Ready' });
  });

  it('shows a module whose resolution failed, keeps what is installed, and comes back when it resolves again', () => {
    const st = installed();
    st.want({ uid: 'uid-1', failure: { reason: 'TemplateNotFound', message: 'no ModuleTemplate "greeter-1.0.0"' } });
    st.woke({ drift: false });
    const t = untilWait(st);
    expect(kinds(t)).toEqual(['publish:TemplateNotFound', 'wait']);
    expect((t[0] as Extract<ModuleStep, { kind: 'publish' }>).report.status).toMatchObject({
      version: '1.0.0',
      state: 'Error',
    });
    st.want({ uid: 'uid-1', module: mod() });
    st.woke({ drift: false });
    expect(kinds(untilWait(st))).toEqual(['checkReadiness', 'publish:Ready', 'wait']);
  });

  it('adopts the uid of a re-created Kyma and publishes under it', () => {
    const st = installed();
    st.want({ uid: 'uid-2', module: mod() });
    st.woke({ drift: false });
    const t = untilWait(st);
    expect(kinds(t)).toEqual(['checkReadiness', 'publish:Ready', 'wait']);
    expect(st.uid).toBe('uid-2');
  });
});

describe('ModuleState: failures and timeouts', () => {
  it('retries a failed install on a doubling backoff, capped by the drift interval, and stops retrying once it works', () => {
    const st = new ModuleState(moduleInput());
    const failure: Readiness = { reason: 'RegistryUnavailable', message: 'registry down' };
    const first = untilWait(st, { install: [failure] });
    expect(kinds(first)).toEqual(['install', 'publish:RegistryUnavailable', 'wait']);
    expect(last(first)).toMatchObject({ retryMs: 30_000 });
    const delays: (number | undefined)[] = [];
    for (let i = 0; i < 6; i++) {
      st.woke({ drift: false });
      const t = untilWait(st, { install: [failure] });
      delays.push((last(t) as Extract<ModuleStep, { kind: 'wait' }>).retryMs);
    }
    expect(delays).toEqual([60_000, 120_000, 240_000, 480_000, 600_000, 600_000]);
    st.woke({ drift: false });
    const ok = untilWait(st);
    expect(kinds(ok)).toEqual(['install', 'publish:Ready', 'wait']);
    expect(last(ok)).toEqual({ kind: 'wait', driftMs: SETTINGS.driftIntervalMs });
  });

  it('turns a manager unavailable past the timeout into Error with one DependencyTimeout Event, and recovers', () => {
    const st = installed();
    const unavailable: Readiness = {
      reason: 'ManagerNotAvailable',
      message: 'waiting for manager Deployment k1-system/greeter-manager to become available (0/1 available)',
    };
    st.poke();
    st.woke({ drift: false });
    const waiting = untilWait(st, { readiness: [unavailable], now: 1000 });
    // A closer look (its pods) after a minute, well before the timeout.
    expect(last(waiting)).toMatchObject({ deadlineMs: 60_000 });
    st.woke({ drift: false });
    const timedOut = untilWait(st, { readiness: [unavailable], now: 1000 + SETTINGS.managerAvailableTimeoutMs });
    expect(kinds(timedOut)).toEqual([
      'checkReadiness',
      'event:DependencyTimeout',
      'publish:ManagerNotAvailableTimeout',
      'wait',
    ]);
    // Still looked at on the backoff: as long again as it has taken, at most 5 minutes.
    expect(last(timedOut)).toMatchObject({ deadlineMs: 300_000 });
    st.poke();
    st.woke({ drift: false });
    expect(kinds(untilWait(st, { readiness: [unavailable], now: 2000 + SETTINGS.managerAvailableTimeoutMs }))).toEqual([
      'checkReadiness',
      'wait',
    ]);
    st.poke();
    st.woke({ drift: false });
    expect(kinds(untilWait(st))).toEqual(['checkReadiness', 'publish:Ready', 'wait']);
  });

  it('looks at a manager that does not roll out again on a backoff, reading its pods, and shows their trouble as Error before the timeout', () => {
    const st = new ModuleState(moduleInput());
    const rolling: Readiness = {
      reason: 'ManagerNotAvailable',
      message:
        'waiting for the rollout of manager Deployment k1-system/greeter-manager (1 of 1 replicas updated, 1 old replica still running)',
    };
    const first = untilWait(st, { readiness: [rolling], now: 0 });
    expect(kinds(first)).toEqual(['install', 'publish:ManagerNotAvailable', 'wait']);
    expect(last(first)).toMatchObject({ deadlineMs: 60_000 });
    st.woke({ drift: false, deadline: true });
    const failing: Readiness = {
      reason: 'ManagerPodsFailing',
      message:
        'manager Deployment k1-system/greeter-manager cannot roll out (…): pod p cannot be scheduled: 0/1 nodes are available',
    };
    const inspected = untilWait(st, { readiness: [failing], now: 60_000 });
    expect(inspected[0]).toMatchObject({ kind: 'checkReadiness', inspectPods: true });
    expect(kinds(inspected)).toEqual(['checkReadiness', 'publish:ManagerPodsFailing', 'wait']);
    // Looked at again as long after as it has taken so far; a signal in between does not read the pods.
    expect(last(inspected)).toMatchObject({ deadlineMs: 60_000 });
    // While its pods are in trouble, every check reads them again (no flip back to Processing);
    // once they are not, a signal's check does not.
    st.poke();
    st.woke({ drift: false });
    expect(untilWait(st, { readiness: [rolling], now: 70_000 })[0]).toMatchObject({ inspectPods: true });
    st.poke();
    st.woke({ drift: false });
    const poked = untilWait(st, { readiness: [rolling], now: 75_000 });
    expect(poked[0]).not.toHaveProperty('inspectPods');
    st.woke({ drift: false, deadline: true });
    const again = untilWait(st, { readiness: [failing], now: 120_000 });
    expect(last(again)).toMatchObject({ deadlineMs: 120_000 });
    // Past the timeout it stays Error with the pods' reason (not the generic timeout), looked at every 5 minutes at most.
    st.woke({ drift: false, deadline: true });
    const late = untilWait(st, { readiness: [failing], now: 3_600_000 });
    expect(kinds(late)).toEqual(['checkReadiness', 'wait']);
    expect(last(late)).toMatchObject({ deadlineMs: 300_000 });
    st.poke();
    st.woke({ drift: false });
    expect(kinds(untilWait(st, { now: 3_700_000 }))).toEqual(['checkReadiness', 'publish:Ready', 'wait']);
  });

  it("reads the manager afresh when it looks closer: the watch tells of a rollout's start and end, not each step", () => {
    const st = new ModuleState(moduleInput());
    expect(st.next().kind).toBe('install');
    st.installedModule(mod(), { ...installResult('1.0.0'), managerVersion: '5' });
    untilWait(st, { readiness: [{ reason: 'ManagerNotAvailable', message: 'waiting' }], now: 0 });
    st.poke({
      observed: [
        {
          key: 'apps/v1/Deployment/k1-system/greeter-manager',
          resourceVersion: '9',
          view: { kind: 'Deployment', metadata: {} },
        },
      ],
    });
    st.woke({ drift: false });
    expect(
      untilWait(st, { readiness: [{ reason: 'ManagerNotAvailable', message: 'waiting' }], now: 1000 })[0],
    ).toHaveProperty('observed.manager.resourceVersion', '9');
    st.woke({ drift: false, deadline: true });
    const closer = untilWait(st, {
      readiness: [{ reason: 'ManagerNotAvailable', message: 'waiting' }],
      now: 60_000,
    })[0];
    expect(closer).toMatchObject({ kind: 'checkReadiness', inspectPods: true });
    expect(closer).not.toHaveProperty('observed.manager');
  });

  it('re-applies a manager that is missing after its apply on the backoff, then turns Error once the timeout passed', () => {
    const st = new ModuleState(moduleInput());
    const missing: Readiness = {
      reason: 'ManagerMissing',
      message: 'manager Deployment k1-system/greeter-manager does not exist',
    };
    const first = untilWait(st, { readiness: [missing], now: 0 });
    expect(kinds(first)).toEqual(['install', 'publish:ManagerMissing', 'wait']);
    expect(last(first)).toMatchObject({ deadlineMs: 60_000 });
    st.woke({ drift: false, deadline: true });
    expect(kinds(untilWait(st, { readiness: [missing, missing], now: 60_000 }))).toEqual([
      'checkReadiness',
      'install',
      'wait',
    ]);
    st.woke({ drift: false, deadline: true });
    const timedOut = untilWait(st, { readiness: [missing], now: SETTINGS.managerAvailableTimeoutMs });
    expect(kinds(timedOut)).toEqual([
      'checkReadiness',
      'event:DependencyTimeout',
      'publish:ManagerNotAvailableTimeout',
      'wait',
    ]);
    expect(timedOut.find((s) => s.kind === 'publish')).toMatchObject({
      report: {
        status: {
          state: 'Error',
          message: 'manager Deployment k1-system/greeter-manager does not exist: still missing after 300s',
        },
      },
    });
  });

  it('re-applies a manager deleted by hand at once, however long it had been unavailable before', () => {
    const st = new ModuleState(moduleInput());
    const crashing: Readiness = {
      reason: 'ManagerPodsFailing',
      message: 'pod p container manager is CrashLoopBackOff',
    };
    untilWait(st, { readiness: [crashing], now: 0 });
    st.woke({ drift: false, deadline: true });
    untilWait(st, { readiness: [crashing], now: 2 * SETTINGS.managerAvailableTimeoutMs });
    st.poke();
    st.woke({ drift: false });
    const t = untilWait(st, {
      readiness: [{ reason: 'ManagerMissing', message: 'manager Deployment k1-system/greeter-manager does not exist' }],
      now: 2 * SETTINGS.managerAvailableTimeoutMs + 1000,
    });
    expect(kinds(t).slice(0, 2)).toEqual(['checkReadiness', 'install']);
  });

  it('records a CRD that never became Established as a DependencyTimeout Event too', () => {
    const st = new ModuleState(moduleInput());
    const t = untilWait(st, {
      install: [{ reason: 'CrdNotEstablished', message: 'CRD not established within 3s: x' }],
    });
    expect(kinds(t)).toEqual(['install', 'event:DependencyTimeout', 'publish:CrdNotEstablished', 'wait']);
  });

  it('looks again on the backoff when it cannot tell whether the Manifest is still paused', () => {
    const st = installed();
    st.poke();
    st.woke({ drift: false });
    untilWait(st, { readiness: [{ reason: 'Paused', message: 'paused' }] });
    st.poke();
    st.woke({ drift: false });
    expect(st.next().kind).toBe('checkPaused');
    st.pauseCheckFailed({ reason: 'Failed', message: 'API server timed out' });
    const t = untilWait(st);
    expect(last(t)).toEqual({ kind: 'wait', retryMs: SETTINGS.installRetryMs });
    st.woke({ drift: false });
    expect(kinds(untilWait(st, { paused: false }))).toEqual(['checkPaused', 'checkReadiness', 'publish:Ready', 'wait']);
  });

  it('stays paused across a continue-as-new', () => {
    const st = installed();
    st.poke();
    st.woke({ drift: false });
    untilWait(st, { readiness: [{ reason: 'Paused', message: 'paused' }] });
    const next = new ModuleState(moduleInput({ carried: st.carry() }));
    next.want({ uid: 'uid-1', module: mod('1.1.0') });
    expect(next.next()).toEqual({ kind: 'wait' });
  });

  it('waits without timers while the Manifest is paused, and looks again on a change', () => {
    const st = installed();
    st.poke();
    st.woke({ drift: false });
    const t = untilWait(st, { readiness: [{ reason: 'Paused', message: 'paused' }] });
    expect(kinds(t)).toEqual(['checkReadiness', 'wait']);
    expect(last(t)).toEqual({ kind: 'wait' });
    st.poke();
    st.woke({ drift: false });
    expect(kinds(untilWait(st, { paused: true }))).toEqual(['checkPaused', 'wait']);
    st.poke();
    st.woke({ drift: false });
    expect(kinds(untilWait(st, { paused: false }))).toEqual(['checkPaused', 'checkReadiness', 'wait']);
  });
});

/** A removal's steps up to the objects' deletion, for a module that owns its default CR. */
const TO_OBJECTS = [
  'findBlockers',
  'deleteDefaultCr',
  'publish:DeletingObjects',
  'event:DeletingObjects',
  'deleteObjects',
];

/** An installed module whose removal begins: it was taken out of the Kyma, and its wait ended. */
function removing(): ModuleState {
  const st = installed();
  st.remove();
  st.woke({ drift: false });
  return st;
}

describe('ModuleState: removal', () => {
  it('removes in order: default CR, objects, Manifest, then tells the Kyma', () => {
    const st = removing();
    const t = untilWait(st);
    expect(kinds(t)).toEqual([...TO_OBJECTS, 'deleteManifest', 'event:ModuleRemoved', 'finish']);
    expect(t[0]).toMatchObject({ exceptDefault: true, cr: { kind: 'Greeter' } });
  });

  it('waits while other CRs of the kind block it (Warning, as upstream), says so once, and goes on once they are gone', () => {
    const st = removing();
    const blocked = untilWait(st, { blockers: [{ count: 7, first: ['Greeter a/x', 'Greeter b/y'], sharedWith: 0 }] });
    expect(kinds(blocked)).toEqual(['findBlockers', 'publish:DeletionBlocked', 'event:DeletionBlocked', 'wait']);
    expect((blocked[1] as Extract<ModuleStep, { kind: 'publish' }>).report.status).toMatchObject({
      state: 'Warning',
      message:
        'deletion blocked by 7 Greeter resource(s): Greeter a/x, Greeter b/y and 5 more; delete them to continue',
    });
    st.poke();
    st.woke({ drift: false });
    expect(kinds(untilWait(st, { blockers: [{ count: 1, first: ['Greeter a/x'], sharedWith: 0 }] }))).toEqual([
      'findBlockers',
      'publish:DeletionBlocked',
      'wait',
    ]);
    st.poke();
    st.woke({ drift: false });
    expect(last(untilWait(st))).toEqual({ kind: 'finish' });
  });

  it('is not blocked by CRs when other installations of the module share the cluster (its CRD stays)', () => {
    const st = removing();
    expect(
      kinds(untilWait(st, { blockers: [{ count: 3, first: ['Greeter other/default'], sharedWith: 1 }] })),
    ).toContain('deleteDefaultCr');
  });

  it('waits until the default CR is really gone (its finalizers)', () => {
    const st = removing();
    const t = untilWait(st, { finalizers: [['example.io/cleanup']] });
    expect(kinds(t)).toEqual(['findBlockers', 'deleteDefaultCr', 'publish:WaitingForResource', 'wait']);
    st.poke();
    st.woke({ drift: false });
    expect(kinds(untilWait(st))).toEqual([
      'deleteDefaultCr',
      'publish:DeletingObjects',
      'event:DeletingObjects',
      'deleteObjects',
      'deleteManifest',
      'event:ModuleRemoved',
      'finish',
    ]);
  });

  it('waits while a CRD it deleted is still being deleted, says which, and looks again before it deletes the Manifest', () => {
    const st = removing();
    const crd = 'CustomResourceDefinition greeters.example.io';
    const t = untilWait(st, { objects: [{ deleted: 5, done: false, terminating: [crd] }] });
    expect(kinds(t)).toEqual([...TO_OBJECTS, 'publish:WaitingForResource', 'wait']);
    expect((t[5] as Extract<ModuleStep, { kind: 'publish' }>).report.status).toMatchObject({
      state: 'Deleting',
      message: `waiting for ${crd} to be deleted`,
    });
    expect(last(t)).toMatchObject({ kind: 'wait', retryMs: TERMINATING_RECHECK_MS });
    st.woke({ drift: false });
    // Still there: nothing new to say (no second Event, the same status), and it waits again.
    const again = untilWait(st, { objects: [{ deleted: 0, done: false, terminating: [crd] }] });
    expect(kinds(again)).toEqual(['deleteObjects', 'wait']);
    st.woke({ drift: false });
    expect(kinds(untilWait(st))).toEqual(['deleteObjects', 'deleteManifest', 'event:ModuleRemoved', 'finish']);
  });

  it('under Ignore, never deletes the default CR, and every CR blocks', () => {
    const st = installed({ module: mod('1.0.0', { customResourcePolicy: 'Ignore' }) });
    st.remove();
    st.woke({ drift: false });
    const t = untilWait(st);
    expect(t[0]).toMatchObject({ kind: 'findBlockers', exceptDefault: false });
    expect(kinds(t)).not.toContain('deleteDefaultCr');
  });

  it('stops a blocked removal when the module is wanted again, and converges on the new version without touching the default CR', () => {
    const st = removing();
    untilWait(st, { blockers: [{ count: 1, first: ['Greeter a/x'], sharedWith: 0 }] });
    st.want({ uid: 'uid-1', module: mod('1.1.0', { channel: 'fast' }) });
    expect(st.awake()).toBe(true);
    st.woke({ drift: false });
    const t = untilWait(st);
    expect(st.mode).toBe('run');
    expect(kinds(t)).toEqual(['publish:Upgrading', 'event:ModuleUpgrading', 'install', 'publish:Ready', 'wait']);
    expect(kinds(t)).not.toContain('deleteDefaultCr');
  });

  it('shows a failed removal step as Error and starts the removal over after the next change', () => {
    const st = removing();
    const t = untilWait(st, {
      fail: { kind: 'deleteObjects', failure: { reason: 'TargetClusterUnreachable', message: 'connection refused' } },
    });
    expect(kinds(t).slice(-2)).toEqual(['publish:TargetClusterUnreachable', 'wait']);
    expect((t[t.length - 2] as Extract<ModuleStep, { kind: 'publish' }>).report.status).toMatchObject({
      state: 'Error',
      message: 'removal failed, will retry: connection refused',
    });
    st.poke();
    st.woke({ drift: false });
    expect(kinds(untilWait(st))[0]).toBe('findBlockers');
  });

  it('drops the deletions it had planned when the module is wanted again mid-removal, and applies it again', () => {
    const st = removing();
    expect(st.next().kind).toBe('findBlockers');
    st.blockers(NO_BLOCKERS);
    expect(st.next().kind).toBe('deleteDefaultCr');
    st.defaultCrDeleted(null);
    expect(st.next()).toMatchObject({ kind: 'publish', readiness: { reason: 'DeletingObjects' } });
    st.want({ uid: 'uid-1', module: mod() });
    const t = untilWait(st);
    expect(kinds(t)).toEqual(['install', 'publish:Ready', 'wait']);
  });

  it('waits for CRs when it finds itself the last installation only while deleting (a concurrent removal)', () => {
    const st = removing();
    const t = untilWait(st, {
      blockers: [
        { count: 2, first: ['Greeter a/x', 'Greeter b/y'], sharedWith: 1 },
        { count: 1, first: ['Greeter a/x'], sharedWith: 0 },
      ],
      objects: [{ deleted: 3, done: false }],
    });
    expect(kinds(t)).toEqual([
      ...TO_OBJECTS,
      'findBlockers',
      'publish:DeletionBlocked',
      'event:DeletionBlocked',
      'wait',
    ]);
    expect(t[1]).toMatchObject({ kind: 'deleteDefaultCr', keepClusterScoped: true });
  });

  it('removes a module that never got installed by deleting its Manifest only', () => {
    const st = new ModuleState(moduleInput());
    st.remove();
    expect(kinds(untilWait(st))).toEqual(['deleteManifest', 'event:ModuleRemoved', 'finish']);
  });

  it('goes on with a removal after a continue-as-new', () => {
    const before = installed();
    before.remove();
    const st = new ModuleState(moduleInput({ carried: before.carry() }));
    expect(st.next().kind).toBe('findBlockers');
  });

  it('removes what an install that failed part-way applied, though nothing was ever installed, also after a continue-as-new', () => {
    const st = new ModuleState(moduleInput());
    expect(st.next().kind).toBe('install');
    // The Kyma is deleted while the install runs; then it fails (its CRD never became Established).
    st.remove();
    const attempt = { version: '1.0.0', templateGeneration: 1, ...installResult('1.0.0') };
    st.installFailed({ reason: 'CrdNotEstablished', message: 'CRD not established within 20s: x' }, attempt);
    const again = new ModuleState(moduleInput({ carried: st.carry() }));
    const t = untilWait(again);
    expect(kinds(t)).toEqual([...TO_OBJECTS, 'deleteManifest', 'event:ModuleRemoved', 'finish']);
    expect(t.find((x) => x.kind === 'deleteObjects')).toEqual({
      kind: 'deleteObjects',
      rendered: attempt.rendered,
      cr: attempt.fetched.defaultCr,
    });
  });

  it("removes, with the installed version's objects, what a failed upgrade applied of the new one", () => {
    const st = installed();
    st.want({ uid: 'uid-1', module: mod('1.1.0') });
    st.woke({ drift: false });
    const upgrade = { version: '1.1.0', templateGeneration: 1, ...installResult('1.1.0') };
    while (st.next().kind !== 'install');
    st.installFailed({ reason: 'KindNotServed', message: 'no such kind' }, upgrade);
    untilWait(st);
    st.remove();
    st.woke({ drift: false });
    const step = untilWait(st).find((x) => x.kind === 'deleteObjects');
    expect(step).toMatchObject({ rendered: installResult('1.0.0').rendered, also: upgrade.rendered });
    // A successful install forgets the attempt.
    const ok = installed();
    ok.installFailed({ reason: 'Failed', message: 'x' }, upgrade);
    ok.installedModule(mod(), installResult('1.0.0'));
    expect(ok.carry().attempted).toBeUndefined();
  });

  it('says which objects it left in place because they were there before the module', () => {
    const st = removing();
    for (let step = st.next(); step.kind !== 'deleteObjects'; step = st.next()) {
      if (step.kind === 'findBlockers') st.blockers(NO_BLOCKERS);
      if (step.kind === 'deleteDefaultCr') st.defaultCrDeleted(null);
    }
    st.objectsDeleted({ deleted: 4, done: true, left: ['Namespace users'] });
    expect(st.next()).toEqual({
      kind: 'event',
      event: {
        type: 'Normal',
        reason: 'ObjectsLeftInPlace',
        message:
          'module greeter: Namespace users was there before the module, so it is left in place with its own labels and annotations',
      },
    });
    expect(st.next().kind).toBe('deleteManifest');
  });
});

describe('ModuleState: release', () => {
  it('releases the objects and the default CR, deletes the Manifest and ends (managed: false, or the Kyma is gone)', () => {
    const st = installed();
    st.releaseObjects();
    st.woke({ drift: false });
    const t = untilWait(st);
    expect(kinds(t)).toEqual(['releaseObjects', 'deleteManifest', 'finish']);
    expect(t[0]).toMatchObject({ cr: { kind: 'Greeter', name: 'default' } });
  });

  it('ends without releasing when the cluster cannot be reached any more (its Secret is gone)', () => {
    const st = installed();
    st.releaseObjects();
    st.woke({ drift: false });
    expect(st.next().kind).toBe('releaseObjects');
    st.cleanupFailed({ reason: 'InvalidKubeconfig', message: 'the kubeconfig Secret is gone' });
    expect(kinds(untilWait(st))).toEqual(['deleteManifest', 'finish']);
  });

  it('is not undone by a desired module: the Kyma starts a new workflow once this one is gone', () => {
    const st = installed();
    st.releaseObjects();
    st.want({ uid: 'uid-1', module: mod() });
    expect(st.mode).toBe('release');
  });
});

describe('ModuleState: what the bridge saw of the manager and the CR', () => {
  const MANAGER = 'apps/v1/Deployment/k1-system/greeter-manager';
  const CR = 'greeter.example.io/v1alpha1/Greeter/k1-system/default';
  const seen = (key: string, resourceVersion: string) => ({
    observed: [{ key, resourceVersion, view: { kind: 'x', metadata: {} } }],
  });

  /** Installed, its install having applied the manager at resourceVersion `applied`, and waiting. */
  function appliedAt(applied: string): ModuleState {
    const st = new ModuleState(moduleInput());
    const step = st.next();
    if (step.kind !== 'install') throw new Error(step.kind);
    st.installedModule(step.module, { ...installResult('1.0.0'), managerVersion: applied });
    untilWait(st);
    return st;
  }

  const check = (t: ModuleStep[]) =>
    t.find((s): s is Extract<ModuleStep, { kind: 'checkReadiness' }> => s.kind === 'checkReadiness');

  it('hands the check the manager and CR as the watch saw them after the install applied the manager', () => {
    const st = appliedAt('100');
    st.poke(seen(MANAGER, '101'));
    st.poke(seen(CR, '50'));
    // News of the Manifest alone keeps what was seen of the objects.
    st.poke({ seen: { Manifest: '5' } });
    st.woke({ drift: false });
    const observed = check(untilWait(st))?.observed;
    expect(observed?.manager?.resourceVersion).toBe('101');
    expect(observed?.cr?.resourceVersion).toBe('50');
  });

  it('takes the views of several objects from one signal', () => {
    const st = appliedAt('100');
    st.poke({ observed: [...seen(MANAGER, '102').observed, ...seen(CR, '51').observed] });
    st.woke({ drift: false });
    const observed = check(untilWait(st))?.observed;
    expect([observed?.manager?.resourceVersion, observed?.cr?.resourceVersion]).toEqual(['102', '51']);
  });

  it('does not trust a view of the manager from before the install applied it, nor an older one than it holds', () => {
    const st = appliedAt('100');
    st.poke(seen(MANAGER, '99'));
    st.poke(seen(CR, '50'));
    st.poke(seen(CR, '49'));
    st.woke({ drift: false });
    const observed = check(untilWait(st))?.observed;
    expect(observed?.manager).toBeUndefined();
    expect(observed?.cr?.resourceVersion).toBe('50');
  });

  it('reads everything again after a poke without news (the cluster stopped or started answering) or on the drift timer', () => {
    const st = appliedAt('100');
    st.poke(seen(MANAGER, '101'));
    st.poke();
    st.woke({ drift: false });
    expect(check(untilWait(st))?.observed).toBeUndefined();
    st.poke(seen(CR, '50'));
    st.woke({ drift: true });
    expect(check(untilWait(st))?.observed).toBeUndefined();
  });

  it('uses what a check read itself until the watch tells of something newer, so a poke for the CR alone does not read the manager again', () => {
    const st = appliedAt('100');
    st.poke(seen(CR, '50'));
    st.woke({ drift: false });
    // The watch has not told of the manager since the install: this check reads it.
    expect(st.next()).toMatchObject({ kind: 'checkReadiness', observed: { cr: { resourceVersion: '50' } } });
    st.observed({ reason: 'ManagerNotAvailable', message: 'not yet', read: seen(MANAGER, '103').observed }, 0);
    untilWait(st);
    st.poke(seen(CR, '51'));
    st.woke({ drift: false });
    expect(check(untilWait(st))?.observed).toMatchObject({
      manager: { resourceVersion: '103' },
      cr: { resourceVersion: '51' },
    });
    st.poke(seen(MANAGER, '104'));
    st.woke({ drift: false });
    expect(check(untilWait(st))?.observed?.manager?.resourceVersion).toBe('104');
  });

  it('reads the target cluster for a check only for what the watch has not told of, or to look at the pods', () => {
    const st = appliedAt('100');
    st.poke(seen(CR, '50'));
    st.woke({ drift: false });
    // The manager is not seen since the install applied it: read.
    const first = st.next() as CheckStep;
    expect(checkReadsTarget(first)).toBe(true);
    st.observed({ reason: 'ManagerNotAvailable', message: 'not yet', read: seen(MANAGER, '103').observed }, 0);
    untilWait(st);
    st.poke(seen(CR, '51'));
    st.woke({ drift: false });
    // Manager and CR as seen: decided from the views.
    const second = check(untilWait(st))!;
    expect(checkReadsTarget(second)).toBe(false);
    expect(checkReadsTarget({ ...second, inspectPods: true })).toBe(true);
  });

  it('takes the view of a cluster-scoped default CR, which the watch tells of without the namespace its reference carries', () => {
    const st = appliedAt('100');
    st.poke(seen('greeter.example.io/v1alpha1/Greeter//default', '70'));
    st.woke({ drift: false });
    expect(check(untilWait(st))?.observed?.cr?.resourceVersion).toBe('70');
  });

  it('keeps no view of objects that are not its manager or default CR', () => {
    const st = appliedAt('100');
    st.poke(seen('greeter.example.io/v1alpha1/Greeter/other/user-cr', '60'));
    st.woke({ drift: false });
    expect(check(untilWait(st))?.observed).toBeUndefined();
    expect(st.carry().views).toBeUndefined();
  });
});
