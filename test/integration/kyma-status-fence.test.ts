// The Kyma's one status writer against a late write: a local activity of a workflow task that
// timed out goes on running and may land after the task's retry wrote a newer status (seen at
// 2,000 runtimes: Kymas whose workflows were Ready stayed Processing in their status for good).
// Against the real API server, since the fence rests on its resourceVersion check of a status patch.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API_VERSION, type KubeObject } from '../../src/api/shared';
import type { Kyma, KymaStatusInput } from '../../src/api/kyma';
import { controlPlaneCache } from '../../src/activities';
import { kymaActivities, STALE_WRITE_MS } from '../../src/activities/kyma';
import { KubeApiError } from '../../src/k8s/request-errors';
import { KubeClient } from '../../src/k8s/rest-client';
import { kubeConfigFromFile } from '../../src/k8s/kubeconfig';
import { TargetClusters } from '../../src/k8s/target-cluster';
import type { ObjectCache } from '../../src/k8s/object-cache';
import { stackInfo, uniqueName } from '../support/stack';

const ns = 'default';

function status(state: 'Ready' | 'Processing', operation: string): KymaStatusInput {
  return {
    state,
    modules: [],
    conditions: [
      {
        type: 'Modules',
        status: state === 'Ready' ? 'True' : 'False',
        reason: state === 'Ready' ? 'Ready' : 'Processing',
        message: operation,
      },
    ],
    lastOperation: { operation },
  };
}

describe("the Kyma's status writer", () => {
  let kcp: KubeClient;
  let cache: ObjectCache;
  beforeAll(async () => {
    kcp = await KubeClient.fromKubeConfig(kubeConfigFromFile(stackInfo().kubeconfig));
    cache = controlPlaneCache(kcp);
    await cache.start();
  });
  afterAll(() => {
    cache?.stop();
    kcp?.close();
  });

  async function freshKyma(): Promise<{ name: string; uid: string }> {
    const name = uniqueName('kyma');
    const created = await kcp.create({
      apiVersion: API_VERSION,
      kind: 'Kyma',
      metadata: { name, namespace: ns },
      spec: { channel: 'regular', modules: [] },
    } as unknown as Kyma & KubeObject);
    return { name, uid: created.metadata.uid! };
  }
  const read = async (name: string) => (await kcp.get<Kyma & KubeObject>(API_VERSION, 'Kyma', name, ns))!;

  it('does not put back an older status over a newer one: a write decided more than STALE_WRITE_MS before the one there is not made', async () => {
    const acts = kymaActivities(kcp, cache, new TargetClusters(kcp));
    const { name, uid } = await freshKyma();
    const retry = Date.now();
    await acts.writeKymaStatus({
      kyma: { namespace: ns, name },
      uid,
      status: status('Ready', 'all modules are ready'),
      at: retry,
    });
    // The timed-out task's write, decided a task timeout (10 s) before its retry, lands now.
    await acts.writeKymaStatus({
      kyma: { namespace: ns, name },
      uid,
      status: status('Processing', 'waiting for the manager'),
      at: retry - 10_000,
    });
    expect((await read(name)).status).toMatchObject({
      state: 'Ready',
      lastOperation: { operation: 'all modules are ready', lastUpdateTime: new Date(retry).toISOString() },
    });

    // Within the margin (clocks of workers and Temporal differ a little) and later writes are made.
    await acts.writeKymaStatus({
      kyma: { namespace: ns, name },
      uid,
      status: status('Processing', 'a module added'),
      at: retry - STALE_WRITE_MS + 1_000,
    });
    expect((await read(name)).status?.lastOperation?.operation).toBe('a module added');
    await acts.writeKymaStatus({
      kyma: { namespace: ns, name },
      uid,
      status: status('Ready', 'ready again'),
      at: retry + 1_000,
    });
    expect((await read(name)).status).toMatchObject({ state: 'Ready', lastOperation: { operation: 'ready again' } });
  });

  it(
    'reads afresh when its read was older than the Kyma (the API server refuses a status patch ' +
      'at an old resourceVersion), and then does not write late',
    async () => {
      const { name, uid } = await freshKyma();
      const before = await read(name);
      // Another writer's newer status, which this worker's cache has not seen yet.
      const at = Date.now();
      await kcp.mergePatch(
        API_VERSION,
        'Kyma',
        name,
        ns,
        {
          status: {
            ...status('Ready', 'newer'),
            conditions: [],
            lastOperation: { operation: 'newer', lastUpdateTime: new Date(at).toISOString() },
          },
        },
        'status',
      );
      const refused = await kcp
        .mergePatch(
          API_VERSION,
          'Kyma',
          name,
          ns,
          { metadata: { resourceVersion: before.metadata.resourceVersion }, status: { state: 'Processing' } },
          'status',
        )
        .catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(KubeApiError);
      expect((refused as KubeApiError).status).toBe(409);

      // A cache that still shows the Kyma as it was before: the activity's guarded patch meets the conflict, reads afresh, and sees it is late.
      const stale = { get: () => Promise.resolve(before), list: () => Promise.resolve([]) } as unknown as ObjectCache;
      const acts = kymaActivities(kcp, stale, new TargetClusters(kcp));
      await acts.writeKymaStatus({
        kyma: { namespace: ns, name },
        uid,
        status: status('Processing', 'late'),
        at: at - 10_000,
      });
      expect((await read(name)).status).toMatchObject({ state: 'Ready', lastOperation: { operation: 'newer' } });
    },
  );
});
