// The runtime side, proven on three managed clusters of the test's own (real API servers): each
// gets the runtime Kyma kyma-system/default and the module catalog it may see; its users add
// and remove modules there; the control-plane Kyma's spec stays as the operator wrote it. The
// drift timer is ten minutes, far beyond every wait here: everything below is watch-driven.
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { kubeconfigSecret } from '../../bench/fleet';
import type { Kyma } from '../../src/api/kyma';
import { API_VERSION, type KubeObject } from '../../src/api/shared';
import { pkiIn } from '../../src/localstack/pki';
import { klmCli } from '../support/cli';
import { eventually, getKyma, kymaInState, kymaObject, kymaWorkflowId, useKlm } from '../support/klm';
import { testModule, type TestModule } from '../support/modules';
import { stackInfo, uniqueName } from '../support/stack';
import { startOwnCluster, type OwnCluster } from '../support/target-cluster';

/** The greeter without its Deployment: the cluster runs no controllers, the sample manager makes its CR Ready. */
const withoutWorkload = (manifest: string) =>
  manifest
    .split(/^---$/m)
    .filter((doc) => !/^kind: Deployment/m.test(doc))
    .join('---');
const CRDS = [
  'kymas.operator.kyma-project.io',
  'moduletemplates.operator.kyma-project.io',
  'modulereleasemetas.operator.kyma-project.io',
];

let clusters: OwnCluster[] = [];

beforeAll(async () => {
  clusters = await Promise.all([0, 1, 2].map(() => startOwnCluster()));
}, 120_000);

afterAll(async () => {
  await Promise.all(clusters.map((c) => c.stop()));
});

