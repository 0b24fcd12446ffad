// A mixed fleet run by a worker process that is SIGKILLed again and again, then every history it
// left replayed with the current code: the proof that Kyma and rollout histories stay
// deterministic under restarts. Used by test/integration/restart-replay.test.ts (a short run in
// `npm test`) and bench/restart-replay.ts (a long one).
//
// The fleet: Kymas installing two sample modules; one Kyma per failure that makes a module retry
// (a kubeconfig Secret without its key, a closed port, a kubeconfig that is no YAML, a template
// whose registry does not answer, a component that is not there); a Kyma of many small modules;
// Kymas edited and deleted while it runs; a staged rollout under way. The worker runs part of
// the time with the sticky cache off (every task replays the whole history).
import { createServer } from 'node:net';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Worker } from '@temporalio/worker';
import type { WorkflowExecutionInfo } from '@temporalio/client';
import { kubeconfigSecret } from '../../bench/fleet';
import type { Kyma } from '../../src/api/kyma';
import { API_VERSION } from '../../src/api/shared';
import { moduleReleaseMeta, moduleTemplate } from '../../src/publish/module';
import { writeWorkflowBundle } from '../../src/workers/worker';
import { eventually, getKyma, kymaObject, type Klm } from './klm';
import { testModule } from './modules';
import { publishSmallModules } from './small-modules';
import { WorkerProcess } from './worker-process';
import { processEnv } from './processes';
import { stackInfo } from './stack';

export interface RestartFleetOptions {
  /** Kymas that install greeter and counter. */
  plain: number;
  /** Modules of the one big Kyma (each a ConfigMap, no manager). */
  bigModules: number;
  /** Kymas that follow a module's channel while its rollout moves them in waves. */
  rolloutKymas: number;
  /** SIGKILLs of the worker (at least 5). */
  kills: number;
  /** Time between kills: a random pick in [min, max] ms. */
  killGapMs: [number, number];
  /** How long everything may take to settle after the last kill. */
  settleMs: number;
  log: (line: string) => void;
}

export interface Replayed {
  workflowId: string;
  runId: string;
  error: string;
}

export interface RestartFleetReport {
  /** Workflow tasks that failed (by cause) or timed out, over every history. */
  taskTrouble: Record<string, number>;
  kills: number;
  /** Worker exits not caused by a kill (a crash): each with its exit and the end of its stderr. */
  crashes: string[];
  /** Workflow executions (runs) replayed, of each type. */
  runs: Record<string, number>;
  events: number;
  /** Runs whose replay failed. */
  failures: Replayed[];
  /** What had not settled when the time was up (empty: everything settled). */
  unsettled: string[];
}

/** A port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const port = (server.address() as { port: number }).port;
  await new Promise((r) => server.close(r));
  return port;
}

const pick = ([min, max]: [number, number]) => min + Math.floor(Math.random() * (max - min));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Two modules that fail on every install: one whose template names a registry that does not
 * answer, one whose component was never pushed.
 */
async function publishFailingModules(klm: Klm, prefix: string): Promise<{ badRegistry: string; noComponent: string }> {
  const badRegistry = `${prefix}badreg`;
  const noComponent = `${prefix}nocomp`;
  const port = await closedPort();
  for (const [name, descriptor] of [
    [
      badRegistry,
      {
        component: {
          name: `kyma-project.io/module/${badRegistry}`,
          version: '1.0.0',
          repositoryContexts: [{ type: 'OCIRegistry', baseUrl: `127.0.0.1:${port}`, componentNameMapping: 'urlPath' }],
        },
      },
    ],
    [noComponent, {}],
  ] as const) {
    const m = {
      name,
      component: `kyma-project.io/module/${name}`,
      version: '1.0.0',
      manifest: '',
      descriptor: 'empty' as const,
      layer: 'yaml' as const,
    };
    await klm.kube.apply({
      ...moduleTemplate(m, klm.namespace, { component: { repositoryContexts: [] } }),
      spec: { moduleName: name, version: '1.0.0', descriptor },
    });
    await klm.kube.apply(moduleReleaseMeta(name, m.component, klm.namespace, { regular: '1.0.0' }));
  }
  return { badRegistry, noComponent };
}

