// Several Kymas whose modules go to one cluster (the quick start's sample fleet, and any two
// Kymas with the same kubeconfig): what they share is written once and stays while any of
// them still uses it; each can add and remove modules freely.
import { describe, expect, it } from 'vitest';
import { API_VERSION } from '../../src/api/shared';
import { SAMPLE_DEFAULT_NAMESPACE, sampleFleet } from '../../src/samples/fleet';
import { eventually, getKyma, kymaInState, kymaObject, useKlm, type Klm } from '../support/klm';
import { installsFor } from '../support/history';
import { testModule } from '../support/modules';
import { uniqueName } from '../support/stack';

function installs(klm: Klm, kyma: string, module: string): Promise<number> {
  return installsFor(klm, kyma, module);
}

async function gone(klm: Klm, kyma: string, module: string): Promise<void> {
  await eventually(`${module} to leave ${kyma}`, async () => {
    const k = await getKyma(klm, kyma);
    return k?.status?.state === 'Ready' && !k.status.modules?.some((m) => m.name === module) ? true : undefined;
  });
}

/** Two Kymas of their own on the one cluster, both with a module of the test's own and counter, Ready. */
async function twoKymas(klm: Klm) {
  const mod = await testModule(klm);
  await mod.publish('1.0.0');
  await mod.channels({ regular: '1.0.0' });
  const [a, b] = [uniqueName('kyma'), uniqueName('kyma')];
  for (const k of [a, b])
    await klm.kube.create(
      kymaObject(klm.namespace, k, { channel: 'regular', modules: [{ name: mod.name }, { name: 'counter' }] }),
    );
  await kymaInState(klm, a, 'Ready');
  await kymaInState(klm, b, 'Ready');
  return { mod, a, b, crd: `${mod.name}s.${mod.name}.example.io` };
}

describe('Kymas sharing a cluster and a module', () => {
  const klm = useKlm({ settings: { driftIntervalMs: 1500 } });

  it('write the shared cluster-scoped objects once: drift cycles of both leave them untouched', async () => {
    const { mod, a, b } = await twoKymas(klm());
    const shared = async () =>
      (
        await Promise.all([
          klm().kube.get('apiextensions.k8s.io/v1', 'CustomResourceDefinition', `${mod.name}s.${mod.name}.example.io`),
          klm().kube.get('rbac.authorization.k8s.io/v1', 'ClusterRole', `${mod.name}-manager`),
          klm().kube.get('rbac.authorization.k8s.io/v1', 'ClusterRoleBinding', `${mod.name}-manager`),
        ])
      ).map((o) => o?.metadata.resourceVersion);
    const before = await shared();
    expect(before.every(Boolean)).toBe(true);
    const [na, nb] = [await installs(klm(), a, mod.name), await installs(klm(), b, mod.name)];
    await eventually(
      'two more drift applies of each Kyma',
      async () =>
        ((await installs(klm(), a, mod.name)) >= na + 2 && (await installs(klm(), b, mod.name)) >= nb + 2) || undefined,
      30_000,
    );
    expect(await shared()).toEqual(before);
  });

  it('lets one Kyma remove the module while the other keeps it; the last removal takes the shared objects', async () => {
    const { mod, a, b, crd } = await twoKymas(klm());
    await klm().kube.mergePatch(API_VERSION, 'Kyma', a, klm().namespace, { spec: { modules: [{ name: 'counter' }] } });
    await gone(klm(), a, mod.name);
    expect(await klm().kube.get(mod.apiVersion, mod.kind, 'default', `${a}-system`)).toBeUndefined();
    expect(await klm().kube.get('apps/v1', 'Deployment', `${mod.name}-manager`, `${a}-system`)).toBeUndefined();
    // The other installation is untouched and keeps its kind.
    expect(await klm().kube.get('apiextensions.k8s.io/v1', 'CustomResourceDefinition', crd)).toBeDefined();
    expect(await klm().kube.get(mod.apiVersion, mod.kind, 'default', `${b}-system`)).toBeDefined();
    expect((await getKyma(klm(), b))?.status?.state).toBe('Ready');
    await klm().kube.mergePatch(API_VERSION, 'Kyma', b, klm().namespace, { spec: { modules: [{ name: 'counter' }] } });
    await gone(klm(), b, mod.name);
    await eventually(
      'the shared CRD to go with the last installation',
      async () =>
        (await klm().kube.get('apiextensions.k8s.io/v1', 'CustomResourceDefinition', crd)) === undefined || undefined,
    );
  });
});

