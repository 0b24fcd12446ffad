import { execFileSync } from 'node:child_process';
import { beforeAll, describe, expect, it } from 'vitest';
import { CustomObjectsApi, type KubernetesObject, type KubernetesObjectApi } from '@kubernetes/client-node';
import { API_VERSION, type Kyma, type ModuleReleaseMeta, type ModuleTemplate } from '../../src/api';
import { createObject, kube, rejection, stackInfo, uniqueName } from '../support/stack';

const ns = 'default';

function kyma(name: string, spec: Record<string, unknown>): Kyma {
  return { apiVersion: API_VERSION, kind: 'Kyma', metadata: { name, namespace: ns }, spec } as unknown as Kyma;
}

function template(name: string, version: string): ModuleTemplate {
  return {
    apiVersion: API_VERSION,
    kind: 'ModuleTemplate',
    metadata: { name, namespace: ns },
    spec: {
      moduleName: 'sample',
      version,
      descriptor: { component: { name: 'kyma-project.io/module/sample', version } },
      data: {
        apiVersion: 'operator.kyma-project.io/v1alpha1',
        kind: 'Sample',
        metadata: { name: 'default' },
        spec: {},
      },
    },
  };
}

function releaseMeta(name: string, spec: Record<string, unknown>): ModuleReleaseMeta {
  return {
    apiVersion: API_VERSION,
    kind: 'ModuleReleaseMeta',
    metadata: { name, namespace: ns },
    spec,
  } as unknown as ModuleReleaseMeta;
}

