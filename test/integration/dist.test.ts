// The production build: `npm run build` compiles worker, bridge and klm to plain JavaScript in
// dist/ and bundles the workflows ahead of time; `node dist/…` runs them without tsx, and a module
// installs end to end through them; the built klm manages a Kyma's modules and serves the web page.
import { execFile, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, kymaInState, kymaObject, useKlm } from '../support/klm';
import { processEnv, startNode, type StartedProcess } from '../support/processes';
import { canSandbox, podVolumes, POD_UID, startNodeReadOnly } from '../support/read-only-root';
import { freePort, stackInfo, uniqueName } from '../support/stack';
import { klmCli } from '../support/cli';
import { execPlugin } from '../support/exec-plugin';
import { imageEnv } from '../../bench/image-env';
import { parse, parseAllDocuments, stringify } from 'yaml';
import type { KubeObject } from '../../src/api/shared';

const exec = promisify(execFile);

async function probe(port: number, path: string): Promise<number> {
  return (await fetch(`http://127.0.0.1:${port}${path}`)).status;
}

/** How long the processes here may take to stop (KLM_SHUTDOWN_TIMEOUT): they exit 1 when that runs out. */
const SHUTDOWN_TIMEOUT = '15s';

/**
 * Sends SIGTERM, as a rolling update does, to processes serving probes on `ports`: liveness fails
 * (503, or nothing answers any more) and each exits, 0, within its shutdown timeout.
 */
