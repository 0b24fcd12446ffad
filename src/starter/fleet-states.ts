// The fleet's states for the Prometheus gauges, read from the bridge's informers at each scrape:
// each Kyma's state from its status (with upstream's `shoot` and `instance_id` labels), each
// module's from its Manifest. Objects without a state yet are left out.
import { LABELS, RUNTIME_LABELS, type KubeObject } from '../api/shared';
import type { FleetStates } from '../infra/metrics';

type WithState = KubeObject & { status?: { state?: string } };

export function fleetStates(kymas: readonly KubeObject[], manifests: readonly KubeObject[]): FleetStates {
  const out: FleetStates = { kymas: [], modules: [] };
  for (const k of kymas as readonly WithState[]) {
    const state = k.status?.state;
    if (!state) continue;
    const labels = k.metadata.labels ?? {};
    const shoot = labels[RUNTIME_LABELS.shootName];
    const instanceId = labels[RUNTIME_LABELS.instanceId];
    out.kymas.push({ namespace: k.metadata.namespace ?? '', name: k.metadata.name, state, ...(shoot ? { shoot } : {}), ...(instanceId ? { instanceId } : {}) });
  }
  for (const m of manifests as readonly WithState[]) {
    const state = m.status?.state;
    const kyma = m.metadata.labels?.[LABELS.kymaName];
    const module = m.metadata.labels?.[LABELS.moduleName];
    if (!state || !kyma || !module) continue;
    out.modules.push({ namespace: m.metadata.namespace ?? '', kyma, module, state });
  }
  return out;
}
