import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { promisify } from 'node:util';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { moduleReleaseMeta, moduleTemplate, pushModuleVersion } from '../../src/publish/module';
import { loadSamples } from '../../src/samples/modules';
import type { Manifest } from '../../src/api/manifest';
import { manifestName } from '../../src/api/names';
import { kymaStatusQuery } from '../../src/contract/queries';
import { API_VERSION, LABELS } from '../../src/api/shared';
import type { KubeObject } from '../../src/api/shared';
import { tarOneFile } from '../../src/oci/tar';
import { eventually, getKyma, kymaInState, kymaObject, kymaWorkflowId, useKlm } from '../support/klm';
import { testModule } from '../support/modules';
import { stackInfo, uniqueName } from '../support/stack';

/** How a workflow ended, once it did. */
async function endStatus(handle: { describe(): Promise<{ status: { name: string } }> }): Promise<string> {
  return await eventually('the workflow to end', async () => {
    const s = (await handle.describe()).status.name;
    return s === 'RUNNING' ? undefined : s;
  });
}

describe('core reconcile', () => {
  const klm = useKlm();

  it('installs a Kyma with two modules until it is Ready', async () => {
    const name = uniqueName('kyma');
    await klm().kube.create(
      kymaObject(klm().namespace, name, { channel: 'regular', modules: [{ name: 'greeter' }, { name: 'counter' }] }),
    );
    const kyma = await kymaInState(klm(), name, 'Ready');

    expect(kyma.status?.activeChannel).toBe('regular');
    const modules = Object.fromEntries((kyma.status?.modules ?? []).map((m) => [m.name, m]));
    expect(modules.greeter).toMatchObject({
      state: 'Ready',
      channel: 'regular',
      version: '1.0.0',
      template: { metadata: { name: 'greeter-1.0.0' } },
    });
    expect(modules.counter).toMatchObject({
      state: 'Ready',
      channel: 'regular',
      version: '1.0.0',
      template: { metadata: { name: 'counter-1.0.0' } },
    });
    expect(modules.greeter?.resource).toMatchObject({
      kind: 'Greeter',
      metadata: { name: 'default', namespace: `${name}-system` },
    });
    expect(kyma.status?.conditions?.find((c) => c.type === 'Modules')).toMatchObject({ status: 'True' });

    for (const module of ['greeter', 'counter']) {
      const manifest = await klm().kube.get<Manifest & KubeObject>(
        API_VERSION,
        'Manifest',
        manifestName(name, module),
        klm().namespace,
      );
      expect(manifest?.status?.state).toBe('Ready');
      expect(manifest?.status?.synced?.map((s) => s.kind)).toContain('Deployment');
      const deployment = await klm().kube.get('apps/v1', 'Deployment', `${module}-manager`, `${name}-system`);
      expect(deployment).toBeDefined();
    }

    const handle = klm().client.workflow.getHandle(kymaWorkflowId(klm().namespace, name));
    expect((await handle.describe()).status.name).toBe('RUNNING');
    const found = await eventually('the workflow to be listed as Ready', async () => {
      const ids: string[] = [];
      for await (const wf of klm().client.workflow.list({ query: `KymaName = '${name}' AND KymaState = 'Ready'` }))
        ids.push(wf.workflowId);
      return ids.length ? ids : undefined;
    });
    expect(found).toEqual([kymaWorkflowId(klm().namespace, name)]);

    // Started with no signal (its input carries what the bridge saw), and found as Processing with
    // its channel and modules from its start: only a later state needed an upsert.
    const events = (await handle.fetchHistory()).events ?? [];
    const values = (fields: Record<string, { data?: Uint8Array | null }> | null | undefined) =>
      Object.fromEntries(
        Object.entries(fields ?? {}).map(([k, p]) => [k, JSON.parse(Buffer.from(p.data!).toString('utf8')) as unknown]),
      );
    const started = values(events[0]?.workflowExecutionStartedEventAttributes?.searchAttributes?.indexedFields);
    expect(started).toMatchObject({ KymaState: 'Processing', Channel: 'regular', Modules: ['greeter', 'counter'] });
    expect(events[1]?.workflowExecutionSignaledEventAttributes).toBeFalsy();
    const upserts = events.flatMap((e) => {
      const u = e.upsertWorkflowSearchAttributesEventAttributes;
      return u ? [values(u.searchAttributes?.indexedFields).KymaState] : [];
    });
    expect(upserts).not.toContain('Processing');
    expect(upserts.at(-1)).toBe('Ready');
  });

  it('ends a Kyma workflow cancelled from the Temporal UI or CLI as cancelled, while it waits for news', async () => {
    const name = uniqueName('kyma');
    await klm().kube.create(kymaObject(klm().namespace, name, { channel: 'regular', modules: [{ name: 'greeter' }] }));
    await kymaInState(klm(), name, 'Ready');
    const handle = klm().client.workflow.getHandle(kymaWorkflowId(klm().namespace, name));
    await handle.cancel();
    expect(await endStatus(handle)).toBe('CANCELLED');
  });

  it('ends a Kyma workflow cancelled while it installs as cancelled too', async () => {
    const name = uniqueName('kyma');
    await klm().kube.create(
      kymaObject(klm().namespace, name, { channel: 'regular', modules: [{ name: 'greeter' }, { name: 'counter' }] }),
    );
    const handle = klm().client.workflow.getHandle(kymaWorkflowId(klm().namespace, name));
    // As soon as the workflow runs: its first task schedules the installs.
    await eventually(
      'the workflow to run',
      async () => (await handle.describe().catch(() => undefined))?.runId,
      30_000,
    );
    await handle.cancel();
    expect(await endStatus(handle)).toBe('CANCELLED');
  });

  it('finds Kymas by a module in Error and by module version in Temporal, one workflow per Kyma, and answers the status query per module', async () => {
    const name = uniqueName('kyma');
    await klm().kube.create(
      kymaObject(klm().namespace, name, { channel: 'regular', modules: [{ name: 'greeter' }, { name: 'counter' }] }),
    );
    await kymaInState(klm(), name, 'Ready');
    await klm().kube.mergePatch('greeter.example.io/v1alpha1', 'Greeter', 'default', `${name}-system`, {
      spec: { simulateState: 'Error' },
    });
    await kymaInState(klm(), name, 'Error');

    // As an operator asks it, with the Temporal CLI.
    const { tools, temporalAddress, temporalNamespace } = stackInfo();
    const list = async (query: string): Promise<string[]> => {
      const { stdout } = await promisify(execFile)(tools.temporal, [
        'workflow',
        'list',
        '--address',
        temporalAddress,
        '--namespace',
        temporalNamespace,
        '--query',
        query,
        '--output',
        'json',
      ]);
      return ((JSON.parse(stdout || '[]') ?? []) as { execution: { workflowId: string } }[])
        .map((w) => w.execution.workflowId)
        .sort();
    };
    const id = kymaWorkflowId(klm().namespace, name);
    await eventually(
      'the Kyma to be listed with greeter in Error',
      async () => (await list(`ModulesInError='greeter' AND KymaName='${name}'`)).includes(id) || undefined,
    );
    expect(await list(`ModulesInError='counter' AND KymaName='${name}'`)).toEqual([]);
    expect(
      await list(
        `ModuleVersions='counter@1.0.0' AND ModuleVersions='greeter@1.0.0' AND KymaNamespace='${klm().namespace}' AND KymaName='${name}'`,
      ),
    ).toEqual([id]);
    // Its modules run inside the Kyma's workflow: no workflow of their own.
    expect(await list(`WorkflowId STARTS_WITH '${id}/'`)).toEqual([]);

    const kyma = await klm().client.workflow.getHandle(id).query(kymaStatusQuery);
    expect(kyma.state).toBe('Error');
    expect(kyma.modules?.find((m) => m.name === 'greeter')).toMatchObject({ state: 'Error', version: '1.0.0' });
    expect(kyma.modules?.find((m) => m.name === 'counter')).toMatchObject({ state: 'Ready', version: '1.0.0' });
    // The Temporal UI shows each module's state in the workflow's current details.
    const details = async () =>
      (await klm().client.workflow.getHandle(id).query<{ currentDetails?: string }>('__temporal_workflow_metadata'))
        .currentDetails;
    expect(await details()).toMatch(/\| greeter \| 1\.0\.0 \| regular \| Error \|/);
    expect(await details()).toMatch(/\| counter \| 1\.0\.0 \| regular \| Ready \|/);

    await klm().kube.mergePatch('greeter.example.io/v1alpha1', 'Greeter', 'default', `${name}-system`, {
      spec: { simulateState: null },
    });
    // The Kyma turns Ready (maybe through Processing) with its greeter out of the list.
    await eventually(
      'the Kyma to be listed Ready again',
      async () => (await list(`KymaState='Ready' AND KymaName='${name}'`)).includes(id) || undefined,
    );
    expect(await list(`ModulesInError='greeter' AND KymaName='${name}'`)).toEqual([]);
  });
});

