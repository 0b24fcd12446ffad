// When a manager workload counts as available: the one rule that readiness and the bridge's
// change filter share.

export interface WorkloadView {
  kind: string;
  metadata: { generation?: number };
  spec?: { replicas?: number };
  status?: {
    observedGeneration?: number;
    replicas?: number;
    readyReplicas?: number;
    availableReplicas?: number;
    updatedReplicas?: number;
    currentRevision?: string;
    updateRevision?: string;
    conditions?: { type: string; status: string; message?: string }[];
  };
}

/** Deployments: Available, updated and current; StatefulSets: ready and on the update revision. */
export function workloadAvailable(w: WorkloadView): { ok: boolean; detail: string } {
  const s = w.status ?? {};
  const want = w.spec?.replicas ?? 1;
  const current = (s.observedGeneration ?? 0) >= (w.metadata.generation ?? 0);
  if (w.kind === 'StatefulSet') {
    const ok = current && (s.readyReplicas ?? 0) >= want && s.currentRevision === s.updateRevision;
    return { ok, detail: `${s.readyReplicas ?? 0}/${want} ready` };
  }
  const available = s.conditions?.some((c) => c.type === 'Available' && c.status === 'True') ?? false;
  const ok = current && available && (s.updatedReplicas ?? 0) >= want && (s.availableReplicas ?? 0) >= want;
  return { ok, detail: `${s.availableReplicas ?? 0}/${want} available` };
}
