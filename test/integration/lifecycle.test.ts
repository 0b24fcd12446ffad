import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import type { Manifest } from '../../src/api/manifest';
import { manifestName } from '../../src/api/names';
import type { Kyma } from '../../src/api/kyma';
import { API_VERSION, KYMA_FINALIZER, LABELS } from '../../src/api/shared';
import type { KubeObject } from '../../src/api/shared';
import { eventually, getKyma, kymaInState, kymaObject, useKlm, type Klm } from '../support/klm';
import { testModule, type TestModule } from '../support/modules';
import { stackInfo, uniqueName } from '../support/stack';

const CONFIG_MAP = (name: string) => `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\ndata: {a: b}`;

/** The reasons and messages of the Events on a Kyma. */
async function kymaEvents(klm: Klm, kyma: string): Promise<{ reason?: string; message?: string }[]> {
  const events = await klm.kube.list('v1', 'Event', { namespace: klm.namespace });
  return events.items
    .map((e) => e as { reason?: string; message?: string; involvedObject?: { name?: string } })
    .filter((e) => e.involvedObject?.name === kyma);
}

async function moduleStatus(klm: Klm, kyma: string, module: string) {
  return (await getKyma(klm, kyma))?.status?.modules?.find((m) => m.name === module);
}

async function moduleInState(klm: Klm, kyma: string, module: string, state: string, version?: string) {
  return await eventually(`${module} to be ${state}${version ? ` at ${version}` : ''}`, async () => {
    const m = await moduleStatus(klm, kyma, module);
    return m?.state === state && (!version || m.version === version) ? m : undefined;
  });
}

describe('upgrades', () => {
  const klm = useKlm();

  it('upgrades by channel switch', async () => {
    const mod = await testModule(klm());
    await mod.publish('1.0.0');
    await mod.publish('1.1.0', CONFIG_MAP('added-in-110'));
    await mod.channels({ regular: '1.0.0', fast: '1.1.0' });
    const name = uniqueName('kyma');
    await klm().kube.create(kymaObject(klm().namespace, name, { channel: 'regular', modules: [{ name: mod.name }] }));
    await moduleInState(klm(), name, mod.name, 'Ready', '1.0.0');
    await klm().kube.mergePatch(API_VERSION, 'Kyma', name, klm().namespace, { spec: { channel: 'fast' } });
    const m = await moduleInState(klm(), name, mod.name, 'Ready', '1.1.0');
    expect(m.template?.metadata?.name).toBe(`${mod.name}-1.1.0`);
    expect(await klm().kube.get('v1', 'ConfigMap', 'added-in-110', `${name}-system`)).toBeDefined();
    const manifest = await klm().kube.get<Manifest & KubeObject>(
      API_VERSION,
      'Manifest',
      manifestName(name, mod.name),
      klm().namespace,
    );
    expect(manifest?.spec.version).toBe('1.1.0');
  });

  it('refuses a downgrade and keeps the newer version', async () => {
    const mod = await testModule(klm());
    await mod.publish('1.0.0');
    await mod.publish('1.1.0', CONFIG_MAP('only-in-110'));
    await mod.channels({ regular: '1.0.0', fast: '1.1.0' });
    const name = uniqueName('kyma');
    await klm().kube.create(kymaObject(klm().namespace, name, { channel: 'fast', modules: [{ name: mod.name }] }));
    await moduleInState(klm(), name, mod.name, 'Ready', '1.1.0');
    await klm().kube.mergePatch(API_VERSION, 'Kyma', name, klm().namespace, { spec: { channel: 'regular' } });
    const m = await moduleInState(klm(), name, mod.name, 'Warning');
    expect(m.version).toBe('1.1.0');
    expect(m.message).toBe(
      'version 1.0.0 is lower than the installed 1.1.0; keeping 1.1.0 (modules are never downgraded)',
    );
    expect(await klm().kube.get('v1', 'ConfigMap', 'only-in-110', `${name}-system`)).toBeDefined();
  });

  it('upgrades through a ModuleReleaseMeta change and prunes what the new version dropped', async () => {
    const mod = await testModule(klm());
    await mod.publish('1.0.0', CONFIG_MAP('dropped-in-200'));
    await mod.publish('2.0.0');
    await mod.channels({ regular: '1.0.0' });
    const name = uniqueName('kyma');
    await klm().kube.create(kymaObject(klm().namespace, name, { channel: 'regular', modules: [{ name: mod.name }] }));
    await moduleInState(klm(), name, mod.name, 'Ready', '1.0.0');
    const defaultCr = await klm().kube.get(mod.apiVersion, mod.kind, 'default', `${name}-system`);
    expect(await klm().kube.get('v1', 'ConfigMap', 'dropped-in-200', `${name}-system`)).toBeDefined();
    await mod.channels({ regular: '2.0.0' });
    await moduleInState(klm(), name, mod.name, 'Ready', '2.0.0');
    await eventually(
      'the dropped ConfigMap to be pruned',
      async () =>
        (await klm().kube.get('v1', 'ConfigMap', 'dropped-in-200', `${name}-system`)) === undefined || undefined,
    );
    // The default CR was not re-created or re-applied.
    const after = await klm().kube.get(mod.apiVersion, mod.kind, 'default', `${name}-system`);
    expect(after?.metadata.uid).toBe(defaultCr?.metadata.uid);
    expect(await klm().kube.get('apps/v1', 'Deployment', `${mod.name}-manager`, `${name}-system`)).toBeDefined();
  });
});

