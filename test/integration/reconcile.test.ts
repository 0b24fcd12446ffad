import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Manifest } from '../../src/api/manifest';
import { manifestName } from '../../src/api/names';
import { API_VERSION } from '../../src/api/shared';
import type { KubeObject } from '../../src/k8s/rest-client';
import { eventually, kymaInState, kymaObject, kymaWorkflowId, startKlm, type Klm } from '../support/klm';
import { uniqueName } from '../support/stack';

describe('core reconcile', () => {
  let klm: Klm;
  beforeAll(async () => {
    klm = await startKlm();
  });
  afterAll(async () => {
    await klm?.stop();
  });

  it('installs a Kyma with two modules until it is Ready', async () => {
    const name = uniqueName('kyma');
    await klm.kube.create(kymaObject(klm.namespace, name, { channel: 'regular', modules: [{ name: 'greeter' }, { name: 'counter' }] }));
    const kyma = await kymaInState(klm, name, 'Ready');

    expect(kyma.status?.activeChannel).toBe('regular');
    const modules = Object.fromEntries((kyma.status?.modules ?? []).map((m) => [m.name, m]));
    expect(modules.greeter).toMatchObject({ state: 'Ready', channel: 'regular', version: '1.0.0', template: { metadata: { name: 'greeter-1.0.0' } } });
    expect(modules.counter).toMatchObject({ state: 'Ready', channel: 'regular', version: '1.0.0', template: { metadata: { name: 'counter-1.0.0' } } });
    expect(modules.greeter?.resource).toMatchObject({ kind: 'Greeter', metadata: { name: 'default', namespace: `${name}-system` } });
    expect(kyma.status?.conditions?.find((c) => c.type === 'Modules')).toMatchObject({ status: 'True' });

    for (const module of ['greeter', 'counter']) {
      const manifest = await klm.kube.get<Manifest & KubeObject>(API_VERSION, 'Manifest', manifestName(name, module), klm.namespace);
      expect(manifest?.status?.state).toBe('Ready');
      expect(manifest?.status?.synced?.map((s) => s.kind)).toContain('Deployment');
      const deployment = await klm.kube.get('apps/v1', 'Deployment', `${module}-manager`, `${name}-system`);
      expect(deployment).toBeDefined();
    }

    const handle = klm.client.workflow.getHandle(kymaWorkflowId(klm.namespace, name));
    expect((await handle.describe()).status.name).toBe('RUNNING');
    const found = await eventually('the workflow to be listed as Ready', async () => {
      const ids: string[] = [];
      for await (const wf of klm.client.workflow.list({ query: `KymaName = '${name}' AND KymaState = 'Ready'` })) ids.push(wf.workflowId);
      return ids.length ? ids : undefined;
    });
    expect(found).toEqual([kymaWorkflowId(klm.namespace, name)]);
  });
});
