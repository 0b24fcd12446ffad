// Upstream's lifecycle_mgr_maintenance_window_config_read_success, set by each read of the policy ConfigMap.
import { describe, expect, it } from 'vitest';
import { checkMaintenancePolicy } from '../../src/activities/maintenance';
import { registry } from '../../src/infra/metrics';
import { KubeApiError } from '../../src/k8s/request-errors';
import { type KubeClient } from '../../src/k8s/rest-client';

const client = (get: () => Promise<unknown>) => ({ get }) as unknown as KubeClient;
const ref = { namespace: 'kcp-system', name: 'klm-maintenance-policy' };
const POLICY = JSON.stringify({ rules: [], default: { begin: '2026-01-01T00:00:00Z', end: '2026-01-01T04:00:00Z' } });

async function gauge(): Promise<string | undefined> {
  return (await registry.getSingleMetricAsString('lifecycle_mgr_maintenance_window_config_read_success'))
    .split('\n')
    .find((l) => !l.startsWith('#'));
}

describe('reading the maintenance-window policy', () => {
  it('exports no series before a policy is read (no KLM_MAINTENANCE_POLICY)', () => {
    expect(registry.getSingleMetric('lifecycle_mgr_maintenance_window_config_read_success')).toBeUndefined();
  });

  it('says 1 for a usable policy; 0, with why, for none, an invalid one or one it cannot read', async () => {
    expect(
      await checkMaintenancePolicy(
        client(() => Promise.resolve({ data: { 'policy.json': POLICY } })),
        ref,
      ),
    ).toBeUndefined();
    expect(await gauge()).toBe('lifecycle_mgr_maintenance_window_config_read_success 1');

    expect(
      await checkMaintenancePolicy(
        client(() => Promise.resolve(undefined)),
        ref,
      ),
    ).toBe(
      'ConfigMap kcp-system/klm-maintenance-policy or its key policy.json does not exist: no upgrade waits for a maintenance window',
    );
    expect(await gauge()).toBe('lifecycle_mgr_maintenance_window_config_read_success 0');

    await checkMaintenancePolicy(
      client(() => Promise.resolve({ data: { 'policy.json': POLICY } })),
      ref,
    );
    expect(
      await checkMaintenancePolicy(
        client(() => Promise.resolve({ data: { 'policy.json': '{}' } })),
        ref,
      ),
    ).toBe('ConfigMap kcp-system/klm-maintenance-policy key policy.json: it has no default window');
    expect(await gauge()).toBe('lifecycle_mgr_maintenance_window_config_read_success 0');

    await checkMaintenancePolicy(
      client(() => Promise.resolve({ data: { 'policy.json': POLICY } })),
      ref,
    );
    expect(
      await checkMaintenancePolicy(
        client(() => Promise.reject(new KubeApiError(500, 'InternalError', 'etcd timeout'))),
        ref,
      ),
    ).toContain('ConfigMap kcp-system/klm-maintenance-policy cannot be read: ');
    expect(await gauge()).toBe('lifecycle_mgr_maintenance_window_config_read_success 0');
  });
});