describe('module removal', () => {
  const klm = useKlm();

  /** A Kyma with counter and a module of its own (`extra`: YAML appended to its manifest), in `state`. */
  async function installed(
    policy: 'CreateAndDelete' | 'Ignore' = 'CreateAndDelete',
    scope?: 'Cluster',
    extra?: (mod: TestModule) => string,
    state = 'Ready',
  ) {
    const mod = await testModule(klm(), { scope });
    await mod.publish('1.0.0', extra?.(mod));
    await mod.channels({ regular: '1.0.0' });
    const name = uniqueName('kyma');
    await klm().kube.create(
      kymaObject(klm().namespace, name, {
        channel: 'regular',
        modules: [{ name: 'counter' }, { name: mod.name, customResourcePolicy: policy }],
      }),
    );
    await kymaInState(klm(), name, state);
    return { mod, name, ns: `${name}-system` };
  }

  async function removeFromSpec(name: string) {
    await klm().kube.mergePatch(API_VERSION, 'Kyma', name, klm().namespace, {
      spec: { modules: [{ name: 'counter' }] },
    });
  }

  async function gone(name: string, mod: { name: string }) {
    await eventually('the module to leave the status', async () => {
      const k = await getKyma(klm(), name);
      return k?.status?.state === 'Ready' && !k.status.modules?.some((m) => m.name === mod.name) ? true : undefined;
    });
    expect(
      await klm().kube.get(API_VERSION, 'Manifest', manifestName(name, mod.name), klm().namespace),
    ).toBeUndefined();
    expect(await klm().kube.get('apps/v1', 'Deployment', `${mod.name}-manager`, `${name}-system`)).toBeUndefined();
  }

  it('removes a module with only its default CR left (CreateAndDelete)', async () => {
    const { mod, name, ns } = await installed();
    expect(await klm().kube.get(mod.apiVersion, mod.kind, 'default', ns)).toBeDefined();
    await removeFromSpec(name);
    await gone(name, mod);
    expect(await klm().kube.get(mod.apiVersion, mod.kind, 'default', ns)).toBeUndefined();
    expect(
      await klm().kube.get(
        'apiextensions.k8s.io/v1',
        'CustomResourceDefinition',
        `${mod.name}s.${mod.name}.example.io`,
      ),
    ).toBeUndefined();
  });

  it('removes a module under Ignore, where no default CR was created', async () => {
    const { mod, name, ns } = await installed('Ignore');
    expect(await klm().kube.get(mod.apiVersion, mod.kind, 'default', ns)).toBeUndefined();
    await removeFromSpec(name);
    await gone(name, mod);
  });

  it('is blocked by a CR in another namespace until the user deletes it', async () => {
    const { mod, name } = await installed();
    await klm().kube.create({
      apiVersion: mod.apiVersion,
      kind: mod.kind,
      metadata: { name: 'users-own', namespace: klm().namespace },
      spec: {},
    });
    await removeFromSpec(name);
    // As upstream's Manifest: Warning, naming what blocks it.
    const m = await moduleInState(klm(), name, mod.name, 'Warning');
    await eventually(
      'the blocking message',
      async () =>
        (await moduleStatus(klm(), name, mod.name))?.message?.includes(
          `deletion blocked by 1 ${mod.kind} resource(s): ${mod.kind} ${klm().namespace}/users-own`,
        ) || undefined,
    );
    expect(m.state).toBe('Warning');
    // The Kyma says why it is not Ready: the blocked removal.
    expect((await getKyma(klm(), name))?.status?.state).toBe('Warning');
    const modules = (await getKyma(klm(), name))?.status?.conditions?.find((c) => c.type === 'Modules');
    expect(modules).toMatchObject({ status: 'False', reason: 'DeletionBlocked' });
    expect(modules?.message).toContain(`${mod.name}: deletion blocked by 1 ${mod.kind} resource(s)`);
    expect(await klm().kube.get('apps/v1', 'Deployment', `${mod.name}-manager`, `${name}-system`)).toBeDefined();
    await klm().kube.delete(mod.apiVersion, mod.kind, 'users-own', klm().namespace);
    await gone(name, mod);
  });

  it('is blocked by a cluster-scoped CR until the user deletes it', async () => {
    const { mod, name } = await installed('CreateAndDelete', 'Cluster');
    await klm().kube.create({
      apiVersion: mod.apiVersion,
      kind: mod.kind,
      metadata: { name: `${name}-extra` },
      spec: {},
    });
    await removeFromSpec(name);
    await eventually(
      'the blocking message',
      async () =>
        (await moduleStatus(klm(), name, mod.name))?.message?.includes(
          `deletion blocked by 1 ${mod.kind} resource(s): ${mod.kind} ${name}-extra`,
        ) || undefined,
    );
    await klm().kube.delete(mod.apiVersion, mod.kind, `${name}-extra`);
    await gone(name, mod);
  });

  it('under Ignore, is blocked by every CR of the kind, the default one too', async () => {
    const { mod, name, ns } = await installed('Ignore');
    await klm().kube.create({
      apiVersion: mod.apiVersion,
      kind: mod.kind,
      metadata: { name: 'default', namespace: ns },
      spec: {},
    });
    await removeFromSpec(name);
    await eventually(
      'the blocking message',
      async () =>
        (await moduleStatus(klm(), name, mod.name))?.message?.includes(`${mod.kind} ${ns}/default`) || undefined,
    );
    await klm().kube.delete(mod.apiVersion, mod.kind, 'default', ns);
    await gone(name, mod);
  });

  it('waits for a default CR with a finalizer of its own until it is really gone', async () => {
    const { mod, name, ns } = await installed();
    await klm().kube.mergePatch(mod.apiVersion, mod.kind, 'default', ns, {
      metadata: { finalizers: ['example.io/cleanup'] },
    });
    await removeFromSpec(name);
    await eventually(
      'the wait message',
      async () =>
        (await moduleStatus(klm(), name, mod.name))?.message?.includes('finalizers: example.io/cleanup') || undefined,
    );
    // The manager must still be running while its CR is finalized.
    expect(await klm().kube.get('apps/v1', 'Deployment', `${mod.name}-manager`, ns)).toBeDefined();
    await klm().kube.mergePatch(mod.apiVersion, mod.kind, 'default', ns, { metadata: { finalizers: null } });
    await gone(name, mod);
  });

  it('reports the module removed only once its CRD is really gone, saying meanwhile which one it waits for', async () => {
    const { mod, name } = await installed();
    const CRD = ['apiextensions.k8s.io/v1', 'CustomResourceDefinition', `${mod.name}s.${mod.name}.example.io`] as const;
    const finalizers = async () => (await klm().kube.get(...CRD))?.metadata.finalizers ?? [];
    // Another party holds the CRD's deletion (as a slow clean-up of its CRs would).
    await klm().kube.mergePatch(...CRD, undefined, {
      metadata: { finalizers: [...(await finalizers()), 'example.io/hold'] },
    });
    await removeFromSpec(name);
    await eventually(
      'the wait for the CRD',
      async () =>
        (await moduleStatus(klm(), name, mod.name))?.message?.includes(`CustomResourceDefinition ${CRD[2]}`) ||
        undefined,
    );
    expect((await klm().kube.get(...CRD))?.metadata.deletionTimestamp).toBeDefined();
    expect(await klm().kube.get(API_VERSION, 'Manifest', manifestName(name, mod.name), klm().namespace)).toBeDefined();
    await klm().kube.mergePatch(...CRD, undefined, {
      metadata: { finalizers: (await finalizers()).filter((f) => f !== 'example.io/hold') },
    });
    await gone(name, mod);
    expect(await klm().kube.get(...CRD)).toBeUndefined();
  });

  it("never deletes a namespace it found there: the user's data stays, and the namespace gets its own labels back", async () => {
    const users = uniqueName('users');
    await klm().kube.create({
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: users, labels: { team: 'a', app: 'users-own' }, annotations: { note: 'mine' } },
    });
    await klm().kube.create({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'user-data', namespace: users },
      data: { k: 'v' },
    });
    const before = (await klm().kube.get('v1', 'Namespace', users))!;
    // The module ships the namespace (with a label of its own over the user's) and a ConfigMap in it.
    const { mod, name } = await installed('CreateAndDelete', undefined, (m) =>
      [
        `apiVersion: v1\nkind: Namespace\nmetadata:\n  name: ${users}\n  labels: {app: ${m.name}}`,
        `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: module-data\n  namespace: ${users}\ndata: {a: b}`,
      ].join('\n---\n'),
    );
    const adopted = await klm().kube.get('v1', 'Namespace', users);
    expect(adopted?.metadata.labels).toMatchObject({ app: mod.name, [LABELS.managedBy]: 'klm-temporal' });
    await removeFromSpec(name);
    await gone(name, mod);
    const after = await klm().kube.get('v1', 'Namespace', users);
    expect(after?.metadata.uid).toBe(before.metadata.uid);
    expect(after?.metadata.deletionTimestamp).toBeUndefined();
    expect(after?.metadata.labels).toEqual(before.metadata.labels);
    expect(after?.metadata.annotations).toEqual(before.metadata.annotations);
    expect(await klm().kube.get('v1', 'ConfigMap', 'user-data', users)).toBeDefined();
    // What the module created in it goes.
    expect(await klm().kube.get('v1', 'ConfigMap', 'module-data', users)).toBeUndefined();
    expect(await kymaEvents(klm(), name)).toContainEqual(
      expect.objectContaining({
        reason: 'ObjectsLeftInPlace',
        message: expect.stringContaining(`Namespace ${users} was there before the module`) as unknown,
      }),
    );
  });

  it('leaves a system namespace the manifest ships alone, says so with a Warning, and installs and removes the rest', async () => {
    const before = (await klm().kube.get('v1', 'Namespace', 'kube-system'))!;
    const { mod, name } = await installed(
      'CreateAndDelete',
      undefined,
      (m) =>
        [
          'apiVersion: v1\nkind: Namespace\nmetadata:\n  name: kube-system',
          `apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\nmetadata:\n  name: ${m.name}-admin\n` +
            'roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: cluster-admin}\n' +
            `subjects: [{kind: ServiceAccount, name: ${m.name}-manager, namespace: kyma-system}]`,
        ].join('\n---\n'),
      'Warning',
    );
    const m = await moduleInState(klm(), name, mod.name, 'Warning');
    expect(m.message).toBe(
      'the manifest ships Namespace kube-system: system namespaces are left as they are (never labelled or deleted ' +
        'by the lifecycle manager); the rest of the module is installed and ready',
    );
    const untouched = await klm().kube.get('v1', 'Namespace', 'kube-system');
    expect(untouched?.metadata.labels).toEqual(before.metadata.labels);
    expect(untouched?.metadata.annotations).toEqual(before.metadata.annotations);
    expect(
      await klm().kube.get('rbac.authorization.k8s.io/v1', 'ClusterRoleBinding', `${mod.name}-admin`),
    ).toBeDefined();
    await removeFromSpec(name);
    await gone(name, mod);
    expect(
      await klm().kube.get('rbac.authorization.k8s.io/v1', 'ClusterRoleBinding', `${mod.name}-admin`),
    ).toBeUndefined();
    const after = await klm().kube.get('v1', 'Namespace', 'kube-system');
    expect(after?.metadata.deletionTimestamp).toBeUndefined();
    expect(after?.metadata.labels).toEqual(before.metadata.labels);
  });
});