describe('Kymas sharing a cluster, removing together or releasing', () => {
  const klm = useKlm();

  it('lets both remove the module at once without leaving the shared objects behind', async () => {
    const { mod, a, b, crd } = await twoKymas(klm());
    await Promise.all(
      [a, b].map((k) =>
        klm().kube.mergePatch(API_VERSION, 'Kyma', k, klm().namespace, { spec: { modules: [{ name: 'counter' }] } }),
      ),
    );
    await gone(klm(), a, mod.name);
    await gone(klm(), b, mod.name);
    await eventually(
      'the shared CRD to go',
      async () =>
        (await klm().kube.get('apiextensions.k8s.io/v1', 'CustomResourceDefinition', crd)) === undefined || undefined,
    );
    expect(await klm().kube.get('rbac.authorization.k8s.io/v1', 'ClusterRole', `${mod.name}-manager`)).toBeUndefined();
  });

  it('keeps the shared objects for an installation that was released (managed: false)', async () => {
    const { mod, a, b, crd } = await twoKymas(klm());
    await klm().kube.mergePatch(API_VERSION, 'Kyma', a, klm().namespace, {
      spec: { modules: [{ name: mod.name, managed: false }, { name: 'counter' }] },
    });
    await eventually('the module to be Unmanaged', async () =>
      (await getKyma(klm(), a))?.status?.modules?.find((m) => m.name === mod.name && m.state === 'Unmanaged'),
    );
    await eventually(
      'its Manifest to go',
      async () =>
        (await klm().kube.get(API_VERSION, 'Manifest', `${a}-${mod.name}`, klm().namespace)) === undefined || undefined,
    );
    await klm().kube.mergePatch(API_VERSION, 'Kyma', b, klm().namespace, { spec: { modules: [{ name: 'counter' }] } });
    await gone(klm(), b, mod.name);
    // The released module still runs on the shared kind, with its CR.
    expect(await klm().kube.get('apiextensions.k8s.io/v1', 'CustomResourceDefinition', crd)).toBeDefined();
    expect(await klm().kube.get(mod.apiVersion, mod.kind, 'default', `${a}-system`)).toBeDefined();
    expect(await klm().kube.get('apps/v1', 'Deployment', `${mod.name}-manager`, `${a}-system`)).toBeDefined();
  });
});

describe("the quick start's sample fleet", () => {
  const klm = useKlm();

  it('lets a newcomer remove and add modules freely on Kymas that share the cluster', async () => {
    const [one, two] = sampleFleet(2).map((k) => ({ ...k, metadata: { ...k.metadata, namespace: klm().namespace } }));
    expect(SAMPLE_DEFAULT_NAMESPACE).toBe('{kyma}-system');
    for (const k of [one!, two!]) await klm().kube.create(k);
    await kymaInState(klm(), 'sample-1', 'Ready');
    await kymaInState(klm(), 'sample-2', 'Ready');
    await klm().kube.mergePatch(API_VERSION, 'Kyma', 'sample-1', klm().namespace, {
      spec: { modules: [{ name: 'counter' }] },
    });
    await gone(klm(), 'sample-1', 'greeter');
    expect((await getKyma(klm(), 'sample-2'))?.status?.modules?.find((m) => m.name === 'greeter')?.state).toBe('Ready');
    await klm().kube.mergePatch(API_VERSION, 'Kyma', 'sample-1', klm().namespace, {
      spec: { modules: [{ name: 'counter' }, { name: 'greeter' }] },
    });
    await eventually('greeter back on sample-1', async () =>
      (await getKyma(klm(), 'sample-1'))?.status?.modules?.find((m) => m.name === 'greeter' && m.state === 'Ready'),
    );
  });
});
