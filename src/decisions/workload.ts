// Whether a manager workload runs the spec it was given: the one rule that readiness and the
// bridge's change filter share. As `kubectl rollout status` decides it (and upstream's
// deployment state check, which is Ready only on `NewReplicaSetAvailable`): a workload counts
// only once the rollout of its current spec is complete, so an old ReplicaSet's pods that keep
// serving do not make a new version Ready.

export interface WorkloadCondition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
}

export interface WorkloadView {
  kind: string;
  metadata: { generation?: number };
  spec?: {
    replicas?: number;
    /** StatefulSets and DaemonSets: OnDelete updates nothing by itself; a StatefulSet's partition updates only the ordinals above it. */
    updateStrategy?: { type?: string; rollingUpdate?: { partition?: number } };
    /** The pods' labels (matchLabels), so that a rollout that does not move can be explained by its pods. */
    selector?: { matchLabels?: Record<string, string> };
  };
  status?: {
    observedGeneration?: number;
    replicas?: number;
    readyReplicas?: number;
    availableReplicas?: number;
    updatedReplicas?: number;
    currentRevision?: string;
    updateRevision?: string;
    /** DaemonSets. */
    desiredNumberScheduled?: number;
    updatedNumberScheduled?: number;
    numberAvailable?: number;
    conditions?: WorkloadCondition[];
  };
}

/** The kinds whose rollout this rule follows. */
export const WORKLOAD_KINDS = ['Deployment', 'StatefulSet', 'DaemonSet'] as const;

export function isWorkload(kind: string): boolean {
  return (WORKLOAD_KINDS as readonly string[]).includes(kind);
}

/**
 * complete: the current spec runs everywhere it should; progressing: it is rolling out (or the
 * controller has not seen it yet); stalled: the controller gave up (a Deployment past its
 * progress deadline). `detail` says how far it got, for a person.
 */
export type RolloutPhase = 'complete' | 'progressing' | 'stalled';

export function workloadRollout(w: WorkloadView): { phase: RolloutPhase; detail: string } {
  const s = w.status ?? {};
  if ((s.observedGeneration ?? 0) < (w.metadata.generation ?? 0))
    return { phase: 'progressing', detail: `the controller has not seen generation ${w.metadata.generation} yet` };
  if (w.kind === 'StatefulSet') return statefulSetRollout(w);
  if (w.kind === 'DaemonSet') return daemonSetRollout(w);
  const stalled = s.conditions?.find((c) => c.type === 'Progressing' && c.reason === 'ProgressDeadlineExceeded');
  if (stalled) return { phase: 'stalled', detail: stalled.message ?? 'the rollout exceeded its progress deadline' };
  const want = w.spec?.replicas ?? 1;
  const updated = s.updatedReplicas ?? 0;
  const available = s.availableReplicas ?? 0;
  if (updated < want) return { phase: 'progressing', detail: `${updated} of ${want} replicas updated` };
  const old = (s.replicas ?? updated) - updated;
  if (old > 0)
    return {
      phase: 'progressing',
      detail: `${updated} of ${want} replicas updated, ${old} old ${old === 1 ? 'replica' : 'replicas'} still running`,
    };
  if (available < updated)
    return { phase: 'progressing', detail: `${available} of ${updated} updated replicas available` };
  return { phase: 'complete', detail: `${available}/${want} available` };
}

function statefulSetRollout(w: WorkloadView): { phase: RolloutPhase; detail: string } {
  const s = w.status ?? {};
  const want = w.spec?.replicas ?? 1;
  const ready = s.readyReplicas ?? 0;
  if (ready < want) return { phase: 'progressing', detail: `${ready} of ${want} replicas ready` };
  if (w.spec?.updateStrategy?.type === 'OnDelete') return { phase: 'complete', detail: `${ready}/${want} ready` };
  const partition = w.spec?.updateStrategy?.rollingUpdate?.partition ?? 0;
  if (partition > 0) {
    const updated = s.updatedReplicas ?? 0;
    const owed = want - partition;
    if (updated < owed)
      return { phase: 'progressing', detail: `${updated} of ${owed} replicas above partition ${partition} updated` };
    return { phase: 'complete', detail: `${ready}/${want} ready` };
  }
  if (s.updateRevision !== s.currentRevision)
    return {
      phase: 'progressing',
      detail: `${s.updatedReplicas ?? 0} of ${want} replicas updated to revision ${s.updateRevision ?? '?'}`,
    };
  return { phase: 'complete', detail: `${ready}/${want} ready` };
}

function daemonSetRollout(w: WorkloadView): { phase: RolloutPhase; detail: string } {
  const s = w.status ?? {};
  const want = s.desiredNumberScheduled ?? 0;
  const updated = s.updatedNumberScheduled ?? 0;
  const available = s.numberAvailable ?? 0;
  // OnDelete updates nothing by itself: its pods running is all there is to wait for.
  if (updated < want && w.spec?.updateStrategy?.type !== 'OnDelete')
    return { phase: 'progressing', detail: `${updated} of ${want} pods updated` };
  if (available < want) return { phase: 'progressing', detail: `${available} of ${want} updated pods available` };
  return { phase: 'complete', detail: `${available}/${want} available` };
}