describe('Kyma deletion', () => {
  // A CRD that cannot become Established fails its install soon.
  const klm = useKlm({ settings: { crdEstablishedTimeoutMs: 8000 } });

  it('removes every module, then the finalizer', async () => {
    // Modules of its own: the samples' kinds have CRs of other Kymas on this shared cluster,
    // which would (rightly) block their removal.
    const [mod, other] = [await testModule(klm()), await testModule(klm())];
    for (const m of [mod, other]) {
      await m.publish('1.0.0');
      await m.channels({ regular: '1.0.0' });
    }
    const name = uniqueName('kyma');
    await klm().kube.create(
      kymaObject(klm().namespace, name, { channel: 'regular', modules: [{ name: mod.name }, { name: other.name }] }),
    );
    const kyma = await kymaInState(klm(), name, 'Ready');
    expect(kyma.metadata.finalizers).toContain(KYMA_FINALIZER);
    await klm().kube.delete(API_VERSION, 'Kyma', name, klm().namespace);
    await eventually('the Kyma to be gone', async () => (await getKyma(klm(), name)) === undefined || undefined);
    expect(await klm().kube.get(mod.apiVersion, mod.kind, 'default', `${name}-system`)).toBeUndefined();
    expect(await klm().kube.get('apps/v1', 'Deployment', `${mod.name}-manager`, `${name}-system`)).toBeUndefined();
    expect(await klm().kube.get('apps/v1', 'Deployment', `${other.name}-manager`, `${name}-system`)).toBeUndefined();
    for (const m of [mod.name, other.name])
      expect(await klm().kube.get(API_VERSION, 'Manifest', manifestName(name, m), klm().namespace)).toBeUndefined();
    const events = await klm().kube.list('v1', 'Event', { namespace: klm().namespace });
    const reasons = events.items
      .filter((e) => (e as { involvedObject?: { name?: string } }).involvedObject?.name === name)
      .map((e) => (e as { reason?: string }).reason);
    expect(reasons).toEqual(expect.arrayContaining(['ModuleInstalling', 'Deleting', 'ModuleRemoving', 'Deleted']));
  });

  describe('in the middle of an install, leaves nothing the install applied', () => {
    const CRD = 'apiextensions.k8s.io/v1';
    /** A module of its own that also ships a namespace and a ConfigMap in it (`more`: further YAML documents). */
    async function published(more: string[] = []) {
      const mod = await testModule(klm());
      const own = `apiVersion: v1\nkind: Namespace\nmetadata:\n  name: ${mod.name}-own`;
      const data = `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: data\n  namespace: ${mod.name}-own\ndata: {a: b}`;
      await mod.publish('1.0.0', [own, data, ...more].join('\n---\n'));
      await mod.channels({ regular: '1.0.0' });
      return mod;
    }

    async function deleteKyma(name: string) {
      await klm().kube.delete(API_VERSION, 'Kyma', name, klm().namespace);
      await eventually(
        'the Kyma to be gone',
        async () => (await getKyma(klm(), name)) === undefined || undefined,
        90_000,
      );
    }

    /**
     * Object by object: none of what the module's manifest ships, nor its default CR or Manifest,
     * is left; one being deleted (a namespace or CRD the API server still finalizes) is going.
     */
    async function nothingLeft(name: string, mod: TestModule) {
      const objects: [string, string, string, string?][] = [
        [CRD, 'CustomResourceDefinition', `${mod.name}s.${mod.name}.example.io`],
        ['v1', 'Namespace', `${mod.name}-own`],
        ['v1', 'ConfigMap', 'data', `${mod.name}-own`],
        ['v1', 'ServiceAccount', `${mod.name}-manager`, `${name}-system`],
        ['rbac.authorization.k8s.io/v1', 'ClusterRole', `${mod.name}-manager`],
        ['rbac.authorization.k8s.io/v1', 'ClusterRoleBinding', `${mod.name}-manager`],
        ['apps/v1', 'Deployment', `${mod.name}-manager`, `${name}-system`],
        [mod.apiVersion, mod.kind, 'default', `${name}-system`],
        [API_VERSION, 'Manifest', manifestName(name, mod.name), klm().namespace],
      ];
      const left: string[] = [];
      for (const [apiVersion, kind, n, ns] of objects) {
        const o = await klm().kube.get(apiVersion, kind, n, ns);
        if (o && !o.metadata.deletionTimestamp) left.push(`${kind} ${ns ? `${ns}/` : ''}${n}`);
      }
      expect(left).toEqual([]);
    }

    it('before the first apply', async () => {
      const mod = await published();
      const name = uniqueName('kyma');
      await klm().kube.create(kymaObject(klm().namespace, name, { channel: 'regular', modules: [{ name: mod.name }] }));
      // As soon as its workflow has taken it (the finalizer), before its module's install could apply anything.
      await eventually('the finalizer', async () => (await getKyma(klm(), name))?.metadata.finalizers?.length);
      await deleteKyma(name);
      await nothingLeft(name, mod);
    });

    it('after an apply that stopped between objects (one of a kind the cluster does not serve)', async () => {
      const mod = await published(['apiVersion: nothere.example.io/v1\nkind: Nothing\nmetadata:\n  name: x']);
      const name = uniqueName('kyma');
      await klm().kube.create(kymaObject(klm().namespace, name, { channel: 'regular', modules: [{ name: mod.name }] }));
      const failed = await moduleInState(klm(), name, mod.name, 'Error');
      expect(failed.message).toContain('does not serve Nothing');
      // The apply got as far as the CRD, the namespaces and the objects before the refused one.
      expect(await klm().kube.get('v1', 'ConfigMap', 'data', `${mod.name}-own`)).toBeDefined();
      await deleteKyma(name);
      await nothingLeft(name, mod);
    });

    it('while a CRD is being established', async () => {
      const mod = await published();
      // A CRD in the module's group that claims its CRD's singular name first: the module's CRD is
      // not Established while this one is there, and the install times out waiting for it (8 s).
      const blocker = {
        apiVersion: CRD,
        kind: 'CustomResourceDefinition',
        metadata: { name: `blockers.${mod.name}.example.io` },
        spec: {
          group: `${mod.name}.example.io`,
          names: { kind: 'Blocker', listKind: 'BlockerList', plural: 'blockers', singular: mod.name },
          scope: 'Namespaced',
          versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object' } } }],
        },
      };
      await klm().kube.create(blocker);
      try {
        const name = uniqueName('kyma');
        await klm().kube.create(
          kymaObject(klm().namespace, name, { channel: 'regular', modules: [{ name: mod.name }] }),
        );
        await eventually('the module CRD to be applied', async () =>
          klm().kube.get(CRD, 'CustomResourceDefinition', `${mod.name}s.${mod.name}.example.io`),
        );
        await deleteKyma(name);
        await nothingLeft(name, mod);
      } finally {
        await klm().kube.delete(CRD, 'CustomResourceDefinition', blocker.metadata.name);
      }
    });
  });
});

