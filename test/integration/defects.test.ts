// Decision defects found when the product was tried as a new user would; each of these failed
// before the restructuring (issue: "one clear house"). Only test/support and src/api are used,
// so that the file runs unchanged against the code from before.
import { describe, expect, it } from 'vitest';
import type { Manifest } from '../../src/api/manifest';
import { manifestName } from '../../src/api/names';
import { API_VERSION, KYMA_FINALIZER, LABELS, type KubeObject } from '../../src/api/shared';
import { eventually, getKyma, kymaInState, kymaObject, kymaWorkflowId, useKlm, type Klm } from '../support/klm';
import { testModule, type TestModule } from '../support/modules';
import { uniqueName } from '../support/stack';

async function moduleStatus(klm: Klm, kyma: string, module: string) {
  return (await getKyma(klm, kyma))?.status?.modules?.find((m) => m.name === module);
}

async function published(
  klm: Klm,
  versions: string[],
  channels: Record<string, string>,
  edit?: (m: string) => string,
): Promise<TestModule> {
  const mod = await testModule(klm);
  for (const v of versions) await mod.publish(v, undefined, edit);
  await mod.channels(channels);
  return mod;
}

/** A Kyma of its own with the module, Ready. */
async function readyKyma(klm: Klm, mod: TestModule): Promise<string> {
  const name = uniqueName('kyma');
  await klm.kube.create(kymaObject(klm.namespace, name, { channel: 'regular', modules: [{ name: mod.name }] }));
  await kymaInState(klm, name, 'Ready');
  return name;
}

async function manifestOf(klm: Klm, kyma: string, module: string) {
  return await klm.kube.get<Manifest & KubeObject>(API_VERSION, 'Manifest', manifestName(kyma, module), klm.namespace);
}

/** The Kyma's entry for the module and its Manifest agree: same state, and the message the Manifest's reason stands for. */
async function agreeing(klm: Klm, kyma: string, module: string, state: string, reason: string) {
  return await eventually(`${module} ${state} (${reason}) on the Kyma and its Manifest`, async () => {
    const entry = await moduleStatus(klm, kyma, module);
    const manifest = await manifestOf(klm, kyma, module);
    const condition = manifest?.status?.conditions?.find((c) => c.type === 'Installation');
    if (entry?.state !== state || manifest?.status?.state !== state || condition?.reason !== reason) return undefined;
    return { entry, manifest, condition };
  });
}

describe('re-enabling a module whose removal is blocked', () => {
  const klm = useKlm();

  it('stops the removal and converges on the newly desired version, keeping its default CR', async () => {
    const mod = await published(klm(), ['1.0.0', '1.1.0'], { regular: '1.0.0', fast: '1.1.0' });
    const name = uniqueName('kyma');
    const ns = `${name}-system`;
    await klm().kube.create(kymaObject(klm().namespace, name, { channel: 'regular', modules: [{ name: mod.name }] }));
    await kymaInState(klm(), name, 'Ready');
    const defaultCr = await klm().kube.get(mod.apiVersion, mod.kind, 'default', ns);
    await klm().kube.create({
      apiVersion: mod.apiVersion,
      kind: mod.kind,
      metadata: { name: 'blocker', namespace: klm().namespace },
      spec: {},
    });
    await klm().kube.mergePatch(API_VERSION, 'Kyma', name, klm().namespace, { spec: { modules: [] } });
    await eventually(
      'the blocked removal',
      async () => (await moduleStatus(klm(), name, mod.name))?.message?.includes('deletion blocked') || undefined,
    );
    await klm().kube.mergePatch(API_VERSION, 'Kyma', name, klm().namespace, {
      spec: { modules: [{ name: mod.name, channel: 'fast' }] },
    });
    await eventually('1.1.0 to be Ready', async () => {
      const m = await moduleStatus(klm(), name, mod.name);
      return m?.state === 'Ready' && m.version === '1.1.0' ? m : undefined;
    });
    const after = await klm().kube.get(mod.apiVersion, mod.kind, 'default', ns);
    expect(after?.metadata.uid).toBe(defaultCr?.metadata.uid);
    // It stays: nothing removes it later.
    await new Promise((r) => setTimeout(r, 3000));
    expect((await moduleStatus(klm(), name, mod.name))?.state).toBe('Ready');
    expect((await klm().kube.get(mod.apiVersion, mod.kind, 'default', ns))?.metadata.uid).toBe(defaultCr?.metadata.uid);
  });
});

