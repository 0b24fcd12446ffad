// Today's module artifacts: ModuleTemplates with `descriptor: {}` (modulectl 2.3 and later)
// found through the ModuleReleaseMeta's ocmComponentName in the configured registry, legacy
// templates that carry the descriptor, repository subpaths, the typed failures when the
// component cannot be located or the descriptor lacks what it must name, a template whose
// spec.moduleName names another module, and a template's customStateCheck.
import { describe, expect, it } from 'vitest';
import type { Manifest } from '../../src/api/manifest';
import type { ModuleReleaseMeta } from '../../src/api/modulereleasemeta';
import type { ModuleTemplate } from '../../src/api/moduletemplate';
import { manifestName } from '../../src/api/names';
import { Registries } from '../../src/oci/registries';
import { extractSingleYaml } from '../../src/oci/tar';
import { parse, parseAllDocuments, stringify } from 'yaml';
import { API_VERSION, type KubeObject } from '../../src/api/shared';
import { eventually, getKyma, kymaInState, kymaObject, useKlm, type Klm } from '../support/klm';
import { testModule } from '../support/modules';
import { stackInfo, uniqueName } from '../support/stack';

async function manifestReason(klm: Klm, kyma: string, module: string): Promise<string | undefined> {
  const manifest = await klm.kube.get<Manifest & KubeObject>(
    API_VERSION,
    'Manifest',
    manifestName(kyma, module),
    klm.namespace,
  );
  return manifest?.status?.conditions?.[0]?.reason;
}

async function moduleStatus(klm: Klm, kyma: string, module: string) {
  return (await getKyma(klm, kyma))?.status?.modules?.find((m) => m.name === module);
}

/** A ModuleReleaseMeta without ocmComponentName (the field is optional in the CRD). */
function metaWithoutComponent(name: string, namespace: string): KubeObject {
  return {
    apiVersion: API_VERSION,
    kind: 'ModuleReleaseMeta',
    metadata: { name, namespace },
    spec: { moduleName: name, channels: [{ channel: 'regular', version: '1.0.0' }] },
  };
}

/** A module whose template maps status.health green/red to Ready/Error, and a Kyma with it; `cr` addresses its default CR. */
async function kymaWithHealthCheck(klm: Klm) {
  const mod = await testModule(klm);
  await mod.publish('1.0.0', undefined, undefined, {
    customStateCheck: [
      { jsonPath: 'status.health', value: 'green', mappedState: 'Ready' },
      { jsonPath: 'status.health', value: 'red', mappedState: 'Error' },
    ],
  });
  await mod.channels({ regular: '1.0.0' });
  const name = uniqueName('kyma');
  await klm.kube.create(kymaObject(klm.namespace, name, { channel: 'regular', modules: [{ name: mod.name }] }));
  return { mod, name, cr: [mod.apiVersion, mod.kind, 'default', `${name}-system`] as const };
}

