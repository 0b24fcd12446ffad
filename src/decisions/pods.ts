// Why a manager's rollout does not move, from its pods: a workload's own status says only how
// many replicas are updated and available, not that a new pod can never be scheduled or keeps
// crashing. A pod in one of those conditions means the rollout cannot complete on its own.

export interface PodView {
  metadata: { name: string; creationTimestamp?: string; deletionTimestamp?: string };
  status?: {
    phase?: string;
    reason?: string;
    message?: string;
    conditions?: { type: string; status: string; reason?: string; message?: string }[];
    initContainerStatuses?: ContainerStatusView[];
    containerStatuses?: ContainerStatusView[];
  };
}

interface ContainerStatusView {
  name: string;
  restartCount?: number;
  state?: { waiting?: { reason?: string; message?: string }; terminated?: { reason?: string; exitCode?: number } };
  lastState?: { terminated?: { reason?: string; exitCode?: number } };
}

/** Reasons a container waits with that do not go away without a change (kubelet's names). */
const STUCK_WAITING = new Set([
  'CrashLoopBackOff',
  'ImagePullBackOff',
  'ErrImagePull',
  'InvalidImageName',
  'CreateContainerConfigError',
  'CreateContainerError',
  'RunContainerError',
]);

/** What keeps the first troubled pod from running, for a person; undefined when none is troubled. */
export function podTrouble(pods: PodView[]): string | undefined {
  for (const pod of [...pods].sort((a, b) =>
    (b.metadata.creationTimestamp ?? '').localeCompare(a.metadata.creationTimestamp ?? ''),
  )) {
    if (pod.metadata.deletionTimestamp) continue;
    const trouble = troubleOf(pod);
    if (trouble) return `pod ${pod.metadata.name} ${trouble}`;
  }
  return undefined;
}

function troubleOf(pod: PodView): string | undefined {
  const s = pod.status ?? {};
  const unscheduled = s.conditions?.find(
    (c) => c.type === 'PodScheduled' && c.status === 'False' && c.reason === 'Unschedulable',
  );
  if (unscheduled) return `cannot be scheduled: ${unscheduled.message ?? 'Unschedulable'}`;
  if (s.phase === 'Failed') return `failed${s.reason ? `: ${s.reason}` : ''}${s.message ? `: ${s.message}` : ''}`;
  for (const c of [...(s.initContainerStatuses ?? []), ...(s.containerStatuses ?? [])]) {
    const trouble = containerTrouble(c);
    if (trouble) return trouble;
  }
  return undefined;
}

/** A container that waits for a reason that does not go away without a change, with its restarts and last exit. */
function containerTrouble(c: ContainerStatusView): string | undefined {
  const waiting = c.state?.waiting;
  if (!waiting?.reason || !STUCK_WAITING.has(waiting.reason)) return undefined;
  const last = c.lastState?.terminated;
  const restarts = c.restartCount ? `, restarted ${c.restartCount} ${c.restartCount === 1 ? 'time' : 'times'}` : '';
  const exit = last ? `, last exit: ${last.reason ?? 'terminated'} (code ${last.exitCode ?? '?'})` : '';
  return `container ${c.name} is ${waiting.reason}${waiting.message ? `: ${waiting.message}` : ''}${restarts}${exit}`;
}