describe('unmanaged and paused', () => {
  const klm = useKlm();

  async function setModules(name: string, modules: Kyma['spec']['modules']) {
    await klm().kube.mergePatch(API_VERSION, 'Kyma', name, klm().namespace, { spec: { modules } });
  }

  it('unmanage leaves the objects running without the label; managing again adopts them', async () => {
    const mod = await testModule(klm());
    await mod.publish('1.0.0');
    await mod.channels({ regular: '1.0.0' });
    const name = uniqueName('kyma');
    const ns = `${name}-system`;
    await klm().kube.create(kymaObject(klm().namespace, name, { channel: 'regular', modules: [{ name: mod.name }] }));
    await kymaInState(klm(), name, 'Ready');
    const before = await klm().kube.get('apps/v1', 'Deployment', `${mod.name}-manager`, ns);
    await setModules(name, [{ name: mod.name, managed: false }]);
    await moduleInState(klm(), name, mod.name, 'Unmanaged');
    await eventually(
      'the Manifest to go',
      async () =>
        (await klm().kube.get(API_VERSION, 'Manifest', manifestName(name, mod.name), klm().namespace)) === undefined ||
        undefined,
    );
    await eventually('the label to go', async () => {
      const d = await klm().kube.get('apps/v1', 'Deployment', `${mod.name}-manager`, ns);
      return d && !d.metadata.labels?.[LABELS.managedBy] ? d : undefined;
    });
    const cr = await klm().kube.get(mod.apiVersion, mod.kind, 'default', ns);
    expect(cr?.metadata.labels?.[LABELS.managedBy]).toBeUndefined();
    expect((await getKyma(klm(), name))?.status?.state).toBe('Ready');

    await setModules(name, [{ name: mod.name, managed: true }]);
    await moduleInState(klm(), name, mod.name, 'Ready');
    const after = await klm().kube.get('apps/v1', 'Deployment', `${mod.name}-manager`, ns);
    expect(after?.metadata.uid).toBe(before?.metadata.uid);
    expect(after?.metadata.labels?.[LABELS.managedBy]).toBe('klm-temporal');
  });

  it('skip-reconciliation pauses the Kyma and removing it resumes at once; deletion goes ahead while paused', async () => {
    // Modules of its own: deleting must not be blocked by other Kymas' CRs on the shared cluster.
    const [first, second] = [await testModule(klm()), await testModule(klm())];
    for (const m of [first, second]) {
      await m.publish('1.0.0');
      await m.channels({ regular: '1.0.0' });
    }
    const name = uniqueName('kyma');
    await klm().kube.create(kymaObject(klm().namespace, name, { channel: 'regular', modules: [{ name: first.name }] }));
    await kymaInState(klm(), name, 'Ready');
    await klm().kube.mergePatch(API_VERSION, 'Kyma', name, klm().namespace, {
      metadata: { labels: { [LABELS.skipReconciliation]: 'true' } },
    });
    await new Promise((r) => setTimeout(r, 500));
    await setModules(name, [{ name: first.name }, { name: second.name }]);
    // Paused: the new module is not picked up.
    await new Promise((r) => setTimeout(r, 3000));
    expect((await getKyma(klm(), name))?.status?.modules?.map((m) => m.name)).toEqual([first.name]);
    await klm().kube.mergePatch(API_VERSION, 'Kyma', name, klm().namespace, {
      metadata: { labels: { [LABELS.skipReconciliation]: null } },
    });
    await moduleInState(klm(), name, second.name, 'Ready');

    await klm().kube.mergePatch(API_VERSION, 'Kyma', name, klm().namespace, {
      metadata: { labels: { [LABELS.skipReconciliation]: 'true' } },
    });
    await new Promise((r) => setTimeout(r, 500));
    await klm().kube.delete(API_VERSION, 'Kyma', name, klm().namespace);
    await eventually(
      'the paused Kyma to be deleted',
      async () => (await getKyma(klm(), name)) === undefined || undefined,
    );
    expect(await klm().kube.get('apps/v1', 'Deployment', `${second.name}-manager`, `${name}-system`)).toBeUndefined();
  });
});

