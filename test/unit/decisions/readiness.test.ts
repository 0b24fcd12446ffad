// Readiness evaluation over observed objects, and the workload availability rule.
import { describe, expect, it } from 'vitest';
import {
  customReadiness,
  evaluateReadiness,
  readinessView,
  type ModuleCrView,
  type Observed,
} from '../../../src/decisions/readiness';
import { podTrouble, type PodView } from '../../../src/decisions/pods';
import { workloadRollout, type WorkloadView } from '../../../src/decisions/workload';

const MANAGER = { group: 'apps', version: 'v1', kind: 'Deployment', name: 'greeter-manager', namespace: 'k1-system' };
const CR = { apiVersion: 'greeter.example.io/v1alpha1', kind: 'Greeter', name: 'default', namespace: 'k1-system' };

function deployment(over: Partial<NonNullable<WorkloadView['status']>> = {}, generation = 1): WorkloadView {
  return {
    kind: 'Deployment',
    metadata: { generation },
    spec: { replicas: 1 },
    status: {
      observedGeneration: 1,
      replicas: 1,
      updatedReplicas: 1,
      availableReplicas: 1,
      conditions: [{ type: 'Available', status: 'True' }],
      ...over,
    },
  };
}

/** A Deployment upgraded to a spec whose new pod cannot run: the old pod still serves, so it stays Available. */
const STUCK_UPGRADE = deployment(
  {
    replicas: 2,
    updatedReplicas: 1,
    availableReplicas: 1,
    conditions: [
      { type: 'Available', status: 'True' },
      { type: 'Progressing', status: 'True', reason: 'ReplicaSetUpdated' },
    ],
  },
  2,
);
STUCK_UPGRADE.status!.observedGeneration = 2;

const UNSCHEDULABLE_POD: PodView = {
  metadata: { name: 'greeter-manager-7d9f', creationTimestamp: '2026-11-25T10:00:05Z' },
  status: {
    phase: 'Pending',
    conditions: [
      {
        type: 'PodScheduled',
        status: 'False',
        reason: 'Unschedulable',
        message: "0/1 nodes are available: 1 node(s) didn't match Pod's node affinity/selector.",
      },
    ],
  },
};
const CRASHING_POD: PodView = {
  metadata: { name: 'greeter-manager-5c6b', creationTimestamp: '2026-11-25T10:00:06Z' },
  status: {
    phase: 'Running',
    containerStatuses: [
      {
        name: 'manager',
        restartCount: 4,
        state: {
          waiting: { reason: 'CrashLoopBackOff', message: 'back-off 1m20s restarting failed container=manager' },
        },
        lastState: { terminated: { reason: 'Error', exitCode: 1 } },
      },
    ],
  },
};
const SERVING_POD: PodView = {
  metadata: { name: 'greeter-manager-old', creationTimestamp: '2026-11-25T09:00:00Z' },
  status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] },
};

