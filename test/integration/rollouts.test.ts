// Staged rollouts on the real parts, with 50 Kymas on one channel: a promotion reaches exactly
// the Kymas that follow the module on that channel, wave by wave (asserted by the order of the
// rollout's own history, not by wall time); a version that fails beyond the budget halts the
// rollout and holds the Kymas it has not reached; resume finishes it; abort leaves them. With a
// small history threshold, a rollout continues as new on its way and goes on where it was.
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import type { WorkflowHandle } from '@temporalio/client';
import { LABELS } from '../../src/api/shared';
import { SA } from '../../src/api/search-attributes';
import {
  abortRollout,
  pauseRollout,
  promoted,
  resumeRollout,
  ROLLOUT_WORKFLOW,
  rolloutPlanQuery,
  rolloutProgress,
  rolloutStart,
  rolloutWaves,
  rolloutWorkflowId,
  type RolloutPlanView,
  type RolloutProgress,
  type RolloutWorkflowInput,
} from '../../src/contract/rollout';
import { eventually, getKyma, kymaObject, kymaWorkflowId, useKlm, type Klm } from '../support/klm';
import { testModule, type TestModule } from '../support/modules';
import { stackInfo, uniqueName } from '../support/stack';

const FLEET = 50;
/** An object the API server refuses (a name that is not a DNS label): the version fails to apply. */
const BROKEN = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: Not_A_Valid_Name\n';
/** One object more for the version only planned (1.9.0). */
const PLAN_NOTES = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: plan-notes\ndata: {note: planned}\n';

interface HistoryEvent {
  eventType?: unknown;
  workflowExecutionSignaledEventAttributes?: {
    signalName?: string | null;
    input?: { payloads?: { data?: Uint8Array | null }[] | null } | null;
  } | null;
  signalExternalWorkflowExecutionInitiatedEventAttributes?: {
    workflowExecution?: { workflowId?: string | null } | null;
  } | null;
  markerRecordedEventAttributes?: {
    details?: Record<string, { payloads?: { data?: Uint8Array | null }[] | null }> | null;
  } | null;
  timerFiredEventAttributes?: unknown;
}

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** Runs `klm` as users do (its task queue and default namespace those of the test's worker and bridge); resolves with its exit code and output. */
async function klmCli(args: string[], taskQueue?: string): Promise<{ code: number; stdout: string; stderr: string }> {
  const env = {
    ...process.env,
    TEMPORAL_ADDRESS: stackInfo().temporalAddress,
    TEMPORAL_NAMESPACE: stackInfo().temporalNamespace,
    KLM_DEFAULT_NAMESPACE: '{kyma}-system',
    ...(taskQueue ? { KLM_TASK_QUEUE: taskQueue } : {}),
  };
  return await new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', 'src/cli/klm.ts', ...args],
      { cwd: ROOT, env },
      (err, stdout, stderr) => {
        resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
      },
    );
  });
}

/** Why an update was refused: its validator's message (the client wraps it as the failure's cause). */
async function refused(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (err) {
    const e = err as Error & { cause?: Error };
    return e.cause?.message ?? e.message;
  }
  throw new Error('expected the update to be refused, but it was accepted');
}

async function historyOf(klm: Klm, workflowId: string): Promise<HistoryEvent[]> {
  return (await klm.client.workflow.getHandle(workflowId).fetchHistory()).events ?? [];
}

function payload(e: HistoryEvent): unknown {
  const data = e.workflowExecutionSignaledEventAttributes?.input?.payloads?.[0]?.data;
  return data ? JSON.parse(Buffer.from(data).toString('utf8')) : undefined;
}

/** Local activity markers of this activity type. */
function isActivityMarker(e: HistoryEvent, type: string): boolean {
  const details = e.markerRecordedEventAttributes?.details;
  if (!details) return false;
  return Object.values(details).some((d) =>
    (d.payloads ?? []).some((p) => p.data && Buffer.from(p.data).toString('utf8').includes(`"${type}"`)),
  );
}

