import { describe, expect, it } from 'vitest';
import { moduleReleaseMeta, moduleTemplate, pushModuleVersion } from '../../src/publish/module';
import { loadSamples } from '../../src/samples/modules';
import { LABELS } from '../../src/api/shared';
import {
  createKymaWithBrokenSecret,
  eventually,
  fixKubeconfigSecret,
  getKyma,
  kymaInState,
  kymaObject,
  kymaWorkflowId,
  useKlm,
} from '../support/klm';
import { installsFor } from '../support/history';
import { readFile } from 'node:fs/promises';
import { stackInfo, uniqueName } from '../support/stack';
import { testModule } from '../support/modules';
import { KWOK_NODE } from '../../src/localstack/kwok';
import { TargetClusters } from '../../src/k8s/target-cluster';

describe('with a fast drift timer', () => {
  const klm = useKlm({ settings: { driftIntervalMs: 1500 } });

  it('re-applies on the drift timer without changing anything in the API server', async () => {
    const name = uniqueName('kyma');
    await klm().kube.create(kymaObject(klm().namespace, name, { channel: 'regular', modules: [{ name: 'greeter' }] }));
    await kymaInState(klm(), name, 'Ready');
    const ns = `${name}-system`;
    const read = async () =>
      (
        await Promise.all([
          klm().kube.get('apps/v1', 'Deployment', 'greeter-manager', ns),
          klm().kube.get('v1', 'ServiceAccount', 'greeter-manager', ns),
          klm().kube.get('apiextensions.k8s.io/v1', 'CustomResourceDefinition', 'greeters.greeter.example.io'),
        ])
      ).map((o) => o?.metadata.resourceVersion);
    const before = await read();
    expect(before.every(Boolean)).toBe(true);
    // Several drift cycles re-apply the same objects ...
    const startedEvents = () => installsFor(klm(), name, 'greeter');
    const applies = await startedEvents();
    await eventually('two more applies', async () => (await startedEvents()) >= applies + 2 || undefined, 30_000);
    // ... and the API server kept every object as it was.
    expect(await read()).toEqual(before);
  });
});

describe('with a low history limit', () => {
  const klm = useKlm({ settings: { driftIntervalMs: 1500, maxHistoryEvents: 60 } });

  it('continues as new once history passes the limit and stays Ready', async () => {
    const name = uniqueName('kyma');
    await klm().kube.create(kymaObject(klm().namespace, name, { channel: 'regular', modules: [{ name: 'counter' }] }));
    await kymaInState(klm(), name, 'Ready');
    // The Kyma's workflow, which runs its module too.
    const id = kymaWorkflowId(klm().namespace, name);
    const continued = await eventually(
      'a continued-as-new run',
      async () => {
        const runs: string[] = [];
        for await (const wf of klm().client.workflow.list({
          query: `WorkflowId = '${id}' AND ExecutionStatus = 'ContinuedAsNew'`,
        }))
          runs.push(wf.runId);
        return runs.length ? runs : undefined;
      },
      60_000,
    );
    expect(continued.length).toBeGreaterThan(0);
    const desc = await klm().client.workflow.getHandle(id).describe();
    expect(desc.status.name).toBe('RUNNING');
    expect(desc.runId).not.toBe(continued[0]);
    await kymaInState(klm(), name, 'Ready');
  });
});

describe('with a short run age and a long drift timer', () => {
  const klm = useKlm({ settings: { maxRunAgeMs: 10_000, driftIntervalMs: 10 * 60_000, maxModulesPerKyma: 1 } });

  /** The runs of a Kyma's workflow that continued as new. */
  async function continuedRuns(name: string): Promise<string[] | undefined> {
    const runs: string[] = [];
    for await (const wf of klm().client.workflow.list({
      query: `WorkflowId = '${kymaWorkflowId(klm().namespace, name)}' AND ExecutionStatus = 'ContinuedAsNew'`,
    }))
      runs.push(wf.runId);
    return runs.length ? runs : undefined;
  }

  it(
    'continues a run as new once it is that old: a Ready Kyma’s by its drift timer, armed to fire by then, ' +
      'an invalid Kyma’s (which waits with no drift timer) by a timer of its own',
    async () => {
      const [ready, invalid] = [uniqueName('kyma'), uniqueName('kyma')];
      await klm().kube.create(
        kymaObject(klm().namespace, ready, { channel: 'regular', modules: [{ name: 'counter' }] }),
      );
      await klm().kube.create(
        kymaObject(klm().namespace, invalid, {
          channel: 'regular',
          modules: [{ name: 'counter' }, { name: 'greeter' }],
        }),
      );
      await kymaInState(klm(), ready, 'Ready');
      for (const name of [ready, invalid])
        expect(await eventually(`a continued run of ${name}`, () => continuedRuns(name), 60_000)).not.toHaveLength(0);
      await kymaInState(klm(), ready, 'Ready');
      const status = (await getKyma(klm(), invalid))?.status;
      expect(status?.conditions?.map((c) => c.reason)).toContain('ModuleLimitExceeded');
    },
  );
});