describe('the v1beta2 CRDs', () => {
  let api: KubernetesObjectApi;
  beforeAll(() => {
    api = kube().api;
  });

  it('accepts a valid Kyma and fills in the upstream defaults', async () => {
    const name = uniqueName('kyma');
    const created = await createObject(
      api,
      kyma(name, {
        channel: 'regular',
        modules: [{ name: 'sample' }, { name: 'other', channel: 'fast', version: '1.2.3-rc.1' }],
      }),
    );
    expect(created.spec.modules).toEqual([
      { name: 'sample', managed: true, customResourcePolicy: 'CreateAndDelete' },
      { name: 'other', channel: 'fast', version: '1.2.3-rc.1', managed: true, customResourcePolicy: 'CreateAndDelete' },
    ]);
  });

  it('accepts a valid ModuleTemplate and a ModuleReleaseMeta with channels', async () => {
    const t = await createObject(api, template(uniqueName('sample'), '1.0.0'));
    expect(t.spec.version).toBe('1.0.0');
    const m = await createObject(
      api,
      releaseMeta(uniqueName('sample'), { moduleName: 'sample', channels: [{ channel: 'regular', version: '1.0.0' }] }),
    );
    expect(m.spec.channels).toEqual([{ channel: 'regular', version: '1.0.0' }]);
  });

  it('rejects a Kyma channel that is not lower-case letters', async () => {
    const msg = await rejection(createObject(api, kyma(uniqueName('kyma'), { channel: 'Fast_1' })));
    expect(msg).toContain('spec.channel');
    expect(msg).toContain("should match '^[a-z]+$'");
  });

  it('rejects a Kyma channel shorter than 3 characters', async () => {
    const msg = await rejection(createObject(api, kyma(uniqueName('kyma'), { channel: 'ab' })));
    expect(msg).toMatch(/spec\.channel.*at least 3 chars/);
  });

  it('rejects a module channel override that is not lower-case letters', async () => {
    const msg = await rejection(
      createObject(
        api,
        kyma(uniqueName('kyma'), { channel: 'regular', modules: [{ name: 'sample', channel: 'FAST' }] }),
      ),
    );
    expect(msg).toContain('spec.modules[0].channel');
  });

  it('rejects a module version pin that is not a semantic version', async () => {
    const msg = await rejection(
      createObject(
        api,
        kyma(uniqueName('kyma'), { channel: 'regular', modules: [{ name: 'sample', version: 'latest' }] }),
      ),
    );
    expect(msg).toContain('spec.modules[0].version');
    expect(msg).toContain('Invalid value: "latest"');
  });

  it('rejects an unknown customResourcePolicy', async () => {
    const msg = await rejection(
      createObject(
        api,
        kyma(uniqueName('kyma'), { channel: 'regular', modules: [{ name: 'sample', customResourcePolicy: 'Keep' }] }),
      ),
    );
    expect(msg).toContain('spec.modules[0].customResourcePolicy');
    expect(msg).toContain('supported values: "CreateAndDelete", "Ignore"');
  });

  it('rejects a ModuleTemplate whose version is not a semantic version', async () => {
    const msg = await rejection(createObject(api, template(uniqueName('sample'), '1.0')));
    expect(msg).toContain('spec.version');
    expect(msg).toContain('Invalid value: "1.0"');
  });

  it('rejects a ModuleReleaseMeta channel assignment to a non-semver version', async () => {
    const msg = await rejection(
      createObject(
        api,
        releaseMeta(uniqueName('sample'), { moduleName: 'sample', channels: [{ channel: 'regular', version: 'v1' }] }),
      ),
    );
    expect(msg).toContain('spec.channels[0].version');
  });

  it('rejects a ModuleReleaseMeta with both channels and mandatory', async () => {
    const msg = await rejection(
      createObject(
        api,
        releaseMeta(uniqueName('sample'), {
          moduleName: 'sample',
          channels: [{ channel: 'regular', version: '1.0.0' }],
          mandatory: { version: '1.0.0' },
        }),
      ),
    );
    expect(msg).toContain("exactly one of 'mandatory' or 'channels' must be specified");
  });

  it('rejects a ModuleReleaseMeta with neither channels nor mandatory', async () => {
    const msg = await rejection(createObject(api, releaseMeta(uniqueName('sample'), { moduleName: 'sample' })));
    expect(msg).toContain("exactly one of 'mandatory' or 'channels' must be specified");
  });

  it('keeps Kyma status behind the status subresource', async () => {
    const name = uniqueName('kyma');
    const created = await createObject(api, kyma(name, { channel: 'regular' }));
    // A status sent with the main resource is dropped ...
    const updated = (await api.replace({
      ...created,
      status: { state: 'Ready' },
    } as unknown as KubernetesObject)) as unknown as Kyma;
    expect(updated.status).toBeUndefined();
    // ... it is written through /status, where a state name upstream does not know is refused.
    const custom = kube().kc.makeApiClient(CustomObjectsApi);
    const target = { group: 'operator.kyma-project.io', version: 'v1beta2', namespace: ns, plural: 'kymas', name };
    const ready = (await custom.replaceNamespacedCustomObjectStatus({
      ...target,
      body: { ...updated, status: { state: 'Ready' } },
    })) as Kyma;
    expect(ready.status?.state).toBe('Ready');
    const msg = await rejection(
      custom.replaceNamespacedCustomObjectStatus({ ...target, body: { ...ready, status: { state: 'Done' } } }),
    );
    expect(msg).toContain('status.state');
  });

  it('prints state, channel and age columns for Kymas', () => {
    const { tools, kubeconfig } = stackInfo();
    const out = execFileSync(tools.kubectl, ['--kubeconfig', kubeconfig, 'get', 'kymas', '-n', ns], {
      encoding: 'utf8',
    });
    expect(out.split('\n')[0]).toMatch(/^NAME\s+STATE\s+CHANNEL\s+AGE/);
    const mt = execFileSync(tools.kubectl, ['--kubeconfig', kubeconfig, 'get', 'moduletemplates', '-n', ns], {
      encoding: 'utf8',
    });
    expect(mt.split('\n')[0]).toMatch(/^NAME\s+MODULE\s+VERSION\s+AGE/);
  });

  it('answers to the short names upstream has: kubectl get mt, kubectl get mrm', async () => {
    const { tools, kubeconfig } = stackInfo();
    const name = uniqueName('sample');
    await createObject(api, template(`${name}-1.0.0`, '1.0.0'));
    await createObject(
      api,
      releaseMeta(name, { moduleName: 'sample', channels: [{ channel: 'regular', version: '1.0.0' }] }),
    );
    const mt = execFileSync(
      tools.kubectl,
      ['--kubeconfig', kubeconfig, 'get', 'mt', `${name}-1.0.0`, '-n', ns, '-o', 'name'],
      { encoding: 'utf8' },
    );
    expect(mt.trim()).toBe(`moduletemplate.operator.kyma-project.io/${name}-1.0.0`);
    const mrm = execFileSync(tools.kubectl, ['--kubeconfig', kubeconfig, 'get', 'mrm', name, '-n', ns, '-o', 'name'], {
      encoding: 'utf8',
    });
    expect(mrm.trim()).toBe(`modulereleasemeta.operator.kyma-project.io/${name}`);
  });
});
