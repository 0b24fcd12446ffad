// A policy ConfigMap the worker may not read is a problem the policy's users show, not a retry.
import { describe, expect, it } from 'vitest';
import { readPolicyConfigMap } from '../../src/activities/policy-configmap';
import { KubeApiError } from '../../src/k8s/request-errors';
import { type KubeClient } from '../../src/k8s/rest-client';

const client = (get: () => Promise<unknown>) => ({ get }) as unknown as KubeClient;

describe('reading a policy ConfigMap', () => {
  it('gives its data, or nothing when it does not exist', async () => {
    expect(
      await readPolicyConfigMap(
        client(() => Promise.resolve({ data: { default: 'soak: 0s' } })),
        'kcp-system',
        'klm-rollout-policy',
      ),
    ).toEqual({ data: { default: 'soak: 0s' } });
    expect(
      await readPolicyConfigMap(
        client(() => Promise.resolve(undefined)),
        'kcp-system',
        'klm-rollout-policy',
      ),
    ).toEqual({});
  });

  it('turns a refusal into a problem that names the ConfigMap and what to grant', async () => {
    const refused = client(async () =>
      Promise.reject(new KubeApiError(403, 'Forbidden', 'configmaps "klm-rollout-policy" is forbidden')),
    );
    expect(await readPolicyConfigMap(refused, 'kcp-system', 'klm-rollout-policy')).toEqual({
      problem:
        'ConfigMap kcp-system/klm-rollout-policy cannot be read: the worker may not get ConfigMaps in kcp-system (grant it, see deploy/kustomize/base)',
    });
  });

  it('lets other failures through, to be retried', async () => {
    await expect(
      readPolicyConfigMap(
        client(async () => Promise.reject(new KubeApiError(500, 'InternalError', 'etcd timeout'))),
        'kcp-system',
        'x',
      ),
    ).rejects.toThrow('etcd timeout');
  });
});
