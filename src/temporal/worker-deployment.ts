// A Temporal Worker Deployment of the product's workers (docs/operator/upgrading.md): what the versions
// are (current, ramping, draining, drained), making one current or ramping, and the rule by which
// a worker makes its own version current (`promoteOnFirstPoll`).
import type { Connection } from '@temporalio/client';
import proto from '@temporalio/proto';

const { WorkerDeploymentVersionStatus: Status, VersionDrainageStatus: Drainage } = proto.temporal.api.enums.v1;

/** A client's or a worker's connection: both carry the workflow service. */
export type DeploymentConnection = Pick<Connection, 'workflowService'>;

export interface DeploymentVersion {
  deploymentName: string;
  buildId: string;
}

export type VersionStatus = 'inactive' | 'current' | 'ramping' | 'draining' | 'drained' | 'unknown';

export interface VersionView {
  buildId: string;
  status: VersionStatus;
  /** Whether no run pinned to it is open (as the server last checked), when it is draining or drained. */
  drained?: boolean;
  /** Whether it ever was current or ramping. */
  activated: boolean;
}

export interface DeploymentView {
  name: string;
  current?: string;
  ramping?: { buildId: string; percentage: number };
  versions: VersionView[];
}

const STATUS: Record<number, VersionStatus> = {
  [Status.WORKER_DEPLOYMENT_VERSION_STATUS_INACTIVE]: 'inactive',
  [Status.WORKER_DEPLOYMENT_VERSION_STATUS_CURRENT]: 'current',
  [Status.WORKER_DEPLOYMENT_VERSION_STATUS_RAMPING]: 'ramping',
  [Status.WORKER_DEPLOYMENT_VERSION_STATUS_DRAINING]: 'draining',
  [Status.WORKER_DEPLOYMENT_VERSION_STATUS_DRAINED]: 'drained',
};

/** The deployment `name` in `namespace`, or undefined when no worker of it ever polled. */
export async function describeDeployment(
  c: DeploymentConnection,
  namespace: string,
  name: string,
): Promise<DeploymentView | undefined> {
  try {
    const { workerDeploymentInfo: info } = await c.workflowService.describeWorkerDeployment({
      namespace,
      deploymentName: name,
    });
    const routing = info?.routingConfig;
    const ramping = routing?.rampingDeploymentVersion?.buildId;
    return {
      name,
      ...(routing?.currentDeploymentVersion?.buildId ? { current: routing.currentDeploymentVersion.buildId } : {}),
      ...(ramping ? { ramping: { buildId: ramping, percentage: routing?.rampingVersionPercentage ?? 0 } } : {}),
      versions: (info?.versionSummaries ?? []).map((v) => ({
        buildId: v.deploymentVersion?.buildId ?? '',
        status: STATUS[v.status ?? 0] ?? 'unknown',
        ...(v.drainageInfo?.status
          ? { drained: v.drainageInfo.status === Drainage.VERSION_DRAINAGE_STATUS_DRAINED }
          : {}),
        activated: Boolean(v.firstActivationTime),
      })),
    };
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
}

/** Makes `version` current: new runs start on it, pinned runs on others move at their next continue-as-new. */
export async function setCurrentVersion(
  c: DeploymentConnection,
  namespace: string,
  version: DeploymentVersion,
  identity: string,
): Promise<void> {
  await c.workflowService.setWorkerDeploymentCurrentVersion({ namespace, ...version, identity });
}

/** Ramps `version`: `percentage` of new runs (by workflow id) start on it. 0 with no build id: no ramp. */
export async function setRampingVersion(
  c: DeploymentConnection,
  namespace: string,
  o: { deploymentName: string; buildId?: string; percentage: number },
  identity: string,
): Promise<void> {
  await c.workflowService.setWorkerDeploymentRampingVersion({
    namespace,
    deploymentName: o.deploymentName,
    buildId: o.buildId ?? '',
    percentage: o.percentage,
    identity,
  });
}

export type Promotion =
  { kind: 'promoted' } | { kind: 'current' } | { kind: 'left'; why: string } | { kind: 'unseen'; afterMs: number };

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * The rule of KLM_VERSION_PROMOTION=auto: once a worker of `version` polls (the server knows the
 * version then), it becomes current if it never was current or ramping before and no other
 * version is being ramped. So a new release takes over by itself; a version that was current
 * once and was replaced (an old release's worker restarting, say) never takes the fleet back; and
 * an operator's ramp is left to the operator.
 */
export async function promoteOnFirstPoll(
  c: DeploymentConnection,
  namespace: string,
  version: DeploymentVersion,
  o: { identity: string; waitMs?: number; stopped?: () => boolean },
): Promise<Promotion> {
  const waitMs = o.waitMs ?? 60_000;
  const started = Date.now();
  for (;;) {
    const deployment = await describeDeployment(c, namespace, version.deploymentName);
    const own = deployment?.versions.find((v) => v.buildId === version.buildId);
    if (deployment && own) {
      if (own.status === 'current') return { kind: 'current' };
      if (own.status !== 'inactive' || own.activated)
        return { kind: 'left', why: `this version was current or ramping before (now ${own.status})` };
      if (deployment.ramping)
        return {
          kind: 'left',
          why: `version ${deployment.ramping.buildId} is being ramped (${deployment.ramping.percentage}%)`,
        };
      try {
        await setCurrentVersion(c, namespace, version, o.identity);
        return { kind: 'promoted' };
      } catch (err) {
        // The server lists a version at its first poller, but refuses to make it current until it
        // has seen every task queue of the current version polled by it (workflow and activity
        // pollers start a moment apart, more so on a loaded machine): that is "not yet", not "no".
        if (!isMissingTaskQueues(err)) throw err;
        if (Date.now() - started >= waitMs || o.stopped?.())
          return { kind: 'left', why: `the server refused: ${(err as Error).message}` };
      }
    } else if (Date.now() - started >= waitMs || o.stopped?.())
      return { kind: 'unseen', afterMs: Date.now() - started };
    await sleep(500);
  }
}

/** The server's answer while a version's pollers have not all been seen yet (FAILED_PRECONDITION). */
function isMissingTaskQueues(err: unknown): boolean {
  return (err as { code?: number }).code === 9 && /missing active task queues/.test((err as Error).message);
}

function isNotFound(err: unknown): boolean {
  return (err as { code?: number }).code === 5;
}