describe('Kyma deletion after its target Secret is gone', () => {
  const klm = useKlm();

  it('drops the finalizer with a clear Event instead of hanging', async () => {
    const mod = await testModule(klm());
    await mod.publish('1.0.0');
    await mod.channels({ regular: '1.0.0' });
    const name = uniqueName('kyma');
    const secret = `${name}-kubeconfig`;
    await klm().kube.create({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: secret, namespace: klm().namespace, labels: { [LABELS.kymaName]: name } },
      data: { config: (await readFile(stackInfo().kubeconfig)).toString('base64') },
    });
    await klm().kube.create(kymaObject(klm().namespace, name, { channel: 'regular', modules: [{ name: mod.name }] }));
    await kymaInState(klm(), name, 'Ready');
    await klm().kube.delete('v1', 'Secret', secret, klm().namespace);
    await klm().kube.delete(API_VERSION, 'Kyma', name, klm().namespace);
    await eventually('the Kyma to be gone', async () => (await getKyma(klm(), name)) === undefined || undefined);
    const events = await klm().kube.list('v1', 'Event', { namespace: klm().namespace });
    const gone = events.items.find(
      (e) =>
        (e as { reason?: string; involvedObject?: { name?: string } }).reason === 'TargetClusterGone' &&
        (e as { involvedObject?: { name?: string } }).involvedObject?.name === name,
    );
    expect((gone as { type?: string; message?: string } | undefined)?.message).toContain(
      'the kubeconfig Secret of this Kyma is gone',
    );
    expect(
      await klm().kube.get(API_VERSION, 'Manifest', manifestName(name, mod.name), klm().namespace),
    ).toBeUndefined();
  });
});

