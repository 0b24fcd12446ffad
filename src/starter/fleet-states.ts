// The fleet's states for the Prometheus gauges, read from the bridge's informers at each scrape,
// from where upstream takes them: each Kyma's state and its modules' from the Kyma's status, with
// upstream's `shoot` and `instance_id`; each mandatory module's from its Manifest (mandatory
// modules have no entry in the Kyma's status); the mandatory ModuleReleaseMetas per namespace.
// Objects without a state yet are left out.
import type { Kyma } from '../api/kyma';
import type { ModuleReleaseMeta } from '../api/modulereleasemeta';
import { INSTANCE_ID_LABEL, LABELS, SKR_DOMAIN_ANNOTATION, type KubeObject } from '../api/shared';
import type { FleetStates, RuntimeIds } from '../infra/metrics';

type WithState = KubeObject & { status?: { state?: string } };

/** Upstream's `shoot`: the first DNS label of the Kyma's `skr-domain` annotation, when the domain has more than two. */
export function shootOf(annotations: Record<string, string> | undefined): string | undefined {
  const labels = annotations?.[SKR_DOMAIN_ANNOTATION]?.split('.') ?? [];
  return labels.length > 2 && labels[0] ? labels[0] : undefined;
}

function runtimeIds(k: KubeObject): RuntimeIds {
  const shoot = shootOf(k.metadata.annotations);
  const instanceId = k.metadata.labels?.[INSTANCE_ID_LABEL];
  return { ...(shoot ? { shoot } : {}), ...(instanceId ? { instanceId } : {}) };
}

/** Each Kyma's state and its modules' (from its status); every namespace with a Kyma gets a mandatory count (0 so far). */
function kymaStates(kymas: readonly KubeObject[], out: FleetStates, counts: Map<string, number>): void {
  for (const k of kymas as readonly (KubeObject & Pick<Kyma, 'status'>)[]) {
    const namespace = k.metadata.namespace ?? '';
    counts.set(namespace, 0);
    const state = k.status?.state;
    if (!state) continue;
    const ids = runtimeIds(k);
    out.kymas.push({ namespace, name: k.metadata.name, state, ...ids });
    for (const m of k.status?.modules ?? [])
      if (m.state) out.modules.push({ namespace, kyma: k.metadata.name, module: m.name, state: m.state, ...ids });
  }
}

/** Each mandatory module's state, from its Manifest. */
function mandatoryModuleStates(manifests: readonly KubeObject[], out: FleetStates): void {
  for (const m of manifests as readonly WithState[]) {
    const state = m.status?.state;
    const kyma = m.metadata.labels?.[LABELS.kymaName];
    const module = m.metadata.labels?.[LABELS.moduleName];
    if (!state || !kyma || !module || m.metadata.labels?.[LABELS.mandatoryModule] !== 'true') continue;
    out.mandatoryModules.push({ namespace: m.metadata.namespace ?? '', kyma, module, state });
  }
}

export function fleetStates(
  kymas: readonly KubeObject[],
  manifests: readonly KubeObject[],
  releaseMetas: readonly KubeObject[],
): FleetStates {
  const out: FleetStates = { kymas: [], modules: [], mandatoryModules: [], mandatoryModuleCounts: [] };
  const counts = new Map<string, number>();
  kymaStates(kymas, out, counts);
  mandatoryModuleStates(manifests, out);
  for (const r of releaseMetas as readonly (KubeObject & Pick<ModuleReleaseMeta, 'spec'>)[]) {
    const namespace = r.metadata.namespace ?? '';
    counts.set(namespace, (counts.get(namespace) ?? 0) + (r.spec.mandatory ? 1 : 0));
  }
  out.mandatoryModuleCounts = [...counts].map(([namespace, count]) => ({ namespace, count }));
  return out;
}