/** Every run of every workflow on the test's task queue, replayed with the code of this checkout. */
export async function replayAll(
  klm: Klm,
): Promise<Pick<RestartFleetReport, 'runs' | 'events' | 'failures' | 'taskTrouble'>> {
  const dir = await mkdtemp(path.join(tmpdir(), 'klm-replay-'));
  await writeWorkflowBundle(path.join(dir, 'bundle.js'));
  const code = await readFile(path.join(dir, 'bundle.js'), 'utf8');
  const executions: WorkflowExecutionInfo[] = [];
  for await (const wf of klm.client.workflow.list({ query: `TaskQueue = '${klm.taskQueue}'` })) executions.push(wf);
  const runs: Record<string, number> = {};
  let events = 0;
  const kept = new Map<string, unknown>();
  const taskTrouble: Record<string, number> = {};
  const count = (what: string) => (taskTrouble[what] = (taskTrouble[what] ?? 0) + 1);
  const histories = (async function* () {
    for (const wf of executions) {
      runs[wf.type] = (runs[wf.type] ?? 0) + 1;
      const history = await klm.client.workflow.getHandle(wf.workflowId, wf.runId).fetchHistory();
      events += history.events?.length ?? 0;
      kept.set(wf.runId, history);
      for (const e of history.events ?? []) {
        if (e.workflowTaskFailedEventAttributes) count(`failed ${String(e.workflowTaskFailedEventAttributes.cause)}`);
        if (e.workflowTaskTimedOutEventAttributes)
          count(`timed out ${String(e.workflowTaskTimedOutEventAttributes.timeoutType)}`);
      }
      yield { workflowId: wf.workflowId, history };
    }
  })();
  const failures: Replayed[] = [];
  const runIds = new Map(executions.map((e) => [e.workflowId, e.runId]));
  for await (const r of Worker.runReplayHistories({ workflowBundle: { code }, replayName: 'restart-fleet' }, histories))
    if (r.error) {
      // Kept for a person to read: which commands the replay met where.
      const file = path.join(dir, `${(r.runId ?? r.workflowId).replaceAll('/', '_')}.json`);
      await writeFile(file, JSON.stringify(kept.get(r.runId ?? '') ?? null));
      failures.push({
        workflowId: r.workflowId,
        runId: r.runId ?? runIds.get(r.workflowId) ?? '',
        error: `${r.error instanceof Error ? r.error.message : String(r.error)} (history: ${file})`,
      });
    }
  return { runs, events, failures, taskTrouble };
}

