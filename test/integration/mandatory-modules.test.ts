// Mandatory modules on the real parts, with 50 Kymas: a ModuleReleaseMeta with
// .spec.mandatory.version installs its module on every Kyma of the namespace (not on one that
// skips reconciliation), without an entry in the Kymas' status; a new mandatory version moves
// them all through the rollout of the channel "mandatory"; deleting the ModuleReleaseMeta
// removes the module everywhere, and its finalizer holds it until the last one is gone.
import { beforeAll, describe, expect, it } from 'vitest';
import { kymaWorkflowId } from '../../src/api/names';
import { API_VERSION, KYMA_FINALIZER, LABELS, MANDATORY_FINALIZER, type KubeObject } from '../../src/api/shared';
import { rolloutProgress, rolloutWorkflowId } from '../../src/contract/rollout';
import { eventually, getKyma, kymaInState, kymaObject, useKlm } from '../support/klm';
import { testModule, type TestModule } from '../support/modules';
import { uniqueName } from '../support/stack';

const FLEET = 50;

describe('mandatory modules', () => {
  const klm = useKlm();
  let mod: TestModule;
  const fleet = Array.from({ length: FLEET }, (_, i) => uniqueName(`m${String(i).padStart(2, '0')}`));
  const [paused, listsIt] = [uniqueName('paused'), uniqueName('lists')];

  const releaseMeta = (version: string): KubeObject => ({
    apiVersion: API_VERSION,
    kind: 'ModuleReleaseMeta',
    metadata: { name: mod.name, namespace: klm().namespace },
    spec: { moduleName: mod.name, ocmComponentName: mod.component, mandatory: { version } },
  });
  /** The module's Manifests in the namespace, by Kyma. */
  const manifests = async () => {
    const { items } = await klm().kube.list<KubeObject & { spec: { version: string }; status?: { state?: string } }>(
      API_VERSION,
      'Manifest',
      { namespace: klm().namespace, labelSelector: `${LABELS.moduleName}=${mod.name}` },
    );
    return new Map(items.map((m) => [m.metadata.labels![LABELS.kymaName]!, m]));
  };
  const allAt = async (version: string) =>
    await eventually(
      `${FLEET} mandatory Manifests at ${version}, Ready`,
      async () => {
        const all = await manifests();
        return fleet.every(
          (k) =>
            all.get(k)?.spec.version === version &&
            all.get(k)?.status?.state === 'Ready' &&
            all.get(k)?.metadata.labels?.[LABELS.mandatoryModule] === 'true',
        )
          ? all
          : undefined;
      },
      240_000,
    );

  beforeAll(async () => {
    mod = await testModule(klm());
    for (const v of ['1.0.0', '1.1.0']) await mod.publish(v, undefined, undefined, { descriptor: 'inline' });
    const ns = klm().namespace;
    for (const k of fleet) await klm().kube.create(kymaObject(ns, k, { channel: 'regular', modules: [] }));
    const skip = kymaObject(ns, paused, { channel: 'regular', modules: [] });
    skip.metadata.labels = { [LABELS.skipReconciliation]: 'true' };
    await klm().kube.create(skip);
    await klm().kube.create(kymaObject(ns, listsIt, { channel: 'regular', modules: [{ name: mod.name }] }));
    for (const k of fleet) await kymaInState(klm(), k, 'Ready');
  }, 600_000);

  it(
    'installs the module on every Kyma that does not skip reconciliation, lists it in no ' +
      'status, and puts its finalizer on the ModuleReleaseMeta',
    async () => {
      await klm().kube.apply(releaseMeta('1.0.0'));
      const all = await allAt('1.0.0');
      expect(all.has(paused)).toBe(false);
      expect(await klm().kube.get('apps/v1', 'Deployment', `${mod.name}-manager`, `${fleet[0]}-system`)).toBeDefined();
      // A Kyma that lists the module has it as its own: in its status, its Manifest not mandatory.
      await eventually('the listing Kyma shows the mandatory version', async () =>
        (await getKyma(klm(), listsIt))?.status?.modules?.find(
          (m) => m.name === mod.name && m.version === '1.0.0' && m.state === 'Ready',
        ),
      );
      expect((await manifests()).get(listsIt)?.metadata.labels?.[LABELS.mandatoryModule]).toBeUndefined();
      for (const k of fleet.slice(0, 5)) {
        const kyma = await getKyma(klm(), k);
        expect(kyma?.status?.state).toBe('Ready');
        expect(kyma?.status?.modules ?? []).toEqual([]);
      }
      const meta = await klm().kube.get(API_VERSION, 'ModuleReleaseMeta', mod.name, klm().namespace);
      expect(meta?.metadata.finalizers).toContain(MANDATORY_FINALIZER);
      // The paused Kyma was read (its run's first local activity), and that read added no finalizer.
      const handle = klm().client.workflow.getHandle(kymaWorkflowId(klm().namespace, paused));
      await eventually('the paused Kyma read by its workflow', async () =>
        (await handle.fetchHistory()).events?.some((e) => e.markerRecordedEventAttributes),
      );
      expect((await getKyma(klm(), paused))?.metadata.finalizers ?? []).not.toContain(KYMA_FINALIZER);
      expect((await getKyma(klm(), fleet[0]!))?.metadata.finalizers).toContain(KYMA_FINALIZER);
    },
  );

  it('moves every Kyma to a new mandatory version through the rollout of the channel "mandatory"', async () => {
    await klm().kube.apply(releaseMeta('1.1.0'));
    await allAt('1.1.0');
    const progress = await eventually(
      'the mandatory rollout completed',
      async () => {
        const p = await klm()
          .client.workflow.getHandle(
            rolloutWorkflowId({ namespace: klm().namespace, module: mod.name, channel: 'mandatory' }),
          )
          .query(rolloutProgress)
          .catch(() => undefined);
        return p?.phase === 'Completed' && p.version === '1.1.0' ? p : undefined;
      },
      120_000,
    );
    expect(progress.waves.reduce((n, w) => n + w.done, 0)).toBe(FLEET);
  });

  it('removes the module from every Kyma when the ModuleReleaseMeta is deleted, which goes once the last one is gone', async () => {
    await klm().kube.delete(API_VERSION, 'ModuleReleaseMeta', mod.name, klm().namespace);
    // Held by its finalizer while 50 removals are under way.
    expect(
      (await klm().kube.get(API_VERSION, 'ModuleReleaseMeta', mod.name, klm().namespace))?.metadata.deletionTimestamp,
    ).toBeDefined();
    await eventually(
      'every mandatory Manifest gone',
      async () => {
        const all = await manifests();
        return fleet.every((k) => !all.has(k)) || undefined;
      },
      240_000,
    );
    await eventually(
      'the ModuleReleaseMeta gone',
      async () =>
        (await klm().kube.get(API_VERSION, 'ModuleReleaseMeta', mod.name, klm().namespace)) === undefined || undefined,
    );
    // Its manager is gone from the clusters of the Kymas that had it as mandatory.
    for (const k of fleet.slice(0, 5)) {
      expect(await klm().kube.get('apps/v1', 'Deployment', `${mod.name}-manager`, `${k}-system`)).toBeUndefined();
      expect((await getKyma(klm(), k))?.status?.state).toBe('Ready');
    }
    // The Kyma that lists the module keeps it, and says why it cannot be resolved any more.
    await eventually('the listing Kyma says the module is unknown', async () =>
      (await getKyma(klm(), listsIt))?.status?.modules?.find(
        (m) => m.name === mod.name && /unknown/.test(m.message ?? ''),
      ),
    );
    expect((await manifests()).has(listsIt)).toBe(true);
  });
});
