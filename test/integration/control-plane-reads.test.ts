// The worker reads the control plane from its cache: an install, a promotion and the status
// writes cost no GET of a template, release meta or Manifest, and the Kyma is read from the API
// server only while the cache does not hold it yet. Readiness checks read the manager and the
// default CR from the cluster only when the bridge has not told what its watch saw.
import { describe, expect, it } from 'vitest';
import { API_VERSION } from '../../src/api/shared';
import { kubeConfigFromFile } from '../../src/k8s/kubeconfig';
import { KubeClient } from '../../src/k8s/rest-client';
import { eventually, getKyma, kymaInState, kymaObject, useKlm } from '../support/klm';
import { stackInfo, uniqueName } from '../support/stack';

/** GETs of single objects by kind, as the worker sends them. */
const gets = new Map<string, number>();

async function countingClient(): Promise<KubeClient> {
  const client = await KubeClient.fromKubeConfig(kubeConfigFromFile(stackInfo().kubeconfig));
  const get = client.get.bind(client);
  client.get = async (apiVersion: string, kind: string, name: string, namespace?: string) => {
    gets.set(kind, (gets.get(kind) ?? 0) + 1);
    return await get(apiVersion, kind, name, namespace);
  };
  return client;
}

describe('control-plane reads', async () => {
  const workerKcp = await countingClient();
  const klm = useKlm({ workerKcp });

  it(
    'installs two modules and follows a promotion without reading templates, release metas or ' +
      'Manifests, and reads each manager and CR once per install',
    async () => {
      const name = uniqueName('kyma');
      gets.clear();
      await klm().kube.create(
        kymaObject(klm().namespace, name, { channel: 'regular', modules: [{ name: 'greeter' }, { name: 'counter' }] }),
      );
      await kymaInState(klm(), name, 'Ready');
      await klm().kube.mergePatch(API_VERSION, 'ModuleReleaseMeta', 'greeter', klm().namespace, {
        spec: {
          channels: [
            { channel: 'regular', version: '1.1.0' },
            { channel: 'fast', version: '1.1.0' },
          ],
        },
      });
      await eventually('greeter 1.1.0 Ready', async () => {
        const kyma = await getKyma(klm(), name);
        return (
          kyma?.status?.state === 'Ready' && kyma.status.modules?.find((m) => m.name === 'greeter')?.version === '1.1.0'
        );
      });
      expect(gets.get('ModuleTemplate') ?? 0).toBe(0);
      expect(gets.get('ModuleReleaseMeta') ?? 0).toBe(0);
      expect(gets.get('Manifest') ?? 0).toBe(0);
      // At most the first load (the cache may not hold a Kyma created a moment ago) and a finalizer
      // write that found the cached Kyma outdated.
      expect(gets.get('Kyma') ?? 0).toBeLessThanOrEqual(2);
      // Readiness reads a manager and a CR once after each of the three installs at most: later
      // checks use what the bridge's watch saw (these Kymas target the control plane itself). A
      // first install also reads each object once before it applies it (did it create it, or find
      // it there?): the two managers; the upgrade's manager was its own already.
      expect(gets.get('Deployment') ?? 0).toBeLessThanOrEqual(3 + 2);
      expect((gets.get('Greeter') ?? 0) + (gets.get('Counter') ?? 0)).toBeLessThanOrEqual(3);
    },
  );
});