/** Runs the fleet, kills the worker `kills` times, lets it settle, and replays what it left. */
export async function restartFleet(klm: Klm, o: RestartFleetOptions): Promise<RestartFleetReport> {
  const log = o.log;
  // Letters only: module names are built from it.
  const prefix = Array.from({ length: 6 }, () => String.fromCharCode(97 + Math.floor(Math.random() * 26))).join('');
  const bundle = path.join(await mkdtemp(path.join(tmpdir(), 'klm-bundle-')), 'workflows.js');
  await writeWorkflowBundle(bundle);
  const worker = new WorkerProcess(
    processEnv(klm, {
      KLM_BLOB_CACHE_DIR: await mkdtemp(path.join(tmpdir(), 'klm-blobs-')),
      KLM_WORKFLOW_BUNDLE: bundle,
      KLM_LOG_LEVEL: 'WARN',
    }),
    log,
  );
  worker.start();
  const ns = klm.namespace;
  const kyma = (name: string, modules: string[], channel = 'regular') =>
    kymaObject(ns, name, { channel, modules: modules.map((m) => ({ name: m })) });
  const localKubeconfig = await readFile(stackInfo().kubeconfig, 'utf8');

  log('publishing modules');
  const small = await publishSmallModules(klm, o.bigModules, `${prefix}sml`);
  const failing = await publishFailingModules(klm, prefix);
  const rolled = await testModule(klm);
  await rolled.publish('1.0.0');
  await rolled.publish('2.0.0');
  await rolled.channels({ regular: '1.0.0' });

  const plain = Array.from({ length: o.plain }, (_, i) => `${prefix}-plain-${i}`);
  const rolling = Array.from({ length: o.rolloutKymas }, (_, i) => `${prefix}-roll-${i}`);
  const big = `${prefix}-big`;
  const failures = {
    noKey: `${prefix}-nokey`,
    closedPort: `${prefix}-closed`,
    notYaml: `${prefix}-notyaml`,
    badRegistry: `${prefix}-badreg`,
    noComponent: `${prefix}-nocomp`,
  };
  log(`creating ${plain.length + rolling.length + 1 + Object.keys(failures).length} Kymas`);
  await klm.kube.create({ ...kubeconfigSecret(ns, failures.noKey, ''), data: { other: 'eA==' } });
  await klm.kube.create(
    kubeconfigSecret(
      ns,
      failures.closedPort,
      localKubeconfig.replace(/server: .*/, `server: https://127.0.0.1:${await closedPort()}`),
    ),
  );
  await klm.kube.create(kubeconfigSecret(ns, failures.notYaml, 'clusters: [ {{ this is: no kubeconfig'));
  await Promise.all([
    ...plain.map((n) => klm.kube.create(kyma(n, ['greeter', 'counter']))),
    ...rolling.map((n) => klm.kube.create(kyma(n, [rolled.name]))),
    klm.kube.create(kyma(big, small)),
    klm.kube.create(kyma(failures.noKey, ['greeter'])),
    klm.kube.create(kyma(failures.closedPort, ['greeter'])),
    klm.kube.create(kyma(failures.notYaml, ['greeter'])),
    klm.kube.create(kyma(failures.badRegistry, [failing.badRegistry, 'greeter'])),
    klm.kube.create(kyma(failures.noComponent, [failing.noComponent, 'counter'])),
  ]);

  // What happens between the kills, in order: edits, deletions, the promotion, a module removed
  // from the big Kyma, a new Kyma, more edits.
  const edited = plain.slice(0, 2);
  const deleted = plain.slice(2, 4);
  const late = `${prefix}-late`;
  const removedSmall = small[small.length - 1]!;
  const patchModules = (name: string, modules: string[]) =>
    klm.kube.mergePatch(API_VERSION, 'Kyma', name, ns, { spec: { modules: modules.map((m) => ({ name: m })) } });
  const actions: [string, () => Promise<unknown>][] = [
    [
      'edit: counter out of the first Kyma, greeter out of the second',
      async () => {
        if (edited[0]) await patchModules(edited[0], ['greeter']);
        if (edited[1]) await patchModules(edited[1], ['counter']);
      },
    ],
    [
      'delete a Kyma; promote the rollout',
      async () => {
        if (deleted[0]) await klm.kube.delete(API_VERSION, 'Kyma', deleted[0], ns);
        await rolled.channels({ regular: '2.0.0' });
      },
    ],
    [
      'remove a module from the big Kyma; a new Kyma',
      async () => {
        await patchModules(big, small.slice(0, -1));
        await klm.kube.create(kyma(late, ['greeter']));
      },
    ],
    [
      'delete another Kyma; edit back',
      async () => {
        if (deleted[1]) await klm.kube.delete(API_VERSION, 'Kyma', deleted[1], ns);
        if (edited[0]) await patchModules(edited[0], ['greeter', 'counter']);
      },
    ],
  ];

  for (let k = 1; k <= o.kills; k++) {
    const gap = pick(o.killGapMs);
    await sleep(gap);
    await worker.kill();
    log(`kill ${k} after ${gap} ms`);
    const action = actions[k - 1];
    if (action) {
      log(`  ${action[0]}`);
      await action[1]();
    }
    // The third worker runs without a sticky cache: every task replays its workflow's history.
    worker.start(k === 3 ? { KLM_WORKFLOW_CACHE_SIZE: '0' } : {});
    if (k === 3) log('  the next worker runs with the sticky cache off');
  }
  for (const [what, act] of actions.slice(o.kills)) {
    log(what);
    await act();
  }

  log('settling');
  const expectations: [string, string, (k: Kyma | undefined) => boolean][] = [
    ...plain
      .filter((n) => !deleted.includes(n))
      .map((n): [string, string, (k: Kyma | undefined) => boolean] => [
        n,
        'Ready',
        (k) => k?.status?.state === 'Ready',
      ]),
    ...deleted.map((n): [string, string, (k: Kyma | undefined) => boolean] => [n, 'gone', (k) => k === undefined]),
    ...rolling.map((n): [string, string, (k: Kyma | undefined) => boolean] => [
      n,
      'Ready at 2.0.0',
      (k) => k?.status?.state === 'Ready' && k.status.modules?.[0]?.version === '2.0.0',
    ]),
    [
      big,
      `Ready with ${small.length - 1} modules`,
      (k) =>
        k?.status?.state === 'Ready' &&
        k.status.modules?.length === small.length - 1 &&
        !k.status.modules.some((m) => m.name === removedSmall),
    ],
    [late, 'Ready', (k) => k?.status?.state === 'Ready'],
    ...Object.values(failures).map((n): [string, string, (k: Kyma | undefined) => boolean] => [
      n,
      'Error',
      (k) => k?.status?.state === 'Error',
    ]),
  ];
  const unsettled = async () => {
    const left: string[] = [];
    for (const [name, what, ok] of expectations) {
      const k = await getKyma(klm, name);
      if (!ok(k))
        left.push(
          `${name}: not ${what} (${
            k
              ? `${k.status?.state}: ${k.status?.modules
                  ?.filter((m) => m.state !== 'Ready')
                  .map((m) => `${m.name} ${m.state} ${m.message}`)
                  .slice(0, 3)
                  .join('; ')}`
              : 'gone'
          })`,
        );
    }
    return left;
  };
  let left: string[] = [];
  await eventually(
    'the fleet to settle',
    async () => {
      left = await unsettled();
      return left.length === 0;
    },
    o.settleMs,
  ).catch(() => undefined);
  await worker.kill();
  log(left.length ? `not settled:\n  ${left.join('\n  ')}` : 'settled');

  log('replaying every run');
  const replayed = await replayAll(klm);
  log(`replayed ${JSON.stringify(replayed.runs)} (${replayed.events} events): ${replayed.failures.length} failed`);
  log(`workflow tasks failed or timed out: ${JSON.stringify(replayed.taskTrouble)}`);
  for (const f of replayed.failures.slice(0, 20)) log(`  ${f.workflowId} ${f.runId}: ${f.error.slice(0, 400)}`);
  return { kills: o.kills, crashes: worker.crashes, ...replayed, unsettled: left };
}