describe('module resolution', () => {
  const klm = useKlm();

  it("uses a module's own channel over the Kyma's", async () => {
    const name = uniqueName('kyma');
    await klm().kube.create(
      kymaObject(klm().namespace, name, {
        channel: 'regular',
        modules: [{ name: 'greeter', channel: 'fast' }, { name: 'counter' }],
      }),
    );
    const kyma = await kymaInState(klm(), name, 'Ready');
    const modules = Object.fromEntries((kyma.status?.modules ?? []).map((m) => [m.name, m]));
    expect(modules.greeter).toMatchObject({
      channel: 'fast',
      version: '1.1.0',
      template: { metadata: { name: 'greeter-1.1.0' } },
    });
    expect(modules.counter).toMatchObject({ channel: 'regular', version: '1.0.0' });
    // 1.1.0 ships a ConfigMap that 1.0.0 does not.
    expect(await klm().kube.get('v1', 'ConfigMap', 'greeter-config', `${name}-system`)).toBeDefined();
  });

  it("warns of its and its module templates' label values that mean nothing, naming each label and the values it takes", async () => {
    const mod = await testModule(klm());
    await mod.publish('1.0.0');
    await mod.channels({ regular: '1.0.0' });
    const template = `${mod.name}-1.0.0`;
    await klm().kube.mergePatch(API_VERSION, 'ModuleTemplate', template, klm().namespace, {
      metadata: { labels: { [LABELS.beta]: 'yes' } },
    });
    const name = uniqueName('kyma');
    const kyma = kymaObject(klm().namespace, name, { channel: 'regular', modules: [{ name: mod.name }] });
    kyma.metadata.labels = {
      [LABELS.skipReconciliation]: 'True',
      [LABELS.beta]: 'yes',
      [LABELS.rolloutPriority]: 'high',
    };
    await klm().kube.create(kyma);
    // "True" is not "true", as upstream reads it: the Kyma is reconciled.
    await kymaInState(klm(), name, 'Ready');
    const warnings = async () =>
      (
        await klm().kube.list<
          KubeObject & { type?: string; reason?: string; message?: string; involvedObject?: { name?: string } }
        >('v1', 'Event', { namespace: klm().namespace })
      ).items.filter((e) => e.involvedObject?.name === name && e.reason === 'InvalidLabelValue');
    const events = await eventually('the Warning Events', async () =>
      (await warnings()).length >= 4 ? warnings() : undefined,
    );
    expect(events.map((e) => [e.type, e.message]).sort()).toEqual([
      [
        'Warning',
        'label operator.kyma-project.io/beta: "yes" means nothing: it takes "true" (it may use beta modules) or "false", ' +
          'in any case; it is offered no beta modules',
      ],
      [
        'Warning',
        'label operator.kyma-project.io/rollout-priority: "high" means nothing: it takes a number (rollouts take lower ' +
          'ones first); its rollouts take it at 100, as if the label were not there',
      ],
      [
        'Warning',
        'label operator.kyma-project.io/skip-reconciliation: "True" means nothing: it takes "true" (reconciliation ' +
          'paused) or "false"; it is reconciled as if the label were not there',
      ],
      [
        'Warning',
        `module ${mod.name}: ModuleTemplate ${klm().namespace}/${template} has label operator.kyma-project.io/beta: ` +
          '"yes" means nothing: it takes "true" (only Kymas labelled beta may use it) or "false", in any case; it is ' +
          'offered to every Kyma, as if it were not beta',
      ],
    ]);
  });

  it('honours a version pin regardless of channels', async () => {
    const name = uniqueName('kyma');
    await klm().kube.create(
      kymaObject(klm().namespace, name, { channel: 'fast', modules: [{ name: 'greeter', version: '1.0.0' }] }),
    );
    const kyma = await kymaInState(klm(), name, 'Ready');
    expect(kyma.status?.modules?.[0]).toMatchObject({
      name: 'greeter',
      version: '1.0.0',
      template: { metadata: { name: 'greeter-1.0.0' } },
    });
    expect(await klm().kube.get('v1', 'ConfigMap', 'greeter-config', `${name}-system`)).toBeUndefined();
  });

  it('reports an unknown module, an unknown channel and a missing template precisely, and keeps the other modules Ready', async () => {
    await klm().kube.apply(
      moduleReleaseMeta('ghost', 'kyma-project.io/module/ghost', klm().namespace, { regular: '9.9.9' }),
    );
    const name = uniqueName('kyma');
    await klm().kube.create(
      kymaObject(klm().namespace, name, {
        channel: 'regular',
        modules: [{ name: 'nosuch' }, { name: 'greeter', channel: 'nightly' }, { name: 'ghost' }, { name: 'counter' }],
      }),
    );
    const kyma = await kymaInState(klm(), name, 'Error');
    const modules = Object.fromEntries((kyma.status?.modules ?? []).map((m) => [m.name, m]));
    expect(modules.nosuch).toMatchObject({
      state: 'Error',
      message: `module "nosuch" is unknown: no ModuleReleaseMeta "nosuch" in namespace "${klm().namespace}"`,
    });
    expect(modules.greeter).toMatchObject({
      state: 'Error',
      message: `module "greeter" has no version for channel "nightly" in ModuleReleaseMeta ${klm().namespace}/greeter (channels: regular, fast)`,
    });
    expect(modules.ghost).toMatchObject({
      state: 'Error',
      message: `module "ghost": no ModuleTemplate "ghost-9.9.9" in namespace "${klm().namespace}" for version 9.9.9 of channel "regular"`,
    });
    await eventually('counter to be Ready', async () =>
      (await getKyma(klm(), name))?.status?.modules?.find((m) => m.name === 'counter')?.state === 'Ready'
        ? true
        : undefined,
    );
  });
});

