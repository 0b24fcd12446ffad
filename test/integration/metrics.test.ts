import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { kubeconfigSecret } from '../../bench/fleet';
import { API_VERSION, type KubeObject } from '../../src/api/shared';
import { serveMetrics } from '../../src/infra/metrics';
import { createKymaWithBrokenSecret, eventually, getKyma, kymaInState, kymaObject, useKlm } from '../support/klm';
import { testModule } from '../support/modules';
import { processEnv, startNode, type StartedProcess } from '../support/processes';
import { freePort, stackInfo, uniqueName } from '../support/stack';

async function scrape(port: number): Promise<string> {
  return await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
}

/** Series of a gauge whose value is 1, for the Kymas of one namespace, by state. */
function onesByState(text: string, metric: string, namespace: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${metric}{`) || !line.includes(`kyma_namespace="${namespace}"`) || !line.endsWith(' 1'))
      continue;
    const state = /state="([^"]+)"/.exec(line)![1]!;
    out[state] = (out[state] ?? 0) + 1;
  }
  return out;
}

/** The `state` values a gauge has series for, for one Kyma, sorted. */
function statesOf(text: string, metric: string, kyma: string): string[] {
  return text
    .split('\n')
    .filter((l) => l.startsWith(`${metric}{kyma_name="${kyma}",`))
    .map((l) => /state="([^"]+)"/.exec(l)![1]!)
    .sort();
}

describe('Prometheus metrics', () => {
  const klm = useKlm();

  it('exposes Kyma and module states, activity latencies, failures by reason and bridge signals on /metrics', async () => {
    const server = await serveMetrics(0);
    try {
      const name = uniqueName('kyma');
      const ns = klm().namespace;
      await klm().kube.create(kymaObject(ns, name, { channel: 'regular', modules: [{ name: 'greeter' }] }));
      await kymaInState(klm(), name, 'Ready');
      // A Kyma whose target Secret is broken: a typed, expected failure.
      const broken = uniqueName('kyma');
      await createKymaWithBrokenSecret(klm(), broken, [{ name: 'greeter' }]);
      await kymaInState(klm(), broken, 'Error');

      // The broken Kyma may turn Error on its runtime side before its module's install has failed.
      const installFailed =
        /lifecycle_mgr_requeue_reason_total\{requeue_reason="InvalidKubeconfig",requeue_type="intended",activity="installModule"\} [1-9]/;
      const text = await eventually('the module state and the failed install to be exported', async () => {
        const t = await scrape(server.port);
        return t.includes(
          `lifecycle_mgr_module_state{kyma_name="${name}",kyma_namespace="${ns}",module_name="greeter",state="Ready"} 1`,
        ) && installFailed.test(t)
          ? t
          : undefined;
      });
      expect(text).toContain(`lifecycle_mgr_kyma_state{kyma_name="${name}",kyma_namespace="${ns}",state="Ready"} 1`);
      expect(text).toContain(
        `lifecycle_mgr_kyma_state{kyma_name="${name}",kyma_namespace="${ns}",state="Processing"} 0`,
      );
      expect(text).toContain(`lifecycle_mgr_kyma_state{kyma_name="${broken}",kyma_namespace="${ns}",state="Error"} 1`);
      expect(text).toMatch(/klm_activity_duration_seconds_count\{activity="installModule",outcome="ok"\} [1-9]/);
      expect(text).toMatch(/klm_bridge_signals_total\{signal="kymaChanged",outcome="ok"\} [1-9]/);
      expect(text).toMatch(/klm_bridge_signal_latency_seconds_count\{signal="modulesChanged"\} [1-9]/);
    } finally {
      await server.close();
    }
  });

  it("labels a Kyma's and its modules' states with upstream's shoot (from skr-domain) and instance_id", async () => {
    const server = await serveMetrics(0);
    try {
      const name = uniqueName('kyma');
      const ns = klm().namespace;
      const kyma = kymaObject(ns, name, { channel: 'regular', modules: [{ name: 'greeter' }] });
      kyma.metadata.labels = { 'kyma-project.io/instance-id': 'inst-7' };
      kyma.metadata.annotations = { 'skr-domain': 'shoot-7.kyma.example.com' };
      await klm().kube.create(kyma);
      await kymaInState(klm(), name, 'Ready');
      const text = await eventually('the labelled series', async () => {
        const t = await scrape(server.port);
        return t.includes(
          `lifecycle_mgr_module_state{kyma_name="${name}",kyma_namespace="${ns}",module_name="greeter",shoot="shoot-7",instance_id="inst-7",state="Ready"} 1`,
        )
          ? t
          : undefined;
      });
      expect(text).toContain(
        `lifecycle_mgr_kyma_state{kyma_name="${name}",kyma_namespace="${ns}",shoot="shoot-7",instance_id="inst-7",state="Ready"} 1`,
      );
      // Upstream's state values: a Kyma's five, a module's six (Unmanaged too).
      expect(statesOf(text, 'lifecycle_mgr_kyma_state', name)).toEqual([
        'Deleting',
        'Error',
        'Processing',
        'Ready',
        'Warning',
      ]);
      expect(statesOf(text, 'lifecycle_mgr_module_state', name)).toEqual([
        'Deleting',
        'Error',
        'Processing',
        'Ready',
        'Unmanaged',
        'Warning',
      ]);
    } finally {
      await server.close();
    }
  });
});

describe('mandatory module metrics', () => {
  // A namespace of its own: a mandatory module goes to every Kyma of its namespace.
  const klm = useKlm();

  it("exports upstream's count of mandatory ModuleReleaseMetas and each mandatory module's state by its Manifest, not as a module of the Kyma", async () => {
    const server = await serveMetrics(0);
    try {
      const ns = klm().namespace;
      const mod = await testModule(klm());
      await mod.publish('1.0.0', undefined, undefined, { descriptor: 'inline' });
      const name = uniqueName('kyma');
      await klm().kube.create(kymaObject(ns, name, { channel: 'regular', modules: [{ name: 'greeter' }] }));
      await kymaInState(klm(), name, 'Ready');
      await eventually(
        'no mandatory module yet',
        async () =>
          (await scrape(server.port)).includes(`lifecycle_mgr_mandatory_modules{kyma_namespace="${ns}"} 0`) ||
          undefined,
      );

      const releaseMeta: KubeObject = {
        apiVersion: API_VERSION,
        kind: 'ModuleReleaseMeta',
        metadata: { name: mod.name, namespace: ns },
        spec: { moduleName: mod.name, ocmComponentName: mod.component, mandatory: { version: '1.0.0' } },
      };
      await klm().kube.apply(releaseMeta);
      const text = await eventually(
        'the mandatory module Ready',
        async () => {
          const t = await scrape(server.port);
          return t.includes(
            `lifecycle_mgr_mandatory_module_state{kyma_name="${name}",kyma_namespace="${ns}",module_name="${mod.name}",state="Ready"} 1`,
          )
            ? t
            : undefined;
        },
        120_000,
      );
      expect(text).toContain(`lifecycle_mgr_mandatory_modules{kyma_namespace="${ns}"} 1`);
      expect(text).toContain(
        `lifecycle_mgr_mandatory_module_state{kyma_name="${name}",kyma_namespace="${ns}",module_name="${mod.name}",state="Processing"} 0`,
      );
      // Upstream's states of a mandatory module: five, no Unmanaged.
      expect(statesOf(text, 'lifecycle_mgr_mandatory_module_state', name)).toEqual([
        'Deleting',
        'Error',
        'Processing',
        'Ready',
        'Warning',
      ]);
      // It has no entry in the Kyma's status, so no lifecycle_mgr_module_state series (as upstream).
      expect(
        text
          .split('\n')
          .filter((l) => l.startsWith('lifecycle_mgr_module_state{') && l.includes(`module_name="${mod.name}"`)),
      ).toEqual([]);
      expect(text).toContain(
        `lifecycle_mgr_module_state{kyma_name="${name}",kyma_namespace="${ns}",module_name="greeter",state="Ready"} 1`,
      );
    } finally {
      await server.close();
    }
  }, 180_000);
});

describe('state gauges with two worker processes', () => {
  const klm = useKlm({ worker: false });
  const workers: ChildProcess[] = [];
  afterAll(() => {
    for (const w of workers) w.kill('SIGKILL');
  });

  it('adds up: the fleet is counted once (by the bridge), workers export no state series, a deleted Kyma leaves none', async () => {
    const ns = klm().namespace;
    // The first worker's maintenance-window policy can be used; the second's ConfigMap does not exist.
    const window = { begin: '2026-01-01T00:00:00Z', end: '2026-01-01T04:00:00Z' };
    await klm().kube.create({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'maintenance-policy', namespace: ns },
      data: { 'policy.json': JSON.stringify({ rules: [], default: window }) },
    });
    const policies = [`${ns}/maintenance-policy`, `${ns}/no-such-policy`];
    const ports = [await freePort(), await freePort()];
    for (const [i, port] of ports.entries()) {
      workers.push(
        spawn(process.execPath, ['--import', 'tsx', 'src/workers/main.ts'], {
          env: processEnv(klm(), {
            KLM_BLOB_CACHE_DIR: await mkdtemp(path.join(tmpdir(), 'klm-blobs-')),
            KLM_METRICS_PORT: String(port),
            KLM_MAINTENANCE_POLICY: policies[i],
          }),
          stdio: ['ignore', 'ignore', 'inherit'],
        }),
      );
    }
    const ready = [uniqueName('kyma'), uniqueName('kyma'), uniqueName('kyma')];
    for (const name of ready)
      await klm().kube.create(
        kymaObject(ns, name, { channel: 'regular', modules: [{ name: 'greeter' }, { name: 'counter' }] }),
      );
    const broken = uniqueName('kyma');
    await createKymaWithBrokenSecret(klm(), broken, [{ name: 'greeter' }]);
    for (const name of ready) await kymaInState(klm(), name, 'Ready', 120_000);
    await kymaInState(klm(), broken, 'Error', 120_000);

    const bridge = await serveMetrics(0);
    try {
      // Both workers serve /metrics, the installs ran on them (Temporal spreads the tasks; which
      // worker got which is up to it), and neither exports a state series.
      const ran = /klm_activity_duration_seconds_count\{activity="installModule",outcome="ok"\} [1-9]/;
      const texts = await Promise.all(ports.map(scrape));
      expect(texts.some((t) => ran.test(t))).toBe(true);
      const fleetGauges = [
        'lifecycle_mgr_kyma_state{',
        'lifecycle_mgr_module_state{',
        'lifecycle_mgr_mandatory_module_state{',
        'lifecycle_mgr_mandatory_modules{',
      ];
      for (const port of ports) {
        const text = await scrape(port);
        expect(text.split('\n').filter((l) => fleetGauges.some((g) => l.startsWith(g)))).toEqual([]);
        // Upstream's reconcile_duration_seconds: a series only for a Manifest whose install took a minute or more.
        expect(text).toContain('# TYPE reconcile_duration_seconds gauge');
        for (const line of text.split('\n').filter((l) => l.startsWith('reconcile_duration_seconds{')))
          expect(Number(line.split(' ')[1]), line).toBeGreaterThanOrEqual(60);
      }
      // Each worker read its maintenance-window policy as it started, as upstream reads its file.
      expect(await scrape(ports[0]!)).toContain('\nlifecycle_mgr_maintenance_window_config_read_success 1\n');
      expect(await scrape(ports[1]!)).toContain('\nlifecycle_mgr_maintenance_window_config_read_success 0\n');
      expect(await scrape(bridge.port)).toContain(`lifecycle_mgr_mandatory_modules{kyma_namespace="${ns}"} 0`);
      const all = [await scrape(bridge.port), ...(await Promise.all(ports.map(scrape)))].join('\n');
      expect(onesByState(all, 'lifecycle_mgr_kyma_state', ns)).toEqual({ Ready: 3, Error: 1 });
      expect(onesByState(all, 'lifecycle_mgr_module_state', ns)).toEqual({ Ready: 6, Error: 1 });

      await klm().kube.delete('operator.kyma-project.io/v1beta2', 'Kyma', ready[0]!, ns);
      await eventually(
        'the Kyma to be gone',
        async () => (await getKyma(klm(), ready[0]!)) === undefined || undefined,
        120_000,
      );
      const after = await eventually('its series to be gone', async () => {
        const t = await scrape(bridge.port);
        return t.includes(`kyma_name="${ready[0]}"`) ? undefined : t;
      });
      expect(onesByState(after, 'lifecycle_mgr_kyma_state', ns)).toEqual({ Ready: 2, Error: 1 });
      expect(onesByState(after, 'lifecycle_mgr_module_state', ns)).toEqual({ Ready: 4, Error: 1 });
    } finally {
      await bridge.close();
    }
  });
});

describe("the worker's log with a failing Kyma", () => {
  // Failed installs are tried again after 5 s, doubling: several rounds of attempts in a minute.
  const klm = useKlm({ worker: false, settings: { installRetryMs: 5000 } });
  let worker: StartedProcess | undefined;
  afterAll(() => worker?.proc.kill('SIGKILL'));

  /** A counter of the worker's /metrics, 0 while it has no series. */
  async function count(port: number, series: string): Promise<number> {
    const line = (await scrape(port)).split('\n').find((l) => l.startsWith(`${series} `));
    return line ? Number(line.split(' ')[1]) : 0;
  }

  it('says each failure once, with its reason and when it is tried again, not once per attempt', async () => {
    const port = await freePort();
    // The modules' registry does not answer (retried by Temporal, 5 attempts a round), and the
    // Kyma's kubeconfig names an API server that refuses connections (permanent: retried by the workflow).
    worker = startNode(
      ['--import', 'tsx', 'src/workers/main.ts'],
      processEnv(klm(), {
        KLM_BLOB_CACHE_DIR: await mkdtemp(path.join(tmpdir(), 'klm-blobs-')),
        KLM_METRICS_PORT: String(port),
        KLM_OCI_REGISTRY_HOST: `127.0.0.1:${await freePort()}`,
        KLM_INSTALL_RETRY: '5s',
        KLM_DRIFT_INTERVAL: '5m',
      }),
    );
    await eventually(
      'the worker to poll',
      () => Promise.resolve(worker!.out().includes('worker: task queue') || undefined),
      60_000,
    );
    const from = worker.out().length;
    const name = uniqueName('kyma');
    const kubeconfig = parse(await readFile(stackInfo().kubeconfig, 'utf8')) as {
      clusters: { cluster: { server: string } }[];
    };
    kubeconfig.clusters[0]!.cluster.server = 'https://127.0.0.1:1';
    await klm().kube.create(kubeconfigSecret(klm().namespace, name, stringify(kubeconfig)));
    await klm().kube.create(kymaObject(klm().namespace, name, { channel: 'regular', modules: [{ name: 'greeter' }] }));
    await kymaInState(klm(), name, 'Error');

    // It is tried again and again: the worker's metrics count the failed attempts, ten installs and
    // three runtime syncs at least (about 40 s), while the log below says each failure once.
    const attempts = async () => ({
      installs: await count(
        port,
        'lifecycle_mgr_requeue_reason_total{requeue_reason="RegistryUnavailable",requeue_type="unexpected",activity="installModule"}',
      ),
      syncs: await count(
        port,
        'lifecycle_mgr_requeue_reason_total{requeue_reason="TargetClusterUnreachable",requeue_type="intended",activity="syncRuntimeKyma"}',
      ),
    });
    let seen = { installs: 0, syncs: 0 };
    await eventually(
      'ten failed install attempts and three failed runtime syncs',
      async () => {
        seen = await attempts();
        return (seen.installs >= 10 && seen.syncs >= 3) || undefined;
      },
      90_000,
    ).catch((err: Error) => {
      throw new Error(`${err.message}; counted: ${JSON.stringify(seen)}`);
    });

    const printed = worker.out().slice(from).split('\n').filter(Boolean);
    const about = printed.filter((l) => l.includes(name));
    // Few lines, one entry each: ten attempts and more are a handful of lines, not one each.
    expect(printed.length, `${printed.length} lines, the first: ${printed.slice(0, 8).join('\n')}`).toBeLessThanOrEqual(
      5,
    );
    for (const line of printed) expect(line).toMatch(/^\d{4}-\d\d-\d\dT[\d:.]+Z (TRACE|DEBUG|INFO|WARN|ERROR) /);
    const install = about.filter((l) => l.includes(': installModule failed'));
    const sync = about.filter((l) => l.includes(': syncRuntimeKyma failed'));
    expect(install, about.join('\n')).toHaveLength(1);
    expect(sync, about.join('\n')).toHaveLength(1);
    expect(about.length, about.join('\n')).toBeLessThanOrEqual(3);
    // Which Kyma and module, why, and when it is tried again.
    expect(install[0]).toContain(
      `WARN kyma/${klm().namespace}/${name} (module greeter): installModule failed (RegistryUnavailable): `,
    );
    expect(install[0]).toContain(
      'attempt 1 of 5, next in 1s; after the last, the workflow shows the failure and tries again after 5s, doubling up to 5m, or at the next change',
    );
    expect(sync[0]).toContain(
      `WARN kyma/${klm().namespace}/${name}: syncRuntimeKyma failed (TargetClusterUnreachable): the target cluster of Kyma ${klm().namespace}/${name} `,
    );
    expect(sync[0]).toContain(
      'not retried by Temporal (permanent); the workflow shows the failure and tries again after 5s',
    );
  }, 150_000);
});