describe('a Kyma with a kubeconfig Secret', () => {
  const klm = useKlm();

  it('installs into the cluster the Secret names', async () => {
    const name = uniqueName('kyma');
    // The local stack has one API server: the Secret points at it, through the same path a
    // remote cluster takes (the activity reads the Secret, builds a client from it).
    const kubeconfig = await readFile(stackInfo().kubeconfig);
    await klm().kube.create({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: `${name}-kubeconfig`, namespace: klm().namespace, labels: { [LABELS.kymaName]: name } },
      data: { config: kubeconfig.toString('base64') },
    });
    await klm().kube.create(kymaObject(klm().namespace, name, { channel: 'regular', modules: [{ name: 'greeter' }] }));
    await kymaInState(klm(), name, 'Ready');
    expect(await klm().kube.get('apps/v1', 'Deployment', 'greeter-manager', `${name}-system`)).toBeDefined();
  });

  it('never falls back to the control plane when the Secret disappears', async () => {
    const name = uniqueName('kyma');
    const secret = `${name}-kubeconfig`;
    const kubeconfig = await readFile(stackInfo().kubeconfig);
    await klm().kube.create({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: secret, namespace: klm().namespace, labels: { [LABELS.kymaName]: name } },
      data: { config: kubeconfig.toString('base64') },
    });
    await klm().kube.create(kymaObject(klm().namespace, name, { channel: 'regular', modules: [{ name: 'greeter' }] }));
    await kymaInState(klm(), name, 'Ready');
    await klm().kube.delete('v1', 'Secret', secret, klm().namespace);
    // Workers re-use a Secret lookup for a few seconds; then something happens in the
    // (formerly) target cluster and the module looks again.
    await new Promise((r) => setTimeout(r, TargetClusters.SECRET_TTL_MS + 500));
    await klm().kube.delete('apps/v1', 'Deployment', 'greeter-manager', `${name}-system`);
    const kyma = await kymaInState(klm(), name, 'Error');
    expect(kyma.status?.modules?.[0]?.message).toContain(
      `the kubeconfig Secret of Kyma ${klm().namespace}/${name} is gone; refusing to fall back to the control-plane cluster`,
    );
  });

  it('goes Error with a clear message when the Secret holds no kubeconfig', async () => {
    const name = uniqueName('kyma');
    await klm().kube.create({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: `${name}-kubeconfig`, namespace: klm().namespace, labels: { [LABELS.kymaName]: name } },
      data: { other: 'eA==' },
    });
    await klm().kube.create(kymaObject(klm().namespace, name, { channel: 'regular', modules: [{ name: 'greeter' }] }));
    // The Kyma turns Error at once (its runtime cannot be read); the module says why once its install tried.
    const kyma = await kymaInState(klm(), name, 'Error');
    expect(kyma.status?.conditions?.find((c) => c.type === 'Runtime')).toMatchObject({
      status: 'False',
      reason: 'InvalidKubeconfig',
    });
    const entry = await eventually('the module to say why', async () =>
      (await getKyma(klm(), name))?.status?.modules?.find((m) => m.state === 'Error'),
    );
    expect(entry.message).toContain(
      `Secret ${klm().namespace}/${name}-kubeconfig holds no kubeconfig under the key "config"`,
    );
  });
});