describe('names', () => {
  const klm = useKlm();

  it('refuses a Kyma whose name is longer than a label value may be with a clear status, and lets it be deleted', async () => {
    const name = `${uniqueName('k')}-`.padEnd(64, 'x');
    await klm().kube.create(kymaObject(klm().namespace, name, { channel: 'regular', modules: [{ name: 'greeter' }] }));
    const kyma = await kymaInState(klm(), name, 'Error');
    expect(kyma.status?.lastOperation?.operation).toContain('the Kyma name is 64 characters long');
    expect(kyma.status?.conditions?.find((c) => c.type === 'Modules')?.reason).toBe('InvalidKymaName');
    await klm().kube.delete(API_VERSION, 'Kyma', name, klm().namespace);
    await eventually('the Kyma to be gone', async () => (await getKyma(klm(), name)) === undefined || undefined);
  });

  it('refuses a module whose name cannot label its objects, and installs the others', async () => {
    const name = uniqueName('kyma');
    const long = 'm'.repeat(64);
    await klm().kube.create(
      kymaObject(klm().namespace, name, { channel: 'regular', modules: [{ name: long }, { name: 'counter' }] }),
    );
    await eventually(
      'the refusal',
      async () =>
        (await moduleStatus(klm(), name, long))?.message?.includes(`module name "${long}" cannot be used`) || undefined,
    );
    await eventually(
      'counter to be Ready',
      async () => (await moduleStatus(klm(), name, 'counter'))?.state === 'Ready' || undefined,
    );
  });
});

describe('what a module installs', () => {
  const klm = useKlm();

  it('labels and annotates the namespace it creates like every applied object, and writes the default CR under its field manager', async () => {
    const mod = await published(klm(), ['1.0.0'], { regular: '1.0.0' });
    const name = await readyKyma(klm(), mod);
    const ns = await klm().kube.get('v1', 'Namespace', `${name}-system`);
    expect(ns?.metadata.labels).toMatchObject({
      [LABELS.managedBy]: 'klm-temporal',
      [LABELS.kymaName]: name,
      [LABELS.moduleName]: mod.name,
    });
    expect(ns?.metadata.annotations?.['operator.kyma-project.io/owned-by']).toBe(
      `${klm().namespace}/${name}/${mod.name}`,
    );
    const cr = await klm().kube.get(mod.apiVersion, mod.kind, 'default', `${name}-system`);
    const managers = (cr?.metadata.managedFields ?? []).map((f) => f.manager);
    expect(managers).toContain('klm-temporal');
    expect(managers).not.toContain('unknown');
  });

  it('says what is wrong with a default CR of a kind the module does not define', async () => {
    // The module's manifest without its CustomResourceDefinition.
    const mod = await published(klm(), ['1.0.0'], { regular: '1.0.0' }, (m) =>
      m.replace(/apiVersion: apiextensions\.k8s\.io\/v1[\s\S]*?\n---\n/, ''),
    );
    const name = uniqueName('kyma');
    await klm().kube.create(kymaObject(klm().namespace, name, { channel: 'regular', modules: [{ name: mod.name }] }));
    const { entry } = await agreeing(klm(), name, mod.name, 'Error', 'DefaultCrKindNotServed');
    expect(entry.message).toContain(
      `its default CR (spec.data) is a ${mod.kind} of ${mod.apiVersion}, which the target cluster does not serve`,
    );
  });

  it('refuses an empty layer with a typed reason and applies nothing', async () => {
    const mod = await published(klm(), ['1.0.0'], { regular: '1.0.0' }, () => '# nothing\n');
    const name = uniqueName('kyma');
    await klm().kube.create(kymaObject(klm().namespace, name, { channel: 'regular', modules: [{ name: mod.name }] }));
    const { entry } = await agreeing(klm(), name, mod.name, 'Error', 'EmptyManifest');
    expect(entry.message).toContain('the raw manifest holds no Kubernetes object');
  });
});