describe('evaluateReadiness', () => {
  it.each<[string, Observed, string, string]>([
    [
      'paused',
      { paused: true },
      'Paused',
      'reconciliation paused by the operator.kyma-project.io/skip-reconciliation label on the Manifest',
    ],
    ['no manager, no CR', { paused: false }, 'Ready', 'module is ready'],
    [
      'a missing manager',
      { paused: false, manager: { ref: MANAGER, live: undefined } },
      'ManagerMissing',
      'manager Deployment k1-system/greeter-manager does not exist',
    ],
    [
      'an unavailable manager',
      { paused: false, manager: { ref: MANAGER, live: deployment({ availableReplicas: 0, conditions: [] }) } },
      'ManagerNotAvailable',
      'waiting for the rollout of manager Deployment k1-system/greeter-manager (0 of 1 updated replicas available)',
    ],
    [
      'an upgrade whose new pod does not run while the old one serves',
      { paused: false, manager: { ref: MANAGER, live: STUCK_UPGRADE } },
      'ManagerNotAvailable',
      'waiting for the rollout of manager Deployment k1-system/greeter-manager (1 of 1 replicas updated, 1 old replica still running)',
    ],
    [
      'that upgrade, its new pod unschedulable',
      { paused: false, manager: { ref: MANAGER, live: STUCK_UPGRADE, pods: [SERVING_POD, UNSCHEDULABLE_POD] } },
      'ManagerPodsFailing',
      'manager Deployment k1-system/greeter-manager cannot roll out (1 of 1 replicas updated, 1 ' +
        'old replica still running): pod greeter-manager-7d9f cannot be scheduled: 0/1 nodes are ' +
        "available: 1 node(s) didn't match Pod's node affinity/selector.",
    ],
    [
      'a manager whose pod crash-loops',
      { paused: false, manager: { ref: MANAGER, live: deployment({ availableReplicas: 0 }), pods: [CRASHING_POD] } },
      'ManagerPodsFailing',
      'manager Deployment k1-system/greeter-manager cannot roll out (0 of 1 updated replicas ' +
        'available): pod greeter-manager-5c6b container manager is CrashLoopBackOff: back-off 1m20s ' +
        'restarting failed container=manager, restarted 4 times, last exit: Error (code 1)',
    ],
    [
      'a rollout past its progress deadline',
      {
        paused: false,
        manager: {
          ref: MANAGER,
          live: deployment({
            conditions: [
              {
                type: 'Progressing',
                status: 'False',
                reason: 'ProgressDeadlineExceeded',
                message: 'ReplicaSet "greeter-manager-7d9f" has timed out progressing.',
              },
            ],
          }),
        },
      },
      'ManagerRolloutStalled',
      'the rollout of manager Deployment k1-system/greeter-manager stalled: ReplicaSet "greeter-manager-7d9f" has timed out progressing.',
    ],
    [
      'a complete rollout whose pods were read',
      { paused: false, manager: { ref: MANAGER, live: deployment(), pods: [SERVING_POD] } },
      'Ready',
      'module is ready',
    ],
    [
      'an available manager without CR',
      { paused: false, manager: { ref: MANAGER, live: deployment() } },
      'Ready',
      'module is ready',
    ],
    [
      'a missing CR',
      { paused: false, manager: { ref: MANAGER, live: deployment() }, cr: { ref: CR, live: undefined } },
      'ResourceMissing',
      'default resource Greeter k1-system/default does not exist',
    ],
    [
      'a CR without state',
      { paused: false, cr: { ref: CR, live: {} } },
      'ResourceNotReady',
      'waiting for Greeter k1-system/default to report a state',
    ],
    [
      'a Ready CR',
      { paused: false, cr: { ref: CR, live: { status: { state: 'Ready' } } } },
      'Ready',
      'module is ready',
    ],
    [
      'an Error CR with its message',
      { paused: false, cr: { ref: CR, live: { status: { state: 'Error', message: 'backend unreachable' } } } },
      'ResourceError',
      'Greeter k1-system/default is Error: backend unreachable',
    ],
    [
      'a Warning CR with a failing condition',
      {
        paused: false,
        cr: {
          ref: CR,
          live: {
            status: {
              state: 'Warning',
              conditions: [
                { type: 'A', status: 'True' },
                { type: 'B', status: 'False', message: 'quota low' },
              ],
            },
          },
        },
      },
      'ResourceWarning',
      'Greeter k1-system/default is Warning: quota low',
    ],
    [
      'a Processing CR',
      { paused: false, cr: { ref: CR, live: { status: { state: 'Processing' } } } },
      'ResourceProcessing',
      'Greeter k1-system/default is Processing',
    ],
    [
      'a Deleting CR',
      { paused: false, cr: { ref: CR, live: { status: { state: 'Deleting' } } } },
      'ResourceDeleting',
      'Greeter k1-system/default is Deleting',
    ],
    [
      'a CR with an unknown state',
      { paused: false, cr: { ref: CR, live: { status: { state: 'Happy' } } } },
      'ResourceNotReady',
      'waiting for Greeter k1-system/default to report a state',
    ],
  ])('%s', (_what, observed, reason, message) => {
    expect(evaluateReadiness(observed)).toEqual({ reason, message });
  });
});

