// What `klm deployment` does (./deployment.ts registers it): the versions of the workers'
// Worker Deployment with the runs still pinned to each, and making one current or ramping.
import { Client, Connection } from '@temporalio/client';
import type { KlmConfig } from '../infra/config';
import {
  describeDeployment,
  setCurrentVersion,
  setRampingVersion,
  type DeploymentView,
} from '../temporal/worker-deployment';
import { Refused, render, table, type Output } from './output';

type Config = Pick<KlmConfig, 'temporal' | 'deployment'>;

const IDENTITY = 'klm deployment';

/**
 * A version as status shows it, with its open runs pinned to it: they keep its workers needed.
 * (Rollouts auto-upgrade: one that last ran on it goes on on the current version.)
 */
export interface VersionRow {
  buildId: string;
  status: string;
  drained?: boolean;
  pinnedRuns: number;
}

async function withClient<T>(config: Config, fn: (client: Client) => Promise<T>): Promise<T> {
  const connection = await Connection.connect(config.temporal.connectionOptions);
  try {
    return await fn(new Client({ connection, namespace: config.temporal.namespace }));
  } finally {
    await connection.close();
  }
}

async function deploymentOf(client: Client, config: Config): Promise<DeploymentView> {
  const d = await describeDeployment(client.connection, config.temporal.namespace, config.deployment.name);
  if (!d)
    throw new Refused(
      `no worker of deployment "${config.deployment.name}" has polled Temporal yet (KLM_DEPLOYMENT_NAME, ` +
        'the task queue by default): start a worker first',
    );
  return d;
}

export async function deploymentStatus(config: Config, output: Output): Promise<string> {
  return withClient(config, async (client) => {
    const d = await deploymentOf(client, config);
    const rows: VersionRow[] = [];
    for (const v of d.versions) {
      const { count } = await client.workflow.count(
        `TemporalWorkerDeploymentVersion = '${d.name}:${v.buildId}' AND ExecutionStatus = 'Running' ` +
          `AND TemporalWorkflowVersioningBehavior = 'Pinned'`,
      );
      rows.push({
        buildId: v.buildId,
        status: v.status,
        ...(v.drained !== undefined ? { drained: v.drained } : {}),
        pinnedRuns: count,
      });
    }
    const view = { ...d, versions: rows };
    return render(output, view, (x) =>
      [
        `deployment ${x.name}: current ${x.current ?? '(none)'}` +
          (x.ramping ? `, ramping ${x.ramping.buildId} at ${x.ramping.percentage}%` : ''),
        table(
          ['BUILD ID', 'STATUS', 'DRAINED', 'PINNED RUNS'],
          x.versions.map((v) => [
            v.buildId,
            v.status,
            v.drained === undefined ? '-' : String(v.drained),
            String(v.pinnedRuns),
          ]),
        ),
      ].join('\n'),
    );
  });
}

async function known(client: Client, config: Config, buildId: string): Promise<void> {
  const d = await deploymentOf(client, config);
  if (!d.versions.some((v) => v.buildId === buildId))
    throw new Refused(
      `deployment "${d.name}" has no version "${buildId}" (its versions: ${d.versions.map((v) => v.buildId).join(', ')}): ` +
        'start a worker of that version first',
    );
}

/** Makes `buildId` current. */
export async function makeCurrent(config: Config, buildId: string): Promise<void> {
  await withClient(config, async (client) => {
    await known(client, config, buildId);
    await setCurrentVersion(
      client.connection,
      config.temporal.namespace,
      { deploymentName: config.deployment.name, buildId },
      IDENTITY,
    );
  });
}

/** Ramps `buildId` to `percentage`, or ends the ramp (no build id). */
export async function ramp(config: Config, o: { buildId?: string; percentage: number }): Promise<void> {
  await withClient(config, async (client) => {
    if (o.buildId) await known(client, config, o.buildId);
    await setRampingVersion(
      client.connection,
      config.temporal.namespace,
      { deploymentName: config.deployment.name, ...o },
      IDENTITY,
    );
  });
}