describe('staged rollouts', () => {
  const klm = useKlm({
    rolloutPolicy: {
      default: 'waves: []\nsoak: 0s',
      regular: 'waves: [5, 15]\nsoak: 3s\nmaxConcurrent: 10\nfailureBudget: 2\nwaveTimeout: 5m',
      steady: 'waves: [2, 2]\nsoak: 2s\nmaxConcurrent: 2\nfailureBudget: 0\nwaveTimeout: 5m',
    },
  });
  let mod: TestModule;
  const fleet = Array.from({ length: FLEET }, (_, i) => uniqueName(`r${String(i).padStart(2, '0')}`));
  /** Five Kymas go first: they carry a lower rollout priority. */
  const canaries = fleet.slice(FLEET - 5);
  const [pinned, onFast, without] = [uniqueName('pinned'), uniqueName('fast'), uniqueName('without')];
  const rollout = () =>
    klm().client.workflow.getHandle(
      rolloutWorkflowId({ namespace: klm().namespace, module: mod.name, channel: 'regular' }),
    );

  /** Inline descriptors: a version published again (fixed) changes its ModuleTemplate, which pokes its Kymas. */
  const publish = async (version: string, broken = false) =>
    await mod.publish(version, broken ? BROKEN : undefined, undefined, { descriptor: 'inline' });
  const versionOf = async (kyma: string, module = mod.name) =>
    (await getKyma(klm(), kyma))?.status?.modules?.find((m) => m.name === module);
  const progress = async (h: WorkflowHandle = rollout()) => await h.query(rolloutProgress);
  const phase = async (want: RolloutProgress['phase'], version: string) =>
    await eventually(
      `the rollout of ${version} to be ${want}`,
      async () => {
        const p = await progress().catch(() => undefined);
        return p?.phase === want && p.version === version ? p : undefined;
      },
      240_000,
    );
  const allAt = async (kymas: string[], version: string, module = mod.name) =>
    await eventually(
      `${kymas.length} Kymas at ${version}, Ready`,
      async () => {
        const states = await Promise.all(kymas.map(async (k) => await versionOf(k, module)));
        return states.every((m) => m?.version === version && m.state === 'Ready');
      },
      240_000,
    );

  beforeAll(async () => {
    mod = await testModule(klm());
    for (const v of ['1.0.0', '1.1.0']) await publish(v);
    await publish('1.2.0', true);
    await mod.channels({ regular: '1.0.0', fast: '1.0.0' });
    const ns = klm().namespace;
    for (const k of fleet) {
      const obj = kymaObject(ns, k, { channel: 'regular', modules: [{ name: mod.name }] });
      if (canaries.includes(k)) obj.metadata.labels = { [LABELS.rolloutPriority]: '1' };
      await klm().kube.create(obj);
    }
    await klm().kube.create(
      kymaObject(ns, pinned, { channel: 'regular', modules: [{ name: mod.name, version: '1.0.0' }] }),
    );
    await klm().kube.create(kymaObject(ns, onFast, { channel: 'fast', modules: [{ name: mod.name }] }));
    await klm().kube.create(kymaObject(ns, without, { channel: 'regular', modules: [{ name: 'counter' }] }));
    await allAt([...fleet, pinned, onFast], '1.0.0');
  }, 600_000);

  it('moves exactly the Kymas on the channel, in waves, each with one admission and one resolution of that module alone', async () => {
    const ns = klm().namespace;
    const bystanders = [pinned, onFast, without];
    const lengths = Object.fromEntries(
      await Promise.all(
        [...fleet, ...bystanders].map(
          async (k) => [k, (await historyOf(klm(), kymaWorkflowId(ns, k))).length] as const,
        ),
      ),
    );

    await mod.channels({ regular: '1.1.0', fast: '1.0.0' });
    const done = await phase('Completed', '1.1.0');
    await allAt(fleet, '1.1.0');

    // The plan: canaries first (priority), then by name; waves of 5, 15 and the rest.
    const waves = await rollout().query(rolloutWaves);
    expect(waves.map((w) => w.length)).toEqual([5, 15, 30]);
    expect([...waves[0]!].sort()).toEqual([...canaries].sort());
    expect(done.waves.map((w) => [w.done, w.failed])).toEqual([
      [5, 0],
      [15, 0],
      [30, 0],
    ]);

    // Order, from the rollout's own history: every admission of a wave after every Ready of the
    // wave before it and a soak timer after that.
    const history = await historyOf(klm(), rollout().workflowId);
    const waveOf = new Map(waves.flatMap((w, i) => w.map((k) => [kymaWorkflowId(ns, k), i] as const)));
    const kymaWave = new Map(waves.flatMap((w, i) => w.map((k) => [k, i] as const)));
    const lastReady = [-1, -1, -1];
    const firstAdmission = [Infinity, Infinity, Infinity];
    history.forEach((e, at) => {
      const target = e.signalExternalWorkflowExecutionInitiatedEventAttributes?.workflowExecution?.workflowId;
      if (target) firstAdmission[waveOf.get(target)!] = Math.min(firstAdmission[waveOf.get(target)!]!, at);
      if (e.workflowExecutionSignaledEventAttributes?.signalName === 'rolloutReport') {
        const r = payload(e) as { kyma: string; state: string; version: string };
        if (r.version === '1.1.0' && r.state === 'Ready') lastReady[kymaWave.get(r.kyma)!] = at;
      }
    });
    for (const w of [1, 2]) {
      expect(firstAdmission[w], `wave ${w + 1} admitted after wave ${w}'s last Ready`).toBeGreaterThan(
        lastReady[w - 1]!,
      );
      const soak = history.slice(lastReady[w - 1], firstAdmission[w]).some((e) => e.timerFiredEventAttributes);
      expect(soak, `a soak timer fired between wave ${w} and wave ${w + 1}`).toBe(true);
    }

    // Each Kyma of the channel: one admission, no templatesChanged, one resolution; the others nothing.
    for (const k of [...fleet, ...bystanders]) {
      const since = (await historyOf(klm(), kymaWorkflowId(ns, k))).slice(lengths[k]);
      const signals = since
        .map((e) => e.workflowExecutionSignaledEventAttributes?.signalName)
        .filter((s) => s === 'admitModule' || s === 'templatesChanged');
      const resolutions = since.filter((e) => isActivityMarker(e, 'resolveModules')).length;
      if (bystanders.includes(k)) expect({ k, signals, resolutions }).toEqual({ k, signals: [], resolutions: 0 });
      else expect({ k, signals, resolutions }).toEqual({ k, signals: ['admitModule'], resolutions: 1 });
    }
    expect(await versionOf(pinned)).toMatchObject({ version: '1.0.0', state: 'Ready' });
    expect(await versionOf(onFast)).toMatchObject({ version: '1.0.0', state: 'Ready' });
  }, 600_000);

  it('shows the plan of a promotion before it is made, object by object, and applies nothing', async () => {
    const plan = async (version: string, output: string[] = ['-o', 'json']) =>
      await klmCli(
        ['rollout', 'plan', mod.name, '--version', version, '--namespace', klm().namespace, ...output],
        klm().taskQueue,
      );
    const json = await plan('1.2.0');
    expect(json.code, json.stderr).toBe(0);
    const view = JSON.parse(json.stdout) as RolloutPlanView;
    expect({ from: view.from, sizes: view.waves.map((w) => w.length), soakMs: view.policy.soakMs }).toEqual({
      from: '1.1.0',
      sizes: [5, 15, 30],
      soakMs: 3000,
    });
    expect([...view.waves[0]!].sort()).toEqual([...canaries].sort());
    // Per Kyma (each has its own default namespace here): 1.2.0 adds the ConfigMap, nothing else.
    expect(view.diff?.groups.flatMap((g) => g.kymas).sort()).toEqual([...fleet].sort());
    for (const g of view.diff!.groups)
      expect(g).toEqual({
        from: '1.1.0',
        kymas: [g.kymas[0]],
        added: [`ConfigMap ${g.kymas[0]}-system/Not_A_Valid_Name`],
        changed: [],
        removed: [],
      });

    // 1.9.0 (never promoted): one ConfigMap more, the manager Deployment changed, the ClusterRoleBinding gone.
    await mod.publish(
      '1.9.0',
      PLAN_NOTES,
      (m) =>
        m
          .replace('replicas: 1', 'replicas: 2')
          .split(/^---$/m)
          .filter((d) => !d.includes('kind: ClusterRoleBinding'))
          .join('---'),
      { descriptor: 'inline' },
    );
    const next = JSON.parse((await plan('1.9.0')).stdout) as RolloutPlanView;
    expect(next.diff?.groups.flatMap((g) => g.kymas).sort()).toEqual([...fleet].sort());
    for (const g of next.diff!.groups) {
      expect(g).toEqual({
        from: '1.1.0',
        kymas: [g.kymas[0]],
        added: [`ConfigMap ${g.kymas[0]}-system/plan-notes`],
        changed: [`Deployment.apps ${g.kymas[0]}-system/${mod.name}-manager`],
        removed: [`ClusterRoleBinding.rbac.authorization.k8s.io ${mod.name}-manager`],
      });
    }
    const table = await plan('1.9.0', []);
    expect(table.stdout).toMatch(
      /→ 1\.9\.0 \(from 1\.1\.0\): 50 Kymas in 3 waves, soak 3 s, at most 10 at once, failure budget 2\nwave 1 \(5\): /,
    );
    expect(table.stdout).toContain(
      `what 1.9.0 changes, object by object:\n1 Kyma on 1.1.0 (${next.diff!.groups[0]!.kymas[0]}): 1 added, 1 changed, 1 removed\n  + ConfigMap`,
    );
    const missing = await klmCli(['rollout', 'plan', mod.name, '--namespace', klm().namespace], klm().taskQueue);
    // A command line without what it needs is a usage error (exit 1, as the Kyma CLI's), said before any help.
    expect({ code: missing.code, said: missing.stderr.split('\n')[0] }).toEqual({
      code: 1,
      said: "error: required option '--version <version>' not specified",
    });
    // Nothing moved: the rollout still stands at 1.1.0, every Kyma too.
    expect((await progress()).version).toBe('1.1.0');
    for (const k of fleet) expect((await versionOf(k))?.version, k).toBe('1.1.0');
  }, 120_000);

  it('halts when a wave fails beyond the budget, holds the Kymas it has not reached, and resume finishes it', async () => {
    await mod.channels({ regular: '1.2.0', fast: '1.0.0' });
    const halted = await phase('Halted', '1.2.0');
    expect(halted.message).toMatch(/failed, beyond the failure budget \(2\)/);
    // The rollout's own plan, by query: what 1.2.0 changes for each Kyma it planned.
    const planned = await rollout().query(rolloutPlanQuery);
    expect(planned?.diff?.groups.flatMap((g) => g.kymas).sort()).toEqual([...fleet].sort());
    for (const g of planned!.diff!.groups)
      expect(g).toMatchObject({
        from: '1.1.0',
        added: [`ConfigMap ${g.kymas[0]}-system/Not_A_Valid_Name`],
        changed: [],
        removed: [],
      });
    expect(halted.failed.length).toBeGreaterThan(2);
    const waves = await rollout().query(rolloutWaves);
    const unreached = [...waves[1]!, ...waves[2]!];
    // Not reached, not even told: still at 1.1.0.
    for (const k of unreached) expect(await versionOf(k), k).toMatchObject({ version: '1.1.0', state: 'Ready' });

    // The validators refuse what makes no sense, without touching the rollout.
    expect(await refused(rollout().executeUpdate(resumeRollout, { args: [{ reason: '' }] }))).toMatch(
      /non-empty reason/,
    );
    expect(await refused(rollout().executeUpdate(pauseRollout, { args: [{ reason: 'look first' }] }))).toMatch(
      /is Halted: only a rollout that is rolling/,
    );
    expect(await refused(rollout().executeUpdate(abortRollout, { args: [undefined as never] }))).toMatch(
      /non-empty reason/,
    );
    expect((await progress()).phase).toBe('Halted');

    // The author fixes 1.2.0 in place, which pokes every Kyma on the channel: the admitted ones
    // recover; the others resolve 1.2.0, stay held at 1.1.0, and say why.
    await publish('1.2.0');
    await allAt(waves[0]!, '1.2.0');
    await eventually('the unreached Kymas to say they wait', async () => {
      const ms = await Promise.all(unreached.map(async (k) => await versionOf(k)));
      return ms.every(
        (m) =>
          m?.version === '1.1.0' &&
          m.state === 'Ready' &&
          m.message?.includes('version 1.2.0 of channel regular waits for its rollout'),
      );
    });
    // Operators steer from the command line: a refusal is one line and a non-zero exit.
    const cli = ['--namespace', klm().namespace, '--channel', 'regular'];
    const status = await klmCli(['rollout', 'status', mod.name, ...cli, '-o', 'json']);
    expect(status.code, status.stderr).toBe(0);
    expect(JSON.parse(status.stdout)).toMatchObject({ phase: 'Halted', version: '1.2.0', from: '1.1.0' });
    const noReason = await klmCli(['rollout', 'resume', mod.name, ...cli]);
    expect({ code: noReason.code, said: noReason.stderr.split('\n')[0] }).toEqual({
      code: 1,
      said: "error: required option '--reason <why>' not specified",
    });
    const resumed = await klmCli(['rollout', 'resume', mod.name, ...cli, '--reason', 'fixed the manifest']);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stdout).toMatch(
      /^.* on regular: 1\.2\.0 \(from 1\.1\.0\) {2}Rolling\nresumed: fixed the manifest\n\nWAVE {2}KYMAS {2}DONE {2}FAILED/,
    );
    await phase('Completed', '1.2.0');
    await allAt(fleet, '1.2.0');
    expect((await progress()).actions).toEqual([
      expect.objectContaining({ action: 'resume', reason: 'fixed the manifest' }),
    ]);
  }, 600_000);

  it('abort leaves the Kymas it has not reached at their version, also when their resolution runs again', async () => {
    await publish('1.3.0', true);
    await mod.channels({ regular: '1.3.0', fast: '1.0.0' });
    await phase('Halted', '1.3.0');
    const aborted = await rollout().executeUpdate(abortRollout, { args: [{ reason: 'bad release' }] });
    expect(aborted.phase).toBe('Aborted');
    const waves = await rollout().query(rolloutWaves);
    // A fix of 1.3.0 pokes every Kyma on the channel: the admitted ones recover, the rest
    // resolve 1.3.0 and stay at 1.2.0, saying why (they heard of the abort).
    await publish('1.3.0');
    await allAt(waves[0]!, '1.3.0');
    const unreached = [...waves[1]!, ...waves[2]!];
    await eventually('the unreached Kymas to stay at 1.2.0 and say the rollout was aborted', async () => {
      const ms = await Promise.all(unreached.map(async (k) => await versionOf(k)));
      return ms.every(
        (m) =>
          m?.version === '1.2.0' &&
          m.state === 'Ready' &&
          m.message?.endsWith(
            'the rollout of 1.3.0 on channel regular was aborted: bad release; it stays at 1.2.0 until the next promotion',
          ),
      );
    });
    expect((await progress()).phase).toBe('Aborted');
    expect(await refused(rollout().executeUpdate(resumeRollout, { args: [{ reason: 'try again' }] }))).toMatch(
      /is Aborted/,
    );
    const again = await klmCli([
      'rollout',
      'resume',
      mod.name,
      '--namespace',
      klm().namespace,
      '--reason',
      'try again',
    ]);
    expect({ code: again.code, stderr: again.stderr.trim() }).toEqual({
      code: 1,
      stderr:
        'klm: resume refused: the rollout of 1.3.0 is Aborted: only a paused, halted or waiting rollout can be resumed',
    });
  }, 600_000);

  it(
    'continues as new on its way past a small history threshold and goes on where it was: every ' +
      'Kyma moves once; plan, pause, resume, halt and abort answer across runs',
    async () => {
      const ns = klm().namespace;
      const steady = await testModule(klm());
      const publishSteady = async (version: string, broken = false) =>
        await steady.publish(version, broken ? BROKEN : undefined, undefined, { descriptor: 'inline' });
      for (const v of ['1.0.0', '1.1.0']) await publishSteady(v);
      await publishSteady('1.2.0', true);
      await steady.channels({ steady: '1.0.0' });
      const kymas = Array.from({ length: 6 }, (_, i) => uniqueName(`s${i}`));
      for (const k of kymas)
        await klm().kube.create(kymaObject(ns, k, { channel: 'steady', modules: [{ name: steady.name }] }));
      await allAt(kymas, '1.0.0', steady.name);

      // The channel's rollout, started as the bridge starts it, but continuing as new past 60 events.
      // The bridge starts one itself when it sees the release meta only after the Kymas on its
      // channel (a promotion to 1.0.0, which they run already): this one takes its place.
      const channel = { namespace: ns, module: steady.name, channel: 'steady' };
      const start = rolloutStart(channel, klm().taskQueue, klm().settings.defaultNamespace);
      const input: RolloutWorkflowInput = { ...start.args[0], continueAsNewAfterEvents: 60 };
      const first = await klm().client.workflow.start(ROLLOUT_WORKFLOW, {
        ...start,
        args: [input],
        workflowIdConflictPolicy: 'TERMINATE_EXISTING',
      });
      const latest = klm().client.workflow.getHandle(first.workflowId);
      const runId = async () => (await latest.describe()).runId;
      const state = async () => await latest.query(rolloutProgress);
      /**
       * Until the rollout continues as new from the run now: the bridge relisting (a promotion of
       * the version rolling, which changes nothing) lengthens its history.
       */
      const nextRun = async (version: string) => {
        const before = await runId();
        await eventually('the rollout to continue as new', async () => {
          await latest.signal(promoted, { version });
          return (await runId()) !== before;
        });
      };

      await steady.channels({ steady: '1.1.0' });
      const plan = await eventually(
        'the plan of 1.1.0',
        async () => (await latest.query(rolloutPlanQuery).catch(() => null)) ?? undefined,
      );
      expect(plan.waves.map((w) => w.length)).toEqual([2, 2, 2]);
      // Paused while it rolls, and still paused, by the same operator for the same reason, in the next run.
      const paused = await latest.executeUpdate(pauseRollout, { args: [{ reason: 'hold across runs' }] });
      expect(paused.phase).toBe('Paused');
      await nextRun('1.1.0');
      expect(await state()).toMatchObject({
        version: '1.1.0',
        phase: 'Paused',
        message: 'paused: hold across runs',
        actions: [{ action: 'pause', reason: 'hold across runs' }],
      });
      expect(await latest.query(rolloutPlanQuery)).toEqual(plan);
      expect(await latest.query(rolloutWaves)).toEqual(plan.waves);
      expect(await refused(latest.executeUpdate(pauseRollout, { args: [{ reason: 'again' }] }))).toMatch(/is Paused/);
      expect((await latest.executeUpdate(resumeRollout, { args: [{ reason: 'carry on' }] })).phase).not.toBe('Paused');
      const done = await eventually(
        'the rollout of 1.1.0 to complete',
        async () => {
          const p = await state();
          return p.phase === 'Completed' && p.version === '1.1.0' ? p : undefined;
        },
        240_000,
      );
      await allAt(kymas, '1.1.0', steady.name);
      expect(done.waves.map((w) => [w.size, w.done, w.failed])).toEqual([
        [2, 2, 0],
        [2, 2, 0],
        [2, 2, 0],
      ]);
      expect(done.actions.map((a) => `${a.action}: ${a.reason}`)).toEqual([
        'pause: hold across runs',
        'resume: carry on',
      ]);
      // Each Kyma was admitted once: no run admitted again what a run before it had admitted.
      for (const k of kymas) {
        const admissions = (await historyOf(klm(), kymaWorkflowId(ns, k))).filter(
          (e) => e.workflowExecutionSignaledEventAttributes?.signalName === 'admitModule',
        );
        expect({ k, admissions: admissions.length }).toEqual({ k, admissions: 1 });
      }

      // A version that fails halts the rollout; the halt, the plan and then an abort hold across runs.
      await steady.channels({ steady: '1.2.0' });
      const halted = await eventually(
        'the rollout of 1.2.0 to halt with both Kymas of its first wave failed',
        async () => {
          const p = await state();
          return p.phase === 'Halted' && p.version === '1.2.0' && p.failed.length === 2 ? p : undefined;
        },
        240_000,
      );
      const waves = await latest.query(rolloutWaves);
      await nextRun('1.2.0');
      expect(await state()).toMatchObject({
        phase: 'Halted',
        version: '1.2.0',
        message: halted.message,
        failed: halted.failed,
      });
      expect(await latest.query(rolloutWaves)).toEqual(waves);
      expect((await latest.executeUpdate(abortRollout, { args: [{ reason: 'bad release' }] })).phase).toBe('Aborted');
      await nextRun('1.2.0');
      expect(await refused(latest.executeUpdate(resumeRollout, { args: [{ reason: 'try again' }] }))).toMatch(
        /the rollout of 1\.2\.0 is Aborted/,
      );
      // 1.2.0 fixed pokes the Kymas: the admitted ones recover, the others stay at 1.1.0 and say why.
      await publishSteady('1.2.0');
      await allAt(waves[0]!, '1.2.0', steady.name);
      const unreached = [...waves[1]!, ...waves[2]!];
      await eventually('the unreached Kymas to stay at 1.1.0 and say the rollout was aborted', async () => {
        const ms = await Promise.all(unreached.map(async (k) => await versionOf(k, steady.name)));
        return ms.every(
          (m) =>
            m?.version === '1.1.0' &&
            m.state === 'Ready' &&
            m.message?.endsWith(
              'the rollout of 1.2.0 on channel steady was aborted: bad release; it stays at 1.1.0 until the next promotion',
            ),
        );
      });
      // The runs it continued as new from (at least the three asked for here); the last keeps the search attributes it was started with.
      await eventually('three runs or more continued as new', async () => {
        let runs = 0;
        for await (const _ of klm().client.workflow.list({
          query: `WorkflowId = '${first.workflowId}' AND ExecutionStatus = 'ContinuedAsNew'`,
        }))
          runs++;
        return runs >= 3;
      });
      expect((await latest.describe()).typedSearchAttributes.get(SA.KymaNamespace)).toBe(ns);
    },
    600_000,
  );
});
