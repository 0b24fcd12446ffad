// The rule by which a worker makes its own version current (KLM_VERSION_PROMOTION=auto): a new
// version takes over once it polls; a version that was current before never takes the fleet back;
// an operator's ramp is left alone. The server's answers are stubbed here; the upgrade-in-place
// test runs the rule on the real server.
import proto from '@temporalio/proto';
import { describe, expect, it } from 'vitest';
import { promoteOnFirstPoll, type DeploymentConnection } from '../../src/temporal/worker-deployment';

const { WorkerDeploymentVersionStatus: S } = proto.temporal.api.enums.v1;
const VERSION = { deploymentName: 'klm', buildId: 'new' };

interface Summary {
  buildId: string;
  status: number;
  firstActivation?: number;
}

/** A server whose deployment lists `versions` (after `unseenFor` describes that do not list ours yet). */
function server(versions: Summary[], o: { ramping?: string; unseenFor?: number; refusedFor?: number } = {}) {
  const made: string[] = [];
  let describes = 0;
  const workflowService = {
    describeWorkerDeployment: () => {
      describes++;
      const listed = describes > (o.unseenFor ?? 0) ? versions : versions.filter((v) => v.buildId !== VERSION.buildId);
      return Promise.resolve({
        workerDeploymentInfo: {
          routingConfig: o.ramping
            ? { rampingDeploymentVersion: { buildId: o.ramping }, rampingVersionPercentage: 10 }
            : {},
          versionSummaries: listed.map((v) => ({
            deploymentVersion: { deploymentName: 'klm', buildId: v.buildId },
            status: v.status,
            ...(v.firstActivation ? { firstActivationTime: { seconds: v.firstActivation } } : {}),
          })),
        },
      });
    },
    setWorkerDeploymentCurrentVersion: (req: { buildId: string }) => {
      made.push(req.buildId);
      // As the server answers while it has seen only some of the version's pollers (workflow, not yet activity).
      if (made.length <= (o.refusedFor ?? 0))
        return Promise.reject(
          Object.assign(
            new Error(
              `9 FAILED_PRECONDITION: proposed current version 'klm:${req.buildId}' is missing active task queues ` +
                'from the current version; these would become unversioned if it is set as the current version',
            ),
            { code: 9 },
          ),
        );
      return Promise.resolve({});
    },
  };
  return { connection: { workflowService } as unknown as DeploymentConnection, made };
}

/** A deployment whose version `old` is current and whose `new` never was current or ramping. */
const CURRENT_OLD_NEW_INACTIVE: Summary[] = [
  { buildId: 'old', status: S.WORKER_DEPLOYMENT_VERSION_STATUS_CURRENT, firstActivation: 100 },
  { buildId: 'new', status: S.WORKER_DEPLOYMENT_VERSION_STATUS_INACTIVE },
];

const promote = (c: DeploymentConnection) =>
  promoteOnFirstPoll(c, 'default', VERSION, { identity: 'test', waitMs: 5_000 });

describe('a worker making its version current', () => {
  it('makes a version current once the server lists it, when it never was current or ramping', async () => {
    const s = server(CURRENT_OLD_NEW_INACTIVE, { unseenFor: 2 });
    expect(await promote(s.connection)).toEqual({ kind: 'promoted' });
    expect(s.made).toEqual(['new']);
  });

  it('tries again while the server has not yet seen all of its task queues polled (a worker just started, a loaded machine)', async () => {
    const s = server(CURRENT_OLD_NEW_INACTIVE, { refusedFor: 2 });
    expect(await promote(s.connection)).toEqual({ kind: 'promoted' });
    expect(s.made).toEqual(['new', 'new', 'new']);
  });

  it('says why when the server goes on refusing past the wait', async () => {
    const s = server(CURRENT_OLD_NEW_INACTIVE, { refusedFor: 1_000 });
    const said = await promoteOnFirstPoll(s.connection, 'default', VERSION, { identity: 'test', waitMs: 1_200 });
    expect(said).toEqual({ kind: 'left', why: expect.stringMatching(/missing active task queues/) as string });
    expect(s.made.length).toBeGreaterThan(1);
  });

  it('never takes the fleet back for a version that was current before (an old worker restarting)', async () => {
    const s = server([
      { buildId: 'newer', status: S.WORKER_DEPLOYMENT_VERSION_STATUS_CURRENT, firstActivation: 200 },
      { buildId: 'new', status: S.WORKER_DEPLOYMENT_VERSION_STATUS_DRAINING, firstActivation: 100 },
    ]);
    expect(await promote(s.connection)).toEqual({
      kind: 'left',
      why: 'this version was current or ramping before (now draining)',
    });
    expect(s.made).toEqual([]);
  });

  it("leaves an operator's ramp alone", async () => {
    const s = server(
      [
        { buildId: 'canary', status: S.WORKER_DEPLOYMENT_VERSION_STATUS_RAMPING, firstActivation: 200 },
        { buildId: 'new', status: S.WORKER_DEPLOYMENT_VERSION_STATUS_INACTIVE },
      ],
      { ramping: 'canary' },
    );
    expect(await promote(s.connection)).toEqual({ kind: 'left', why: 'version canary is being ramped (10%)' });
    expect(s.made).toEqual([]);
  });

  it('does nothing for the version that is current already (a worker restarting)', async () => {
    const s = server([{ buildId: 'new', status: S.WORKER_DEPLOYMENT_VERSION_STATUS_CURRENT, firstActivation: 100 }]);
    expect(await promote(s.connection)).toEqual({ kind: 'current' });
    expect(s.made).toEqual([]);
  });
});