describe('a paused Manifest', () => {
  const klm = useKlm();

  it('skip-reconciliation on the Manifest stops its module workflow; removing it resumes', async () => {
    const name = uniqueName('kyma');
    const ns = `${name}-system`;
    await klm().kube.create(kymaObject(klm().namespace, name, { channel: 'regular', modules: [{ name: 'greeter' }] }));
    await kymaInState(klm(), name, 'Ready');
    await klm().kube.mergePatch(API_VERSION, 'Manifest', manifestName(name, 'greeter'), klm().namespace, {
      metadata: { labels: { [LABELS.skipReconciliation]: 'true' } },
    });
    await new Promise((r) => setTimeout(r, 1000));
    // Paused: a manager deleted by hand stays gone.
    await klm().kube.delete('apps/v1', 'Deployment', 'greeter-manager', ns);
    await new Promise((r) => setTimeout(r, 3000));
    expect(await klm().kube.get('apps/v1', 'Deployment', 'greeter-manager', ns)).toBeUndefined();
    await klm().kube.mergePatch(API_VERSION, 'Manifest', manifestName(name, 'greeter'), klm().namespace, {
      metadata: { labels: { [LABELS.skipReconciliation]: null } },
    });
    await eventually(
      'the manager to come back',
      async () => klm().kube.get('apps/v1', 'Deployment', 'greeter-manager', ns),
      30_000,
    );
  });
});