describe('templates as modulectl writes them', () => {
  const klm = useKlm({ settings: { installRetryMs: 1000 } });

  it('installs a module whose template has descriptor: {} next to a legacy one that carries its descriptor', async () => {
    const greeter = await klm().kube.get<ModuleTemplate & KubeObject>(
      API_VERSION,
      'ModuleTemplate',
      'greeter-1.0.0',
      klm().namespace,
    );
    expect(greeter?.spec.descriptor).toEqual({});
    expect(greeter?.metadata.labels?.['operator.kyma-project.io/module-name']).toBe('greeter');
    const meta = await klm().kube.get<ModuleReleaseMeta & KubeObject>(
      API_VERSION,
      'ModuleReleaseMeta',
      'greeter',
      klm().namespace,
    );
    expect(meta?.spec.ocmComponentName).toBe('kyma-project.io/module/greeter');
    const counter = await klm().kube.get<ModuleTemplate & KubeObject>(
      API_VERSION,
      'ModuleTemplate',
      'counter-1.0.0',
      klm().namespace,
    );
    expect((counter?.spec.descriptor as { component: { resources: unknown[] } }).component.resources).toHaveLength(1);

    const name = uniqueName('kyma');
    await klm().kube.create(
      kymaObject(klm().namespace, name, { channel: 'regular', modules: [{ name: 'greeter' }, { name: 'counter' }] }),
    );
    const kyma = await kymaInState(klm(), name, 'Ready');
    expect(kyma.status?.modules?.find((m) => m.name === 'greeter')).toMatchObject({
      state: 'Ready',
      fqdn: 'kyma-project.io/module/greeter',
      ocmComponentName: 'kyma-project.io/module/greeter',
      version: '1.0.0',
    });
    expect(kyma.status?.modules?.find((m) => m.name === 'counter')).toMatchObject({ state: 'Ready', version: '1.0.0' });
    expect(await klm().kube.get('apps/v1', 'Deployment', 'greeter-manager', `${name}-system`)).toBeDefined();
  });

  it('installs a module whose raw manifest is one kind: List, expanded as kubectl does', async () => {
    const mod = await testModule(klm());
    await mod.publish('1.0.0', undefined, (manifest) =>
      stringify({
        apiVersion: 'v1',
        kind: 'List',
        items: parseAllDocuments(manifest)
          .map((d) => d.toJS() as unknown)
          .filter(Boolean),
      }),
    );
    await mod.channels({ regular: '1.0.0' });
    const name = uniqueName('kyma');
    await klm().kube.create(kymaObject(klm().namespace, name, { channel: 'regular', modules: [{ name: mod.name }] }));
    const settled = await eventually('the module to settle', async () => {
      const m = await moduleStatus(klm(), name, mod.name);
      return m?.state === 'Ready' || m?.state === 'Error' ? m : undefined;
    });
    expect(settled, settled.message).toMatchObject({ state: 'Ready', version: '1.0.0' });
    expect(await klm().kube.get('apps/v1', 'Deployment', `${mod.name}-manager`, `${name}-system`)).toBeDefined();
  });

  it('finds the component in the registry as the OCM tooling lays it out', async () => {
    const oci = Registries.unconfigured().client(stackInfo().registryHost);
    const repository = 'component-descriptors/kyma-project.io/module/greeter';
    interface Layer {
      mediaType: string;
      digest: string;
      annotations?: Record<string, string>;
    }
    const manifest = await oci.getManifest<{
      mediaType: string;
      annotations: Record<string, string>;
      config: Layer;
      layers: Layer[];
    }>(repository, '1.0.0');
    expect(manifest.mediaType).toBe('application/vnd.oci.image.manifest.v1+json');
    expect(manifest.annotations['software.ocm.componentversion']).toBe('kyma-project.io/module/greeter:1.0.0');
    expect(manifest.config.mediaType).toBe('application/vnd.ocm.software.component.config.v1+json');
    const config = JSON.parse((await oci.pullBlob(repository, manifest.config.digest)).toString('utf8')) as {
      componentDescriptorLayer: Layer;
    };
    expect(config.componentDescriptorLayer).toMatchObject({
      mediaType: 'application/vnd.ocm.software.component-descriptor.v2+yaml+tar',
      digest: manifest.layers[0]!.digest,
    });
    const descriptor = parse(
      extractSingleYaml(
        await oci.pullBlob(repository, manifest.layers[0]!.digest),
        'test',
        /^component-descriptor\.yaml$/,
      ),
    ) as {
      component: {
        name: string;
        version: string;
        repositoryContexts: unknown[];
        resources: {
          name: string;
          type: string;
          access: { type: string; localReference: string; mediaType: string };
        }[];
      };
    };
    expect(descriptor.component).toMatchObject({
      name: 'kyma-project.io/module/greeter',
      version: '1.0.0',
      repositoryContexts: [{ type: 'OCIRegistry', baseUrl: stackInfo().registryHost, componentNameMapping: 'urlPath' }],
    });
    const raw = descriptor.component.resources.find((r) => r.name === 'raw-manifest')!;
    expect(raw).toMatchObject({ type: 'directoryTree', access: { type: 'localBlob', mediaType: 'application/x-tar' } });
    expect(manifest.layers[1]).toMatchObject({ digest: raw.access.localReference, mediaType: 'application/x-tar' });
  });

  it('fails typed while the ModuleReleaseMeta names no component, and installs once it does', async () => {
    const mod = await testModule(klm());
    await mod.publish('1.0.0');
    await klm().kube.apply(metaWithoutComponent(mod.name, klm().namespace));
    const name = uniqueName('kyma');
    await klm().kube.create(kymaObject(klm().namespace, name, { channel: 'regular', modules: [{ name: mod.name }] }));
    await kymaInState(klm(), name, 'Error');
    expect(await manifestReason(klm(), name, mod.name)).toBe('OcmComponentNameMissing');
    expect((await moduleStatus(klm(), name, mod.name))?.message).toContain(
      `ModuleTemplate ${klm().namespace}/${mod.name}-1.0.0 has an empty descriptor, so its OCM ` +
        `component is named by the module's ModuleReleaseMeta, but ModuleReleaseMeta ` +
        `${klm().namespace}/${mod.name} has no spec.ocmComponentName`,
    );
    await mod.channels({ regular: '1.0.0' });
    await kymaInState(klm(), name, 'Ready');
  });

  it("honours the repository context's subPath of a template that names its component", async () => {
    const mod = await testModule(klm());
    const subPath = `mirror/${uniqueName('sub')}`;
    await mod.publish('1.0.0', undefined, undefined, {
      descriptor: 'registry',
      to: { host: stackInfo().registryHost, subPath },
    });
    await mod.channels({ regular: '1.0.0' });
    const template = await klm().kube.get<ModuleTemplate & KubeObject>(
      API_VERSION,
      'ModuleTemplate',
      `${mod.name}-1.0.0`,
      klm().namespace,
    );
    expect(template?.spec.descriptor).toMatchObject({
      component: { repositoryContexts: [{ type: 'OCIRegistry', baseUrl: stackInfo().registryHost, subPath }] },
    });
    const name = uniqueName('kyma');
    await klm().kube.create(kymaObject(klm().namespace, name, { channel: 'regular', modules: [{ name: mod.name }] }));
    await kymaInState(klm(), name, 'Ready');
  });

  it('refuses a descriptor in the template that lacks component.version as MalformedDescriptor, naming the template and the field', async () => {
    // Published under a subpath the worker is not configured with: taken for descriptor: {}, it
    // would be looked up in the configured registry and be "not found in the registry".
    const mod = await testModule(klm());
    await mod.publish('1.0.0', undefined, undefined, {
      descriptor: 'registry',
      to: { host: stackInfo().registryHost, subPath: `mirror/${uniqueName('sub')}` },
    });
    await mod.channels({ regular: '1.0.0' });
    await klm().kube.mergePatch(API_VERSION, 'ModuleTemplate', `${mod.name}-1.0.0`, klm().namespace, {
      spec: { descriptor: { component: { version: null } } },
    });
    const name = uniqueName('kyma');
    await klm().kube.create(kymaObject(klm().namespace, name, { channel: 'regular', modules: [{ name: mod.name }] }));
    await kymaInState(klm(), name, 'Error');
    expect(await manifestReason(klm(), name, mod.name)).toBe('MalformedDescriptor');
    const message = (await moduleStatus(klm(), name, mod.name))?.message;
    expect(message).toContain(
      `ModuleTemplate ${klm().namespace}/${mod.name}-1.0.0: its spec.descriptor lacks component.version`,
    );
    expect(message).not.toContain('not found in the registry');
  });

  it('installs a template whose spec.moduleName names another module, and says so by a Warning Event on the Kyma and a note in the status', async () => {
    const mod = await testModule(klm());
    await mod.publish('1.0.0');
    await mod.channels({ regular: '1.0.0' });
    const other = `${mod.name}-twin`;
    await klm().kube.mergePatch(API_VERSION, 'ModuleTemplate', `${mod.name}-1.0.0`, klm().namespace, {
      spec: { moduleName: other },
    });
    const name = uniqueName('kyma');
    await klm().kube.create(kymaObject(klm().namespace, name, { channel: 'regular', modules: [{ name: mod.name }] }));
    const note = `ModuleTemplate ${klm().namespace}/${mod.name}-1.0.0 says spec.moduleName "${other}", not "${mod.name}"`;
    // The worker's cache may still have held the template as published: the change reaches the Kyma by its event.
    await eventually('the module Ready, with the note', async () => {
      const s = await moduleStatus(klm(), name, mod.name);
      return s?.state === 'Ready' && s.message === `module is ready (note: ${note})`;
    });
    const mismatches = async () =>
      (
        await klm().kube.list<
          KubeObject & { type?: string; reason?: string; message?: string; involvedObject?: { name?: string } }
        >('v1', 'Event', { namespace: klm().namespace })
      ).items.filter((e) => e.involvedObject?.name === name && e.reason === 'ModuleNameMismatch');
    const events = await eventually('the Warning Event on the Kyma', async () =>
      (await mismatches()).length ? mismatches() : undefined,
    );
    expect(events.map((e) => [e.type, e.message])).toEqual([
      ['Warning', expect.stringContaining(`module ${mod.name}: ${note} (generation `) as unknown],
    ]);
    expect(events[0]?.message).toContain(`Set spec.moduleName: ${mod.name} in the template`);
  });

  it("maps a module CR's own field to Ready and to Error by the template's customStateCheck", async () => {
    const { mod, name, cr } = await kymaWithHealthCheck(klm());
    // The manager reports .status.state Ready, but the check reads status.health, not there yet.
    await eventually('the module to wait for status.health', async () => {
      const s = await moduleStatus(klm(), name, mod.name);
      return s?.state === 'Processing' && s.message?.includes('to report status.health') ? s : undefined;
    });
    await eventually(
      'the CR to report .status.state Ready',
      async () =>
        (await klm().kube.get<KubeObject & { status?: { state?: string } }>(...cr))?.status?.state === 'Ready',
    );
    expect((await moduleStatus(klm(), name, mod.name))?.state).toBe('Processing');

    await klm().kube.mergePatch(...cr, { spec: { simulateHealth: 'green' } });
    await kymaInState(klm(), name, 'Ready', 30_000);

    await klm().kube.mergePatch(...cr, { spec: { simulateHealth: 'red', simulateMessage: 'backend down' } });
    await kymaInState(klm(), name, 'Error', 30_000);
    expect(await moduleStatus(klm(), name, mod.name)).toMatchObject({
      state: 'Error',
      message: `${mod.kind} ${name}-system/default is Error by customStateCheck (status.health="red"): backend down`,
    });
    expect(await manifestReason(klm(), name, mod.name)).toBe('ResourceError');

    await klm().kube.mergePatch(...cr, { spec: { simulateHealth: 'green', simulateMessage: null } });
    await kymaInState(klm(), name, 'Ready', 30_000);
  });
});

