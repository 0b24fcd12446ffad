// The production build: `npm run build` compiles worker, bridge and klm to plain JavaScript in
// dist/ and bundles the workflows ahead of time; `node dist/…` runs them without tsx, and a module
// installs end to end through them; the built klm manages a Kyma's modules and serves the web page.
import { execFile, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, kymaInState, kymaObject, useKlm } from '../support/klm';
import { processEnv, startNode } from '../support/processes';
import { freePort, stackInfo, uniqueName } from '../support/stack';
import { klmCli } from '../support/cli';

const exec = promisify(execFile);

async function probe(port: number, path: string): Promise<number> {
  return (await fetch(`http://127.0.0.1:${port}${path}`)).status;
}

describe('the compiled processes', () => {
  const processes: ChildProcess[] = [];
  beforeAll(async () => {
    await exec(process.execPath, ['scripts/build.mjs'], { timeout: 120_000 });
  });
  const klm = useKlm({ worker: false });
  afterAll(() => {
    for (const p of processes) p.kill('SIGKILL');
  });

  /** Plain node: no loader, nothing compiled at run time. */
  function start(entry: string, env: NodeJS.ProcessEnv, args: string[] = []) {
    const started = startNode([entry, ...args], env);
    processes.push(started.proc);
    return started;
  }

  it('writes the worker, the bridge, klm and the workflow bundle', () => {
    for (const f of ['dist/workers/main.js', 'dist/starter/main.js', 'dist/cli/klm.js', 'dist/workflow-bundle.js'])
      expect(existsSync(f), f).toBe(true);
  });

  it('runs worker and bridge with plain node and the prebuilt bundle: a module installs end to end', async () => {
    const env = processEnv(klm().taskQueue, {
      NODE_OPTIONS: '',
      KLM_BLOB_CACHE_DIR: await mkdtemp(path.join(tmpdir(), 'klm-blobs-')),
    });
    const [workerPort, bridgePort] = [await freePort(), await freePort()];
    const worker = start('dist/workers/main.js', { ...env, KLM_METRICS_PORT: String(workerPort) });
    const bridge = start('dist/starter/main.js', { ...env, KLM_METRICS_PORT: String(bridgePort) });
    await eventually(
      'the worker to poll',
      () => Promise.resolve(worker.out().includes('worker: task queue') || undefined),
      60_000,
    );
    await eventually(
      'the bridge to route',
      () => Promise.resolve(bridge.out().includes('bridge: routing events') || undefined),
      60_000,
    );
    expect(worker.out()).toContain(`workflows: bundle ${path.resolve('dist/workflow-bundle.js')}`);
    // The probes a Deployment points at, on the metrics port of each.
    for (const port of [workerPort, bridgePort]) {
      expect(await probe(port, '/healthz')).toBe(200);
      await eventually(`:${port}/readyz`, async () => (await probe(port, '/readyz')) === 200 || undefined, 30_000);
    }

    const name = uniqueName('kyma');
    await klm().kube.create(
      kymaObject(klm().namespace, name, { channel: 'regular', modules: [{ name: 'greeter' }, { name: 'counter' }] }),
    );
    // Only the compiled worker polls this task queue.
    const kyma = await kymaInState(klm(), name, 'Ready', 120_000);
    expect(kyma.status?.modules?.map((m) => `${m.name}=${m.state}`).sort()).toEqual(['counter=Ready', 'greeter=Ready']);
    expect(worker.proc.exitCode).toBeNull();
    expect(bridge.proc.exitCode).toBeNull();
  });

  it('manages modules with the built klm: the catalog, an add waited for, the list as JSON', async () => {
    const name = uniqueName('kyma');
    await klm().kube.create(kymaObject(klm().namespace, name, { channel: 'regular', modules: [] }));
    const at = ['--kubeconfig', stackInfo().kubeconfig, '--kyma', `${klm().namespace}/${name}`];
    const offered = await klmCli(['module', 'catalog', ...at, '-o', 'json'], {}, 'dist');
    expect(offered.code, offered.stderr).toBe(0);
    expect((JSON.parse(offered.stdout) as { name: string }[]).map((e) => e.name)).toEqual(
      expect.arrayContaining(['counter', 'greeter']),
    );
    const add = await klmCli(
      ['module', 'add', 'counter', ...at, '--default-config-cr', '--wait', '--timeout', '2m'],
      {},
      'dist',
    );
    expect(add.code, add.stderr).toBe(0);
    expect(add.stdout).toContain('module counter is Ready');
    const list = await klmCli(['module', 'list', ...at, '-o', 'json'], {}, 'dist');
    expect(JSON.parse(list.stdout)).toEqual([
      expect.objectContaining({
        name: 'counter',
        version: '1.0.0(regular)',
        installedVersion: '1.0.0',
        installationStatus: 'Ready',
        moduleStatus: 'Ready',
      }),
    ]);
  });

  it('serves the web page of klm ui as built into dist/cli/app/', async () => {
    const args = ['ui', '--kubeconfig', stackInfo().kubeconfig, '--kyma', `${klm().namespace}/page`, '--port', '0'];
    const ui = start('dist/cli/klm.js', { ...process.env, NODE_OPTIONS: '' }, args);
    const url = await eventually('klm ui to print its address', () =>
      Promise.resolve(/open (http:\/\/\S+)/.exec(ui.out())?.[1]),
    );
    for (const [file, served] of Object.entries({ 'index.html': '/', 'style.css': '/app.css', 'app.js': '/app.js' })) {
      const res = await fetch(new URL(served, url));
      expect(res.status, served).toBe(200);
      expect(await res.text(), served).toBe(await readFile(`dist/cli/app/${file}`, 'utf8'));
    }
  });

  it('runs klm with plain node', async () => {
    const { stdout } = await exec(process.execPath, ['dist/cli/klm.js', '--help'], {
      env: { ...process.env, NODE_OPTIONS: '' },
    });
    expect(stdout).toContain('Usage: klm');
    // A command with an alias is listed as `module|modules`.
    for (const command of ['up', 'rollout', 'module', 'completion'])
      expect(stdout).toMatch(new RegExp(`\\n  ${command}[ |]`));
  });
});