describe('a module whose CRD never becomes Established', () => {
  const klm = useKlm({ settings: { crdEstablishedTimeoutMs: 3000 } });

  it('goes Error "CRD not established" after the configured timeout', async () => {
    const { versions } = await loadSamples();
    const greeter = versions.find((v) => v.name === 'greeter' && v.version === '1.0.0')!;
    // A second CRD in greeter's group that claims greeter's singular name: the API server
    // never accepts its names, so it is never Established.
    const clash = [
      'apiVersion: apiextensions.k8s.io/v1',
      'kind: CustomResourceDefinition',
      'metadata: {name: clashes.greeter.example.io}',
      'spec:',
      '  group: greeter.example.io',
      '  names: {kind: Clash, plural: clashes, singular: greeter, listKind: ClashList}',
      '  scope: Namespaced',
      '  versions: [{name: v1alpha1, served: true, storage: true, schema: {openAPIV3Schema: {type: object}}}]',
    ].join('\n');
    const m = {
      ...greeter,
      name: 'clash',
      component: `kyma-project.io/module/clash-${klm().namespace}`,
      manifest: `${greeter.manifest}\n---\n${clash}\n`,
      defaultCR: undefined,
    };
    const descriptor = await pushModuleVersion(stackInfo().registryHost, m);
    await klm().kube.apply(moduleTemplate(m, klm().namespace, descriptor));
    await klm().kube.apply(moduleReleaseMeta('clash', m.component, klm().namespace, { regular: '1.0.0' }));
    const name = uniqueName('kyma');
    await klm().kube.create(kymaObject(klm().namespace, name, { channel: 'regular', modules: [{ name: 'clash' }] }));
    const kyma = await kymaInState(klm(), name, 'Error');
    expect(kyma.status?.modules?.[0]?.message).toContain('CRD not established within 3s: clashes.greeter.example.io');
    await eventually('a DependencyTimeout Event', async () =>
      (await klm().kube.list('v1', 'Event', { namespace: klm().namespace })).items.find(
        (e) =>
          (e as { reason?: string; involvedObject?: { name?: string } }).reason === 'DependencyTimeout' &&
          (e as { involvedObject?: { name?: string } }).involvedObject?.name === name,
      ),
    );
  });
});

describe('a module whose manager cannot become available', () => {
  const klm = useKlm({ settings: { managerAvailableTimeoutMs: 3000 } });

  it('goes Error naming the pod the scheduler cannot place, then Ready once a node for it appears', async () => {
    const mod = await testModule(klm());
    const label = `pool-${mod.name}`;
    // The manager only fits on a node that does not exist yet.
    await mod.publish('1.0.0', '', (manifest) =>
      manifest.replace('      serviceAccountName:', `      nodeSelector: {pool: ${label}}\n      serviceAccountName:`),
    );
    await mod.channels({ regular: '1.0.0' });
    const name = uniqueName('kyma');
    await klm().kube.create(kymaObject(klm().namespace, name, { channel: 'regular', modules: [{ name: mod.name }] }));
    const failed = await kymaInState(klm(), name, 'Error', 30_000);
    expect(failed.status?.modules?.[0]?.message).toMatch(
      /^manager Deployment \S+ cannot roll out \(0 of 1 updated replicas available\): pod \S+ cannot be scheduled: 0\/1 nodes are available: 1 node\(s\) didn't match Pod's node affinity\/selector/,
    );
    await klm().kube.create({
      ...KWOK_NODE,
      metadata: {
        ...KWOK_NODE.metadata,
        name: `node-${mod.name}`,
        labels: { ...KWOK_NODE.metadata.labels, pool: label, 'kubernetes.io/hostname': `node-${mod.name}` },
      },
    });
    await kymaInState(klm(), name, 'Ready', 60_000);
  });
});

describe('with a short install retry and the default drift timer', () => {
  const klm = useKlm({ settings: { installRetryMs: 1000 } });

  it('retries a failed install on its own: a fixed kubeconfig Secret brings the module up without any other change', async () => {
    const name = uniqueName('kyma');
    await createKymaWithBrokenSecret(klm(), name, [{ name: 'greeter' }]);
    const failed = await eventually('the module to say why', async () =>
      (await getKyma(klm(), name))?.status?.modules?.find((m) => m.state === 'Error'),
    );
    expect(failed.message).toContain('holds no kubeconfig');
    // Nothing pokes the module workflow when a Secret changes; only its retry timer can notice
    // (the drift timer is ten minutes away).
    await fixKubeconfigSecret(klm(), name);
    await kymaInState(klm(), name, 'Ready', 60_000);
  });
});