describe('workloadRollout', () => {
  it.each<[string, WorkloadView, string]>([
    ['an available, current Deployment', deployment(), 'complete'],
    ['a Deployment whose spec the controller has not seen yet', deployment({}, 2), 'progressing'],
    ['a Deployment still rolling out', deployment({ updatedReplicas: 0 }), 'progressing'],
    ['a Deployment whose old ReplicaSet still serves the only available pod', STUCK_UPGRADE, 'progressing'],
    [
      'a Deployment past its progress deadline',
      deployment({ conditions: [{ type: 'Progressing', status: 'False', reason: 'ProgressDeadlineExceeded' }] }),
      'stalled',
    ],
    [
      'a ready StatefulSet on its update revision',
      {
        kind: 'StatefulSet',
        metadata: { generation: 1 },
        spec: { replicas: 2 },
        status: { observedGeneration: 1, readyReplicas: 2, currentRevision: 'a', updateRevision: 'a' },
      },
      'complete',
    ],
    [
      'a StatefulSet between revisions',
      {
        kind: 'StatefulSet',
        metadata: { generation: 1 },
        spec: { replicas: 2 },
        status: { observedGeneration: 1, readyReplicas: 2, currentRevision: 'a', updateRevision: 'b' },
      },
      'progressing',
    ],
    [
      'a partitioned StatefulSet with the ordinals above the partition updated',
      {
        kind: 'StatefulSet',
        metadata: { generation: 1 },
        spec: { replicas: 3, updateStrategy: { type: 'RollingUpdate', rollingUpdate: { partition: 2 } } },
        status: {
          observedGeneration: 1,
          readyReplicas: 3,
          updatedReplicas: 1,
          currentRevision: 'a',
          updateRevision: 'b',
        },
      },
      'complete',
    ],
    [
      'an OnDelete StatefulSet with every replica ready',
      {
        kind: 'StatefulSet',
        metadata: { generation: 1 },
        spec: { replicas: 2, updateStrategy: { type: 'OnDelete' } },
        status: { observedGeneration: 1, readyReplicas: 2, currentRevision: 'a', updateRevision: 'b' },
      },
      'complete',
    ],
    [
      'a DaemonSet on every node',
      {
        kind: 'DaemonSet',
        metadata: { generation: 3 },
        status: { observedGeneration: 3, desiredNumberScheduled: 2, updatedNumberScheduled: 2, numberAvailable: 2 },
      },
      'complete',
    ],
    [
      'a DaemonSet updating',
      {
        kind: 'DaemonSet',
        metadata: { generation: 3 },
        status: { observedGeneration: 3, desiredNumberScheduled: 2, updatedNumberScheduled: 1, numberAvailable: 2 },
      },
      'progressing',
    ],
    [
      'an OnDelete DaemonSet whose pods run, not yet replaced',
      {
        kind: 'DaemonSet',
        metadata: { generation: 3 },
        spec: { updateStrategy: { type: 'OnDelete' } },
        status: { observedGeneration: 3, desiredNumberScheduled: 2, updatedNumberScheduled: 0, numberAvailable: 2 },
      },
      'complete',
    ],
  ])('%s', (_what, w, phase) => {
    expect(workloadRollout(w).phase).toBe(phase);
  });
});

