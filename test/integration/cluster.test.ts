import { describe, expect, it } from 'vitest';
import type { V1Deployment } from '@kubernetes/client-node';
import { kube, stackInfo, uniqueName } from '../support/stack';

describe('the full-profile local cluster', () => {
  it('reports its real Kubernetes version', async () => {
    const { kc } = kube();
    const { VersionApi } = await import('@kubernetes/client-node');
    const v = await kc.makeApiClient(VersionApi).getCode();
    expect(v.gitVersion).toBe(stackInfo().tools.kubeApiserver.match(/kubernetes-(v[\d.]+)/)?.[1]);
  });

  it('rolls a Deployment out until it is Available', async () => {
    const { api } = kube();
    const name = uniqueName('web');
    await api.create({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name, namespace: 'default' },
      spec: {
        replicas: 2,
        selector: { matchLabels: { app: name } },
        template: {
          metadata: { labels: { app: name } },
          spec: { containers: [{ name: 'web', image: 'example.invalid/web:1' }] },
        },
      },
    });
    const deadline = Date.now() + 90_000;
    let dep: V1Deployment;
    for (;;) {
      dep = await api.read<V1Deployment>({
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name, namespace: 'default' },
      });
      const available = dep.status?.conditions?.find((c) => c.type === 'Available');
      if (available?.status === 'True' && dep.status?.availableReplicas === 2) break;
      if (Date.now() > deadline) throw new Error(`Deployment ${name} not Available: ${JSON.stringify(dep.status)}`);
      await new Promise((r) => setTimeout(r, 250));
    }
    expect(dep.status?.readyReplicas).toBe(2);
  });
});
