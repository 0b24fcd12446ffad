// A Kyma of many modules on one worker that serves every Kyma: it installs them, upgrades one,
// removes one and is deleted, the worker up throughout (its CPU and peak memory are printed); a
// Kyma of more modules than one may have is an Error that names the limit, and nothing of it
// is installed. `npm test` runs 200 modules (the limit set to 200); `npm run bench:large`, 1,000
// with the default limit (KLM_LARGE_KYMA=1000).
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { manifestName } from '../../src/api/names';
import { API_VERSION, type KubeObject } from '../../src/api/shared';
import { DEFAULT_SETTINGS } from '../../src/contract/settings';
import { writeWorkflowBundle } from '../../src/workers/worker';
import { eventually, getKyma, kymaObject, kymaWorkflowId, startKlm, type Klm } from '../support/klm';
import { processEnv } from '../support/processes';
import { publishSmallModule, publishSmallModules } from '../support/small-modules';
import { WorkerProcess } from '../support/worker-process';

const MODULES = Number(process.env.KLM_LARGE_KYMA ?? 200);
/** The limit the test's workflows run with: the default with a thousand modules, else the test's size. */
const LIMIT = MODULES >= DEFAULT_SETTINGS.maxModulesPerKyma ? DEFAULT_SETTINGS.maxModulesPerKyma : MODULES;
const log = (line: string) => console.log(`[large-kyma] ${line}`);

describe(`a Kyma of ${MODULES} modules`, () => {
  let klm: Klm;
  let worker: WorkerProcess;
  beforeAll(async () => {
    // A run continues as new once the installs are through (the installs that start together are
    // one activity, so a limit of one event per four modules): each carries every module.
    klm = await startKlm({ worker: false, settings: { maxModulesPerKyma: LIMIT, maxHistoryEvents: MODULES / 4 } });
    const dir = await mkdtemp(path.join(tmpdir(), 'klm-large-'));
    await writeWorkflowBundle(path.join(dir, 'workflows.js'));
    worker = new WorkerProcess(
      processEnv(klm, {
        KLM_BLOB_CACHE_DIR: path.join(dir, 'blobs'),
        KLM_WORKFLOW_BUNDLE: path.join(dir, 'workflows.js'),
        KLM_LOG_LEVEL: 'WARN',
      }),
      log,
    );
    worker.start();
  });
  afterAll(async () => {
    await worker?.kill();
    await klm?.stop();
  });

  it('installs, upgrades one, removes one and is deleted with the worker up throughout; one module more than the limit is an Error', async () => {
    const letters = Array.from({ length: 6 }, () => String.fromCharCode(97 + Math.floor(Math.random() * 26))).join('');
    const names = await publishSmallModules(klm, MODULES, letters);
    const ns = klm.namespace;
    const big = `${letters}-big`;
    const system = `${big}-system`;
    const spec = (modules: string[]) => ({ channel: 'regular', modules: modules.map((name) => ({ name })) });
    const modulesOf = async (name: string) => (await getKyma(klm, name))?.status?.modules ?? [];
    const configMaps = async () =>
      (await klm.kube.list<KubeObject & { data?: Record<string, string> }>('v1', 'ConfigMap', { namespace: system }))
        .items;

    const t0 = Date.now();
    await klm.kube.create(kymaObject(ns, big, spec(names)));
    await eventually(
      `all ${MODULES} modules Ready`,
      async () => {
        const k = await getKyma(klm, big);
        return k?.status?.state === 'Ready' && k.status.modules?.length === MODULES;
      },
      900_000,
    );
    const installed = worker.usage();
    log(
      `installed ${MODULES} modules in ${Math.round((Date.now() - t0) / 1000)} s; worker ${JSON.stringify(installed)}`,
    );
    expect((await configMaps()).filter((c) => names.includes(c.metadata.name))).toHaveLength(MODULES);
    // What each run handed to the next (all the modules) stays well within Temporal's payload limit (2 MB).
    const inputs = await eventually('a run that continued as new (visibility lags a little)', async () => {
      const sizes: number[] = [];
      for await (const wf of klm.client.workflow.list({ query: `WorkflowId = '${kymaWorkflowId(ns, big)}'` })) {
        const first = (await klm.client.workflow.getHandle(wf.workflowId, wf.runId).fetchHistory()).events?.[0];
        sizes.push(first?.workflowExecutionStartedEventAttributes?.input?.payloads?.[0]?.data?.length ?? 0);
      }
      return sizes.length > 1 ? sizes : undefined;
    });
    log(`runs: ${inputs.length}, their inputs ${inputs.map((b) => `${Math.round(b / 1024)} KB`).join(', ')}`);
    expect(Math.max(...inputs)).toBeLessThan(1_000_000);

    // One module upgraded: its channel moves to 1.1.0.
    await publishSmallModule(klm, names[0]!, '1.1.0');
    await eventually('the upgrade', async () =>
      (await modulesOf(big)).find((m) => m.name === names[0] && m.version === '1.1.0' && m.state === 'Ready'),
    );
    expect(
      (await klm.kube.get<KubeObject & { data?: Record<string, string> }>('v1', 'ConfigMap', names[0]!, system))?.data,
    ).toMatchObject({ version: '1.1.0' });

    // One module removed: its ConfigMap and its Manifest go, the others stay.
    await klm.kube.mergePatch(API_VERSION, 'Kyma', big, ns, { spec: spec(names.filter((n) => n !== names[1])) });
    await eventually('the removal', async () => {
      const modules = await modulesOf(big);
      return modules.length === MODULES - 1 && !modules.some((m) => m.name === names[1]);
    });
    expect(await klm.kube.get('v1', 'ConfigMap', names[1]!, system)).toBeUndefined();
    expect(await klm.kube.get(API_VERSION, 'Manifest', manifestName(big, names[1]!), ns)).toBeUndefined();

    // One module more than the limit: an Error that names the limit, nothing installed.
    const over = `${letters}-over`;
    await klm.kube.create(kymaObject(ns, over, spec([...names, 'greeter'])));
    const refused = await eventually('the limit', async () => {
      const k = await getKyma(klm, over);
      return k?.status?.state === 'Error' ? k : undefined;
    });
    expect(refused.status?.lastOperation?.operation).toContain(
      `lists ${MODULES + 1} modules, more than the ${LIMIT} one Kyma may have (KLM_MAX_MODULES_PER_KYMA)`,
    );
    expect(await klm.kube.get(API_VERSION, 'Manifest', manifestName(over, 'greeter'), ns)).toBeUndefined();

    // The Kyma goes, and every object and Manifest of its modules with it.
    const t1 = Date.now();
    await klm.kube.delete(API_VERSION, 'Kyma', big, ns);
    await eventually('the Kyma to be gone', async () => (await getKyma(klm, big)) === undefined, 900_000);
    log(`deleted in ${Math.round((Date.now() - t1) / 1000)} s; worker ${JSON.stringify(worker.usage())}`);
    expect((await configMaps()).filter((c) => names.includes(c.metadata.name))).toEqual([]);
    const manifests = await klm.kube.list(API_VERSION, 'Manifest', { namespace: ns });
    expect(manifests.items.filter((m) => m.metadata.name.startsWith(`${big}-`))).toEqual([]);
    expect(worker.crashes).toEqual([]);
    expect(worker.running()).toBe(true);
  }, 3_600_000);
});
