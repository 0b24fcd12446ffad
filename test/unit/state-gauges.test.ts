// The state gauges as a scrape shows them: upstream's names, labels and state values.
import { afterEach, describe, expect, it } from 'vitest';
import { exportFleetStates, registry } from '../../src/infra/metrics';

let stop: (() => void) | undefined;
afterEach(() => stop?.());

async function series(name: string): Promise<string[]> {
  return (await registry.getSingleMetricAsString(name)).split('\n').filter((l) => l.startsWith(`${name}{`));
}

describe('the fleet state gauges', () => {
  it("label each Kyma's and module's state with upstream's labels and one series per upstream state", async () => {
    stop = exportFleetStates(() => ({
      kymas: [{ namespace: 'kcp', name: 'k1', state: 'Ready', shoot: 'c-1', instanceId: 'i1' }],
      modules: [
        { namespace: 'kcp', kyma: 'k1', module: 'greeter', state: 'Unmanaged', shoot: 'c-1', instanceId: 'i1' },
      ],
      mandatoryModules: [{ namespace: 'kcp', kyma: 'k1', module: 'warden', state: 'Error' }],
      mandatoryModuleCounts: [{ namespace: 'kcp', count: 1 }],
    }));
    expect(await series('lifecycle_mgr_kyma_state')).toEqual(
      ['Ready', 'Processing', 'Error', 'Deleting', 'Warning'].map(
        (s) =>
          `lifecycle_mgr_kyma_state{kyma_name="k1",kyma_namespace="kcp",shoot="c-1",instance_id="i1",state="${s}"} ${s === 'Ready' ? 1 : 0}`,
      ),
    );
    expect(await series('lifecycle_mgr_module_state')).toEqual(
      ['Ready', 'Processing', 'Error', 'Deleting', 'Warning', 'Unmanaged'].map(
        (s) =>
          `lifecycle_mgr_module_state{kyma_name="k1",kyma_namespace="kcp",module_name="greeter",shoot="c-1",instance_id="i1",state="${s}"} ` +
          `${s === 'Unmanaged' ? 1 : 0}`,
      ),
    );
    expect(await series('lifecycle_mgr_mandatory_module_state')).toEqual(
      ['Ready', 'Processing', 'Error', 'Deleting', 'Warning'].map(
        (s) =>
          `lifecycle_mgr_mandatory_module_state{kyma_name="k1",kyma_namespace="kcp",module_name="warden",state="${s}"} ${s === 'Error' ? 1 : 0}`,
      ),
    );
    expect(await series('lifecycle_mgr_mandatory_modules')).toEqual([
      'lifecycle_mgr_mandatory_modules{kyma_namespace="kcp"} 1',
    ]);
  });

  it('export no series where nothing exports the fleet (a worker)', async () => {
    for (const name of [
      'lifecycle_mgr_kyma_state',
      'lifecycle_mgr_module_state',
      'lifecycle_mgr_mandatory_module_state',
      'lifecycle_mgr_mandatory_modules',
    ])
      expect(await series(name)).toEqual([]);
  });
});