describe('a module CR whose operator changes only a field customStateCheck reads', () => {
  const klm = useKlm();

  it('wakes the module on that field alone, long before the drift timer', async () => {
    const { name, cr } = await kymaWithHealthCheck(klm());
    await eventually(
      'the CR to be reconciled',
      async () =>
        (await klm().kube.get<KubeObject & { status?: { state?: string } }>(...cr))?.status?.state === 'Ready',
    );
    await klm().kube.mergePatch(...cr, { spec: { simulateHealth: 'green' } });
    await kymaInState(klm(), name, 'Ready', 30_000);
    // From now on the "operator" is us: status.health turns red, state and message stay as they are.
    klm().manager.stop();
    const before = await klm().kube.get<KubeObject & { status?: Record<string, unknown> }>(...cr);
    await klm().kube.mergePatch(...cr, { status: { health: 'red' } }, 'status');
    await kymaInState(klm(), name, 'Error', 30_000);
    const after = await klm().kube.get<KubeObject & { status?: Record<string, unknown> }>(...cr);
    expect([after?.status?.state, after?.status?.message]).toEqual([before?.status?.state, before?.status?.message]);
  });
});

describe('a worker configured with a repository subpath', () => {
  const subPath = `modules/${uniqueName('sp')}`;
  const klm = useKlm({ ociRegistry: { host: `http://${stackInfo().registryHost}`, subPath } });

  it('finds a descriptor: {} component under <host>/<subpath>/component-descriptors', async () => {
    const mod = await testModule(klm());
    await mod.publish('1.0.0', undefined, undefined, { to: { host: stackInfo().registryHost, subPath } });
    await mod.channels({ regular: '1.0.0' });
    const name = uniqueName('kyma');
    await klm().kube.create(kymaObject(klm().namespace, name, { channel: 'regular', modules: [{ name: mod.name }] }));
    await kymaInState(klm(), name, 'Ready');
  });
});

describe('a worker without a configured registry', () => {
  const klm = useKlm({ ociRegistry: { host: '' } });

  it('refuses descriptor: {} templates with OciRegistryNotConfigured and still installs legacy ones', async () => {
    const name = uniqueName('kyma');
    await klm().kube.create(
      kymaObject(klm().namespace, name, { channel: 'regular', modules: [{ name: 'greeter' }, { name: 'counter' }] }),
    );
    await kymaInState(klm(), name, 'Error');
    expect(await manifestReason(klm(), name, 'greeter')).toBe('OciRegistryNotConfigured');
    expect((await moduleStatus(klm(), name, 'greeter'))?.message).toContain('set KLM_OCI_REGISTRY_HOST');
    await eventually('counter to be Ready', async () =>
      (await moduleStatus(klm(), name, 'counter'))?.state === 'Ready' ? true : undefined,
    );
  });
});