describe('a tampered registry blob', () => {
  const klm = useKlm();

  it('puts the module in Error with a digest reason and applies nothing', async () => {
    const { versions } = await loadSamples();
    const greeter = versions.find((v) => v.name === 'greeter' && v.version === '1.0.0')!;
    const broken = {
      ...greeter,
      name: 'broken',
      component: `kyma-project.io/module/broken-${klm().namespace}`,
      manifest: greeter.manifest.replaceAll('greeter-manager', 'broken-manager'),
    };
    const descriptor = await pushModuleVersion(stackInfo().registryHost, broken);
    await klm().kube.apply(moduleTemplate(broken, klm().namespace, descriptor));
    await klm().kube.apply(moduleReleaseMeta('broken', broken.component, klm().namespace, { regular: '1.0.0' }));
    // Swap the layer's content in the registry's storage.
    const access = (descriptor.component as { resources: { access: { localReference: string } }[] }).resources[0]!
      .access;
    const hex = access.localReference.slice('sha256:'.length);
    const file = path.join(
      stackInfo().dir,
      'registry-data',
      'docker/registry/v2/blobs/sha256',
      hex.slice(0, 2),
      hex,
      'data',
    );
    await writeFile(
      file,
      tarOneFile('raw-manifest.yaml', Buffer.from('apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: injected\n')),
    );

    const name = uniqueName('kyma');
    await klm().kube.create(kymaObject(klm().namespace, name, { channel: 'regular', modules: [{ name: 'broken' }] }));
    const kyma = await kymaInState(klm(), name, 'Error');
    expect(kyma.status?.modules?.[0]?.message).toContain(`should have digest ${access.localReference}`);
    const manifest = await klm().kube.get<Manifest & KubeObject>(
      API_VERSION,
      'Manifest',
      manifestName(name, 'broken'),
      klm().namespace,
    );
    expect(manifest?.status?.conditions?.[0]).toMatchObject({ reason: 'DigestMismatch', status: 'False' });
    expect(await klm().kube.get('v1', 'ConfigMap', 'injected', `${name}-system`)).toBeUndefined();
    expect(await klm().kube.get('apps/v1', 'Deployment', 'broken-manager', `${name}-system`)).toBeUndefined();
  });
});