describe('the Kyma and the Manifest agree', () => {
  const klm = useKlm();

  it('when the ModuleTemplate of an installed module is deleted, and when it comes back', async () => {
    const mod = await published(klm(), ['1.0.0'], { regular: '1.0.0' });
    const name = await readyKyma(klm(), mod);
    const template = await klm().kube.get(API_VERSION, 'ModuleTemplate', `${mod.name}-1.0.0`, klm().namespace);
    await klm().kube.delete(API_VERSION, 'ModuleTemplate', `${mod.name}-1.0.0`, klm().namespace);
    const { entry, manifest } = await agreeing(klm(), name, mod.name, 'Error', 'TemplateNotFound');
    expect(manifest.status?.lastOperation?.operation).toBe(entry.message);
    // What is installed keeps running.
    expect(await klm().kube.get('apps/v1', 'Deployment', `${mod.name}-manager`, `${name}-system`)).toBeDefined();
    await klm().kube.create({ ...template!, metadata: { name: template!.metadata.name, namespace: klm().namespace } });
    await agreeing(klm(), name, mod.name, 'Ready', 'Ready');
  });

  it('when the ModuleReleaseMeta of an installed module is deleted', async () => {
    const mod = await published(klm(), ['1.0.0'], { regular: '1.0.0' });
    const name = await readyKyma(klm(), mod);
    await klm().kube.delete(API_VERSION, 'ModuleReleaseMeta', mod.name, klm().namespace);
    await agreeing(klm(), name, mod.name, 'Error', 'ModuleNotFound');
  });
});

describe('a Kyma deleted without our finalizer', () => {
  const klm = useKlm();

  async function deleteWithoutFinalizer(name: string): Promise<void> {
    await klm().kube.mergePatch(API_VERSION, 'Kyma', name, klm().namespace, { metadata: { finalizers: null } });
    await klm().kube.delete(API_VERSION, 'Kyma', name, klm().namespace);
    await eventually('the Kyma to be gone', async () => (await getKyma(klm(), name)) === undefined || undefined);
  }

  it('releases its modules and ends its workflow, leaving the objects running unlabelled', async () => {
    const mod = await published(klm(), ['1.0.0'], { regular: '1.0.0' });
    const name = await readyKyma(klm(), mod);
    await deleteWithoutFinalizer(name);
    const id = kymaWorkflowId(klm().namespace, name);
    await eventually(
      "the Kyma's workflow to end",
      async () => (await klm().client.workflow.getHandle(id).describe()).status.name === 'COMPLETED' || undefined,
    );
    const d = await klm().kube.get('apps/v1', 'Deployment', `${mod.name}-manager`, `${name}-system`);
    expect(d).toBeDefined();
    expect(d?.metadata.labels?.[LABELS.managedBy]).toBeUndefined();
    expect(await manifestOf(klm(), name, mod.name)).toBeUndefined();
  });

  it('re-created under the same name: its modules belong to the new Kyma (its uid), and keep running', async () => {
    const mod = await published(klm(), ['1.0.0'], { regular: '1.0.0' });
    const name = uniqueName('kyma');
    const kyma = kymaObject(klm().namespace, name, { channel: 'regular', modules: [{ name: mod.name }] });
    await klm().kube.create(kyma);
    const first = await kymaInState(klm(), name, 'Ready');
    await deleteWithoutFinalizer(name);
    await klm().kube.create(kyma);
    const again = (await getKyma(klm(), name))!;
    expect(again.metadata.uid).not.toBe(first.metadata.uid);
    const ready = await kymaInState(klm(), name, 'Ready');
    expect(ready.metadata.finalizers).toContain(KYMA_FINALIZER);
    await eventually(
      'the Manifest to be owned by the new Kyma',
      async () =>
        (await manifestOf(klm(), name, mod.name))?.metadata.ownerReferences?.[0]?.uid === again.metadata.uid ||
        undefined,
    );
    // Still there a while later: the garbage collector has no dangling owner to act on.
    await new Promise((r) => setTimeout(r, 3000));
    expect((await manifestOf(klm(), name, mod.name))?.metadata.ownerReferences?.[0]?.uid).toBe(again.metadata.uid);
    expect((await moduleStatus(klm(), name, mod.name))?.state).toBe('Ready');
  });
});
