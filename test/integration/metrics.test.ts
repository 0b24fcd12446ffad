import { describe, expect, it } from 'vitest';
import { serveMetrics } from '../../src/infra/metrics';
import { createKymaWithBrokenSecret, eventually, kymaInState, kymaObject, useKlm } from '../support/klm';
import { uniqueName } from '../support/stack';

describe('Prometheus metrics', () => {
  const klm = useKlm();

  it('exposes Kyma and module states, activity latencies, failures by reason and bridge signals on /metrics', async () => {
    const server = await serveMetrics(0);
    try {
      const scrape = async () => (await fetch(`http://127.0.0.1:${server.port}/metrics`)).text();
      const name = uniqueName('kyma');
      const ns = klm().namespace;
      await klm().kube.create(kymaObject(ns, name, { channel: 'regular', modules: [{ name: 'greeter' }] }));
      await kymaInState(klm(), name, 'Ready');
      // A Kyma whose target Secret is broken: a typed, expected failure.
      const broken = uniqueName('kyma');
      await createKymaWithBrokenSecret(klm(), broken, [{ name: 'greeter' }]);
      await kymaInState(klm(), broken, 'Error');

      const text = await eventually('the module state to be exported', async () => {
        const t = await scrape();
        return t.includes(`lifecycle_mgr_module_state{kyma_name="${name}",kyma_namespace="${ns}",module_name="greeter",state="Ready"} 1`) ? t : undefined;
      });
      expect(text).toContain(`lifecycle_mgr_kyma_state{kyma_name="${name}",kyma_namespace="${ns}",state="Ready"} 1`);
      expect(text).toContain(`lifecycle_mgr_kyma_state{kyma_name="${name}",kyma_namespace="${ns}",state="Processing"} 0`);
      expect(text).toContain(`lifecycle_mgr_kyma_state{kyma_name="${broken}",kyma_namespace="${ns}",state="Error"} 1`);
      expect(text).toMatch(/lifecycle_mgr_requeue_reason_total\{requeue_reason="InvalidKubeconfig",requeue_type="expected",activity="installModule"\} [1-9]/);
      expect(text).toMatch(/klm_activity_duration_seconds_count\{activity="installModule",outcome="ok"\} [1-9]/);
      expect(text).toMatch(/klm_bridge_signals_total\{signal="kymaChanged",outcome="ok"\} [1-9]/);
      expect(text).toMatch(/klm_bridge_signal_latency_seconds_count\{signal="resourceChanged"\} [1-9]/);
    } finally {
      await server.close();
    }
  });
});