describe('podTrouble', () => {
  it('names the newest troubled pod and its reason, and nothing for pods that run', () => {
    expect(podTrouble([SERVING_POD])).toBeUndefined();
    expect(podTrouble([SERVING_POD, UNSCHEDULABLE_POD, CRASHING_POD])).toMatch(
      /^pod greeter-manager-5c6b container manager is CrashLoopBackOff/,
    );
    expect(
      podTrouble([
        {
          metadata: { name: 'p' },
          status: {
            containerStatuses: [
              {
                name: 'manager',
                state: {
                  waiting: { reason: 'ImagePullBackOff', message: 'Back-off pulling image "example.invalid/x:1"' },
                },
              },
            ],
          },
        },
      ]),
    ).toBe('pod p container manager is ImagePullBackOff: Back-off pulling image "example.invalid/x:1"');
    expect(
      podTrouble([
        {
          metadata: { name: 'p' },
          status: { containerStatuses: [{ name: 'manager', state: { waiting: { reason: 'ContainerCreating' } } }] },
        },
      ]),
    ).toBeUndefined();
    expect(
      podTrouble([{ ...UNSCHEDULABLE_POD, metadata: { ...UNSCHEDULABLE_POD.metadata, deletionTimestamp: 't' } }]),
    ).toBeUndefined();
  });
});

describe('readinessView', () => {
  const deployment = (over: Record<string, unknown>) => ({
    kind: 'Deployment',
    metadata: { name: 'm', namespace: 'n', generation: 2, labels: { a: 'b' }, annotations: { big: 'x'.repeat(1000) } },
    spec: {
      replicas: 2,
      selector: { matchLabels: { app: 'm' } },
      template: { spec: { containers: [{ name: 'c', image: 'i' }] } },
    },
    status: {
      observedGeneration: 2,
      replicas: 2,
      availableReplicas: 2,
      updatedReplicas: 2,
      conditions: [{ type: 'Available', status: 'True', reason: 'MinimumReplicasAvailable', lastUpdateTime: 't' }],
    },
    ...over,
  });

  it('keeps of a workload exactly what decides how far its rollout got, and the selector of its pods', () => {
    const stalled = {
      observedGeneration: 2,
      replicas: 2,
      availableReplicas: 2,
      updatedReplicas: 2,
      conditions: [{ type: 'Progressing', status: 'False', reason: 'ProgressDeadlineExceeded', message: 'timed out' }],
    };
    for (const d of [
      deployment({}),
      deployment({
        status: {
          observedGeneration: 1,
          availableReplicas: 2,
          updatedReplicas: 2,
          conditions: [{ type: 'Available', status: 'True' }],
        },
      }),
      deployment({ status: {} }),
      deployment({ status: stalled }),
    ]) {
      const view = readinessView(d);
      expect(workloadRollout(view as unknown as WorkloadView)).toEqual(workloadRollout(d as unknown as WorkloadView));
      expect(view.spec).toMatchObject({ selector: { matchLabels: { app: 'm' } } });
      expect(JSON.stringify(view)).not.toContain('image');
      expect(JSON.stringify(view)).not.toContain('xxxx');
    }
  });

  it('keeps of a module CR its state, message, conditions and the values a customStateCheck reads', () => {
    const cr = {
      kind: 'Greeter',
      metadata: { name: 'default', generation: 1, finalizers: ['f'] },
      spec: { big: 'y'.repeat(1000) },
      status: { state: 'Warning', message: 'slow', health: { level: 'green' }, other: 'z' },
    };
    const view = readinessView(cr, ['status.health.level', '.status.missing']);
    expect(view).toEqual({
      kind: 'Greeter',
      metadata: { generation: 1, finalizers: ['f'] },
      status: { state: 'Warning', message: 'slow', health: { level: 'green' } },
    });
    const checks = [
      { jsonPath: 'status.health.level', value: 'green', mappedState: 'Ready' as const },
      { jsonPath: 'status.health.level', value: 'red', mappedState: 'Error' as const },
    ];
    expect(customReadiness(checks, view as ModuleCrView, 'Greeter default')).toEqual(
      customReadiness(checks, cr as ModuleCrView, 'Greeter default'),
    );
    expect(
      evaluateReadiness({
        paused: false,
        cr: { ref: { apiVersion: 'g/v1', kind: 'Greeter', name: 'default' }, live: view },
      }),
    ).toEqual(
      evaluateReadiness({
        paused: false,
        cr: { ref: { apiVersion: 'g/v1', kind: 'Greeter', name: 'default' }, live: cr },
      }),
    );
  });
});