describe('following the module', () => {
  const klm = useKlm();

  it("follows the module CR's state to Error and back, long before the drift timer", async () => {
    const name = uniqueName('kyma');
    await klm().kube.create(
      kymaObject(klm().namespace, name, { channel: 'regular', modules: [{ name: 'greeter' }, { name: 'counter' }] }),
    );
    await kymaInState(klm(), name, 'Ready');
    const cr = ['greeter.example.io/v1alpha1', 'Greeter', 'default', `${name}-system`] as const;
    const started = Date.now();
    await klm().kube.mergePatch(...cr, { spec: { simulateState: 'Error', simulateMessage: 'backend unreachable' } });
    const failed = await kymaInState(klm(), name, 'Error', 30_000);
    expect(failed.status?.modules?.find((m) => m.name === 'greeter')).toMatchObject({
      state: 'Error',
      message: `Greeter ${name}-system/default is Error: backend unreachable`,
    });
    await klm().kube.mergePatch(...cr, { spec: { simulateState: null, simulateMessage: null } });
    await kymaInState(klm(), name, 'Ready', 30_000);
    // The drift timer is 5 minutes here: only watch events can explain this.
    expect(Date.now() - started).toBeLessThan(60_000);
  });

  it('restores a manager Deployment deleted by hand', async () => {
    const name = uniqueName('kyma');
    await klm().kube.create(kymaObject(klm().namespace, name, { channel: 'regular', modules: [{ name: 'greeter' }] }));
    await kymaInState(klm(), name, 'Ready');
    const before = await klm().kube.get('apps/v1', 'Deployment', 'greeter-manager', `${name}-system`);
    await klm().kube.delete('apps/v1', 'Deployment', 'greeter-manager', `${name}-system`);
    const after = await eventually(
      'the Deployment to come back',
      async () => {
        const d = await klm().kube.get('apps/v1', 'Deployment', 'greeter-manager', `${name}-system`);
        return d && d.metadata.uid !== before?.metadata.uid ? d : undefined;
      },
      30_000,
    );
    expect(after.metadata.name).toBe('greeter-manager');
    await kymaInState(klm(), name, 'Ready', 30_000);
  });
});