async function stopsOnSigterm(started: StartedProcess[], ports: number[]): Promise<void> {
  const exits = started.map(
    (s) =>
      new Promise<number | null>((resolve) => {
        if (s.proc.exitCode !== null) resolve(s.proc.exitCode);
        else s.proc.once('exit', (code) => resolve(code));
      }),
  );
  for (const s of started) s.proc.kill('SIGTERM');
  for (const port of ports)
    await eventually(
      `:${port}/healthz to fail once stopping`,
      async () => ((await probe(port, '/healthz').catch(() => 0)) !== 200 ? true : undefined),
      5_000,
    );
  const codes = await Promise.race([
    Promise.all(exits),
    new Promise<string>((r) => setTimeout(() => r('still running 20 s after SIGTERM'), 20_000)),
  ]);
  expect(codes, started.map((s) => s.out().split('\n').slice(-5).join('\n')).join('\n---\n')).toEqual(
    started.map(() => 0),
  );
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

  /** The worker and bridge the plain-node test started, and their metrics ports. */
  let plain: { started: StartedProcess[]; ports: number[] } | undefined;

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
    const env = processEnv(klm(), {
      NODE_OPTIONS: '',
      KLM_BLOB_CACHE_DIR: await mkdtemp(path.join(tmpdir(), 'klm-blobs-')),
      KLM_SHUTDOWN_TIMEOUT: SHUTDOWN_TIMEOUT,
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
    plain = { started: [worker, bridge], ports: [workerPort, bridgePort] };
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

  it("authenticates through a kubeconfig's exec credential plugin with the built klm (client-node is inlined into the build)", async () => {
    const local = parse(await readFile(stackInfo().kubeconfig, 'utf8')) as {
      users: { user: Record<string, string> }[];
    };
    const pem = (key: string) => Buffer.from(local.users[0]!.user[key]!, 'base64').toString('utf8');
    const plugin = await execPlugin(
      JSON.stringify({ clientCertificateData: pem('client-certificate-data'), clientKeyData: pem('client-key-data') }),
    );
    const kubeconfig = path.join(plugin.dir, 'kubeconfig');
    const withPlugin = { ...local, users: local.users.map((u) => ({ ...u, user: plugin.user() })) };
    await writeFile(kubeconfig, stringify(withPlugin));
    const name = uniqueName('kyma');
    await klm().kube.create(kymaObject(klm().namespace, name, { channel: 'regular', modules: [] }));
    const at = ['--kubeconfig', kubeconfig, '--kyma', `${klm().namespace}/${name}`];
    const offered = await klmCli(['module', 'catalog', ...at, '-o', 'json'], {}, 'dist');
    expect(offered.code, offered.stderr).toBe(0);
    expect((JSON.parse(offered.stdout) as { name: string }[]).map((e) => e.name)).toContain('greeter');
    expect(await plugin.runs()).toBeGreaterThan(0);
  });

  it('stops worker and bridge (unsharded) on SIGTERM, as a rolling update does, with the metrics port on', async () => {
    expect(plain, 'the processes of the test before').toBeDefined();
    await stopsOnSigterm(plain!.started, plain!.ports);
  });

  it("runs worker and bridge in one process (klm run, the image's default): a module installs; SIGTERM stops it", async () => {
    // The separate processes of the tests above have stopped: only this one polls and routes.
    const env = processEnv(klm(), {
      NODE_OPTIONS: '',
      KLM_BLOB_CACHE_DIR: await mkdtemp(path.join(tmpdir(), 'klm-blobs-')),
      KLM_SHUTDOWN_TIMEOUT: SHUTDOWN_TIMEOUT,
    });
    const port = await freePort();
    const one = start('dist/cli/klm.js', { ...env, KLM_METRICS_PORT: String(port) }, ['run']);
    await eventually('klm run to poll and route', () =>
      Promise.resolve(
        (one.out().includes('worker: task queue') && one.out().includes('bridge: routing events')) || undefined,
      ),
    );
    await eventually('its /readyz', async () => (await probe(port, '/readyz')) === 200 || undefined, 30_000);
    const name = uniqueName('kyma');
    await klm().kube.create(kymaObject(klm().namespace, name, { channel: 'regular', modules: [{ name: 'greeter' }] }));
    const kyma = await kymaInState(klm(), name, 'Ready', 120_000);
    expect(kyma.status?.modules?.map((m) => `${m.name}=${m.state}`)).toEqual(['greeter=Ready']);
    await stopsOnSigterm([one], [port]);
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

  // The image cannot be built here (no base image can be fetched); what it runs can be run as its
  // pods run it: the settings of deploy/kustomize/base, the user of the Dockerfile, a read-only
  // root with writable emptyDirs at /tmp and /var/cache/klm only (test/support/read-only-root.ts).
  it.skipIf(!canSandbox)(
    'runs worker and bridge as the Deployments do: uid 1000, no capabilities, a read-only root; a module installs',
    async () => {
      // The plain processes above stop first: their bridge serves every namespace.
      for (const p of processes.splice(0)) p.kill('SIGKILL');
      const base = parseAllDocuments(
        (await exec(stackInfo().tools.kubectl, ['kustomize', 'deploy/kustomize/base'])).stdout,
      ).map((d) => d.toJS() as KubeObject & { data?: Record<string, string>; spec?: unknown });
      const config = base.find((o) => o.kind === 'ConfigMap' && o.metadata.name === 'klm-config')!.data!;
      const worker = base.find((o) => o.kind === 'Deployment' && o.metadata.name === 'klm-worker') as unknown as {
        spec: {
          template: {
            spec: { securityContext: { runAsUser: number }; containers: { env: { name: string; value?: string }[] }[] };
          };
        };
      };
      expect(worker.spec.template.spec.securityContext.runAsUser).toBe(POD_UID);
      const sdk = worker.spec.template.spec.containers[0]!.env.find((e) => e.name === 'KLM_SDK_METRICS_ADDRESS')!;
      expect(config.KLM_BLOB_CACHE_DIR).toMatch(/^\/var\/cache\/klm\//);
      const volumes = await podVolumes({ kubeconfig: stackInfo().kubeconfig });
      const [workerPort, bridgePort, sdkPort] = [await freePort(), await freePort(), await freePort()];
      const env = {
        // The pod's environment: the image's, the ConfigMap's, the Deployment's; the local stack's addresses.
        PATH: '/usr/local/bin:/usr/bin:/bin',
        HOME: '/home/node',
        ...imageEnv(),
        ...config,
        TEMPORAL_ADDRESS: stackInfo().temporalAddress,
        TEMPORAL_NAMESPACE: stackInfo().temporalNamespace,
        KUBECONFIG: '/mnt/kubeconfig',
        KLM_TASK_QUEUE: klm().taskQueue,
        KLM_OCI_REGISTRY_HOST: stackInfo().registryHost,
        KLM_KYMA_NAMESPACES: klm().namespace,
        KLM_DEFAULT_NAMESPACE: '{kyma}-system',
        KLM_SHUTDOWN_TIMEOUT: SHUTDOWN_TIMEOUT,
      };
      const started = [
        startNodeReadOnly(
          ['dist/workers/main.js'],
          { ...env, KLM_METRICS_PORT: String(workerPort), [sdk.name]: sdk.value!.replace(/:\d+$/, `:${sdkPort}`) },
          volumes,
        ),
        // Sharded, as the Deployment runs it: its Leases in the Kymas' namespace here.
        startNodeReadOnly(
          ['dist/starter/main.js'],
          {
            ...env,
            KLM_METRICS_PORT: String(bridgePort),
            POD_NAME: 'klm-bridge-0',
            KLM_LEADER_ELECTION_LEASE: `${klm().namespace}/klm-bridge`,
          },
          volumes,
        ),
      ];
      processes.push(...started.map((s) => s.proc));
      // A wait that fails says what the two processes printed (in CI, that is all there is to go on).
      const saying = <T>(wait: Promise<T>) =>
        wait.catch((err: Error) => {
          throw new Error(`${err.message}\n${started.map((s) => `--- ${s.out().slice(-3000)}`).join('\n')}`);
        });
      for (const port of [workerPort, bridgePort])
        await saying(
          eventually(
            `:${port}/readyz`,
            async () => ((await probe(port, '/readyz').catch(() => 0)) === 200 ? true : undefined),
            60_000,
          ),
        );
      // As the kernel sees each: uid 1000, no capabilities, no_new_privs, its root mounted read-only.
      for (const s of started) {
        const status = await readFile(`/proc/${s.proc.pid}/status`, 'utf8');
        expect(status).toMatch(new RegExp(`^Uid:\\s+${POD_UID}\\s`, 'm'));
        expect(status).toMatch(/^CapEff:\s+0+$/m);
        expect(status).toMatch(/^NoNewPrivs:\s+1$/m);
        const mounts = await readFile(`/proc/${s.proc.pid}/mountinfo`, 'utf8');
        const root = mounts.split('\n').find((l) => l.split(' ')[4] === '/');
        expect(root?.split(' ')[5]).toMatch(/^ro\b/);
      }
      const name = uniqueName('kyma');
      await klm().kube.create(
        kymaObject(klm().namespace, name, { channel: 'regular', modules: [{ name: 'greeter' }] }),
      );
      const kyma = await saying(kymaInState(klm(), name, 'Ready', 90_000));
      expect(kyma.status?.modules?.map((m) => `${m.name}=${m.state}`)).toEqual(['greeter=Ready']);
      for (const s of started) expect(s.proc.exitCode, s.out()).toBeNull();
      // What it wrote went to the cache's emptyDir; the SDK's own metrics are served where the Deployment says.
      expect((await readdir(volumes.cache)).length).toBeGreaterThan(0);
      expect(await (await fetch(`http://127.0.0.1:${sdkPort}/metrics`)).text()).toMatch(/^temporal_/m);
      expect(started.map((s) => s.out()).join('')).not.toMatch(/EROFS|EACCES/);
      await stopsOnSigterm(started, [workerPort, bridgePort]);
    },
    // Above the sum of its waits, so that a wait's own message (and the processes' output) is what fails.
    240_000,
  );
});