describe('the runtime side of Kymas in three managed clusters', () => {
  const klm = useKlm({ settings: { driftIntervalMs: 10 * 60_000 } });
  let greeter: TestModule;
  let extra: TestModule;
  let preview: TestModule;
  const kymas = [uniqueName('kyma'), uniqueName('kyma'), uniqueName('kyma')];
  const runtimeKyma = (i: number) =>
    clusters[i]!.client.get<Kyma & KubeObject>(API_VERSION, 'Kyma', 'default', 'kyma-system');
  const templatesIn = async (i: number) =>
    (await clusters[i]!.client.list(API_VERSION, 'ModuleTemplate', { namespace: 'kyma-system' })).items
      .map((t) => t.metadata.name)
      .sort();
  /**
   * What each catalog sync of a Kyma's workflow wrote and removed, from its history: an activity
   * of its own, or the one of the installs it went along with.
   */
  async function catalogSyncs(kyma: string): Promise<{ applied: number; deleted: number }[]> {
    const history = await klm().client.workflow.getHandle(kymaWorkflowId(klm().namespace, kyma)).fetchHistory();
    const scheduled = new Map<string, string>();
    const results: { applied: number; deleted: number }[] = [];
    const json = (p: { payloads?: { data?: Uint8Array | null }[] | null } | null | undefined) =>
      JSON.parse(Buffer.from(p!.payloads![0]!.data!).toString('utf8')) as Record<string, unknown>;
    for (const e of history.events ?? []) {
      const type = e.activityTaskScheduledEventAttributes?.activityType?.name;
      if (type === 'syncRuntimeCatalog' || type === 'installModules') scheduled.set(String(e.eventId), type);
      const done = e.activityTaskCompletedEventAttributes;
      const which = done ? scheduled.get(String(done.scheduledEventId)) : undefined;
      if (!which) continue;
      const result = json(done!.result);
      const sync = which === 'syncRuntimeCatalog' ? result : result.catalog;
      if (sync) results.push(sync as { applied: number; deleted: number });
    }
    return results;
  }
  const entry = async (i: number, module: string) =>
    (await runtimeKyma(i))?.status?.modules?.find((m) => m.name === module);

  beforeAll(async () => {
    [greeter, extra, preview] = [await testModule(klm()), await testModule(klm()), await testModule(klm())];
    for (const m of [greeter, extra, preview]) {
      for (const c of clusters) c.manager.watch(m.apiVersion, m.kind);
      await m.publish('1.0.0', undefined, withoutWorkload);
      await m.channels({ regular: '1.0.0' });
    }
    await klm().kube.mergePatch(API_VERSION, 'ModuleTemplate', `${preview.name}-1.0.0`, klm().namespace, {
      metadata: { labels: { 'operator.kyma-project.io/beta': 'true' } },
    });
    const pki = pkiIn(stackInfo().pkiDir);
    for (const [i, name] of kymas.entries()) {
      await klm().kube.create(
        kubeconfigSecret(klm().namespace, name, await clusters[i]!.certKubeconfig(pki.adminCert, pki.adminKey)),
      );
      // The second Kyma may see beta modules.
      const kyma = kymaObject(klm().namespace, name, { channel: 'regular', modules: [{ name: greeter.name }] });
      if (i === 1) kyma.metadata.labels = { 'operator.kyma-project.io/beta': 'true' };
      await klm().kube.create(kyma);
    }
  }, 120_000);

  it("bootstraps each runtime: the CRDs, the runtime Kyma with the control plane's modules and their status as its users read it", async () => {
    for (const [i] of kymas.entries()) {
      const k = await eventually(
        `the runtime Kyma of cluster ${i} to show ${greeter.name} Ready`,
        async () => {
          const r = await runtimeKyma(i);
          return r?.status?.state === 'Ready' &&
            r.status.modules?.some((m) => m.name === greeter.name && m.state === 'Ready')
            ? r
            : undefined;
        },
        90_000,
      );
      expect(k.spec.channel).toBe('regular');
      expect(k.spec.modules?.map((m) => m.name)).toEqual([greeter.name]);
      // The fields the Kyma CLI and the dashboard read.
      expect(k.status?.modules?.[0]).toMatchObject({
        name: greeter.name,
        version: '1.0.0',
        channel: 'regular',
        state: 'Ready',
        template: { kind: 'ModuleTemplate', metadata: { name: `${greeter.name}-1.0.0`, namespace: 'kyma-system' } },
        resource: { kind: greeter.kind, metadata: { name: 'default' } },
      });
      for (const crd of CRDS)
        expect(
          await clusters[i]!.client.get('apiextensions.k8s.io/v1', 'CustomResourceDefinition', crd),
          crd,
        ).toBeDefined();
    }
  }, 200_000);

  it('syncs the catalog into each runtime, the beta module only where the Kyma is labelled beta', async () => {
    const all = [greeter, extra].map((m) => `${m.name}-1.0.0`);
    for (const i of [0, 1, 2])
      await eventually(`the catalog in cluster ${i}`, async () => {
        const have = await templatesIn(i);
        return all.every((t) => have.includes(t)) || undefined;
      });
    await eventually(
      'the beta template in the beta cluster',
      async () => (await templatesIn(1)).includes(`${preview.name}-1.0.0`) || undefined,
    );
    for (const i of [0, 2]) expect(await templatesIn(i)).not.toContain(`${preview.name}-1.0.0`);
    const metas = (
      await clusters[0]!.client.list(API_VERSION, 'ModuleReleaseMeta', { namespace: 'kyma-system' })
    ).items.map((m) => m.metadata.name);
    expect(metas).toEqual(expect.arrayContaining([greeter.name, extra.name]));
    expect(metas).not.toContain(preview.name);
    const copy = await clusters[0]!.client.get<KubeObject & { spec: { moduleName?: string } }>(
      API_VERSION,
      'ModuleTemplate',
      `${greeter.name}-1.0.0`,
      'kyma-system',
    );
    expect(copy?.spec.moduleName).toBe(greeter.name);
  });

  it("installs a module its users add in the runtime Kyma, and removes it when they remove it; the control-plane Kyma's spec stays", async () => {
    await clusters[0]!.client.mergePatch(API_VERSION, 'Kyma', 'default', 'kyma-system', {
      spec: { modules: [{ name: greeter.name }, { name: extra.name }] },
    });
    const added = await eventually('the added module Ready in the runtime status', async () => {
      const e = await entry(0, extra.name);
      return e?.state === 'Ready' ? e : undefined;
    });
    expect(added.version).toBe('1.0.0');
    const cr = added.resource!.metadata!;
    expect(await clusters[0]!.client.get(extra.apiVersion, extra.kind, cr.name!, cr.namespace)).toBeDefined();
    expect((await getKyma(klm(), kymas[0]!))?.spec.modules?.map((m) => m.name)).toEqual([greeter.name]);
    // The other runtimes are untouched.
    expect(await entry(1, extra.name)).toBeUndefined();

    await clusters[0]!.client.mergePatch(API_VERSION, 'Kyma', 'default', 'kyma-system', {
      spec: { modules: [{ name: greeter.name }] },
    });
    await eventually(
      'the removed module to leave the runtime status',
      async () =>
        ((await entry(0, extra.name)) === undefined && (await runtimeKyma(0))?.status?.state === 'Ready') || undefined,
    );
    await eventually(
      'its CR to be gone',
      async () =>
        (await clusters[0]!.client.get(extra.apiVersion, extra.kind, cr.name!, cr.namespace)) === undefined ||
        undefined,
    );
    expect((await getKyma(klm(), kymas[0]!))?.spec.modules?.map((m) => m.name)).toEqual([greeter.name]);
  }, 150_000);

  it("serves a runtime user's klm as upstream's Kyma CLI: the catalog synced there, a module added to the runtime Kyma and listed Ready", async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'runtime-user-'));
    const kubeconfig = path.join(dir, 'kubeconfig');
    const pki = pkiIn(stackInfo().pkiDir);
    await writeFile(kubeconfig, await clusters[1]!.certKubeconfig(pki.adminCert, pki.adminKey));
    const catalog = await klmCli(['module', 'catalog', '--kubeconfig', kubeconfig, '-o', 'json']);
    expect(catalog.code, catalog.stderr).toBe(0);
    const names = (JSON.parse(catalog.stdout) as { name: string }[]).map((e) => e.name);
    expect(names).toEqual(expect.arrayContaining([greeter.name, extra.name, preview.name]));
    const add = await klmCli([
      'module',
      'add',
      extra.name,
      '--kubeconfig',
      kubeconfig,
      '--default-config-cr',
      '--wait',
      '--timeout',
      '2m',
    ]);
    expect(add.code, add.stderr).toBe(0);
    expect(add.stdout).toContain(`module ${extra.name} is Ready`);
    const list = await klmCli(['module', 'list', '--kubeconfig', kubeconfig, '-o', 'json']);
    expect(JSON.parse(list.stdout)).toContainEqual(
      expect.objectContaining({
        name: extra.name,
        installedVersion: '1.0.0',
        crPolicy: 'CreateAndDelete',
        moduleStatus: 'Ready',
      }),
    );
    expect((await getKyma(klm(), kymas[1]!))?.spec.modules?.map((m) => m.name)).toEqual([greeter.name]);
  }, 150_000);

  it("tells the runtime's users what is wrong with an edit: an unknown module or channel in the status, a module listed twice refused", async () => {
    await clusters[2]!.client.mergePatch(API_VERSION, 'Kyma', 'default', 'kyma-system', {
      spec: { modules: [{ name: greeter.name }, { name: 'nosuchmodule' }] },
    });
    const bad = await eventually('the unknown module in the runtime status', async () => {
      const e = await entry(2, 'nosuchmodule');
      return e?.state === 'Error' ? e : undefined;
    });
    expect(bad.message).toMatch(/"nosuchmodule" is unknown/);
    expect((await runtimeKyma(2))?.status?.state).toBe('Error');
    await clusters[2]!.client.mergePatch(API_VERSION, 'Kyma', 'default', 'kyma-system', {
      spec: { modules: [{ name: greeter.name, channel: 'nosuch' }] },
    });
    const channel = await eventually('the unknown channel in the runtime status', async () => {
      const e = await entry(2, greeter.name);
      return e?.state === 'Error' ? e : undefined;
    });
    expect(channel.message).toMatch(/no version for channel "nosuch"/);
    await expect(
      clusters[2]!.client.mergePatch(API_VERSION, 'Kyma', 'default', 'kyma-system', {
        spec: { modules: [{ name: greeter.name }, { name: greeter.name, channel: 'fast' }] },
      }),
    ).rejects.toThrow(/Duplicate value/);
    await clusters[2]!.client.mergePatch(API_VERSION, 'Kyma', 'default', 'kyma-system', {
      spec: { modules: [{ name: greeter.name }] },
    });
    await eventually(
      'the runtime Kyma Ready again',
      async () => (await runtimeKyma(2))?.status?.state === 'Ready' || undefined,
    );
  });

  it(
    "follows the control plane's catalog: a new version reaches every runtime with one write " +
      'each, a runtime that loses the beta label loses the beta module',
    async () => {
      const before = await Promise.all(kymas.map((k) => catalogSyncs(k)));
      await greeter.publish('1.1.0', undefined, withoutWorkload);
      for (const i of [0, 1, 2])
        await eventually(
          `the new template in cluster ${i}`,
          async () => (await templatesIn(i)).includes(`${greeter.name}-1.1.0`) || undefined,
        );
      // What the syncs wrote since: the new template, once per runtime, nothing else.
      for (const [i, k] of kymas.entries()) {
        const since = (await catalogSyncs(k)).slice(before[i]!.length);
        expect(
          since.reduce((n, r) => n + r.applied, 0),
          `writes into runtime ${i}`,
        ).toBe(1);
        expect(since.reduce((n, r) => n + r.deleted, 0)).toBe(0);
      }
      await klm().kube.mergePatch(API_VERSION, 'Kyma', kymas[1]!, klm().namespace, {
        metadata: { labels: { 'operator.kyma-project.io/beta': null } },
      });
      await eventually(
        'the beta template to leave the runtime',
        async () => !(await templatesIn(1)).includes(`${preview.name}-1.0.0`) || undefined,
      );
      expect(
        (await clusters[1]!.client.list(API_VERSION, 'ModuleReleaseMeta', { namespace: 'kyma-system' })).items.map(
          (m) => m.metadata.name,
        ),
      ).not.toContain(preview.name);
    },
  );

  it('brings a runtime Kyma deleted by hand back, with the modules it asked for', async () => {
    await clusters[0]!.client.mergePatch(API_VERSION, 'Kyma', 'default', 'kyma-system', {
      spec: { modules: [{ name: greeter.name }, { name: extra.name }] },
    });
    await eventually(
      'the added module Ready',
      async () => (await entry(0, extra.name))?.state === 'Ready' || undefined,
    );
    const before = (await runtimeKyma(0))!.metadata.uid;
    await clusters[0]!.client.delete(API_VERSION, 'Kyma', 'default', 'kyma-system');
    const back = await eventually('the runtime Kyma to come back', async () => {
      const k = await runtimeKyma(0);
      return k && k.metadata.uid !== before && k.status?.state === 'Ready' ? k : undefined;
    });
    expect(back.spec.modules?.map((m) => m.name).sort()).toEqual([greeter.name, extra.name].sort());
    expect(back.status?.modules?.map((m) => m.name).sort()).toEqual([greeter.name, extra.name].sort());
  });

  it("leaves nothing of ours in the runtime when the control-plane Kyma is deleted, and the runtime's own objects as they were", async () => {
    const own = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'users-own', namespace: 'kyma-system' },
      data: { a: 'b' },
    };
    await clusters[2]!.client.create(own);
    const cr = (await entry(2, greeter.name))!.resource!.metadata!;
    await klm().kube.delete(API_VERSION, 'Kyma', kymas[2]!, klm().namespace);
    await eventually(
      'the Kyma to be gone',
      async () => (await getKyma(klm(), kymas[2]!)) === undefined || undefined,
      90_000,
    );
    // A CRD goes once the API server has removed its objects (the catalog's copies): moments later.
    for (const crd of CRDS)
      await eventually(
        `${crd} to be gone`,
        async () =>
          (await clusters[2]!.client.get('apiextensions.k8s.io/v1', 'CustomResourceDefinition', crd)) === undefined ||
          undefined,
        30_000,
      );
    expect(await clusters[2]!.client.get(greeter.apiVersion, greeter.kind, cr.name!, cr.namespace)).toBeUndefined();
    expect(await clusters[2]!.client.get('v1', 'ConfigMap', 'users-own', 'kyma-system')).toBeDefined();
    // The other runtimes keep theirs.
    expect(await runtimeKyma(0)).toBeDefined();
    expect(await kymaInState(klm(), kymas[0]!, 'Ready')).toBeDefined();
  }, 150_000);
});
