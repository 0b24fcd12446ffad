// Readiness evaluation over observed objects, and the workload availability rule.
import { describe, expect, it } from 'vitest';
import { customReadiness, evaluateReadiness, readinessView, type ModuleCrView, type Observed } from '../../../src/decisions/readiness';
import { workloadAvailable, type WorkloadView } from '../../../src/decisions/workload';

const MANAGER = { group: 'apps', version: 'v1', kind: 'Deployment', name: 'greeter-manager', namespace: 'k1-system' };
const CR = { apiVersion: 'greeter.example.io/v1alpha1', kind: 'Greeter', name: 'default', namespace: 'k1-system' };

function deployment(over: Partial<NonNullable<WorkloadView['status']>> = {}, generation = 1): WorkloadView {
  return { kind: 'Deployment', metadata: { generation }, spec: { replicas: 1 }, status: { observedGeneration: 1, updatedReplicas: 1, availableReplicas: 1, conditions: [{ type: 'Available', status: 'True' }], ...over } };
}

describe('evaluateReadiness', () => {
  it.each<[string, Observed, string, string]>([
    ['paused', { paused: true }, 'Paused', 'reconciliation paused by the operator.kyma-project.io/skip-reconciliation label on the Manifest'],
    ['no manager, no CR', { paused: false }, 'Ready', 'module is ready'],
    ['a missing manager', { paused: false, manager: { ref: MANAGER, live: undefined } }, 'ManagerMissing', 'manager Deployment k1-system/greeter-manager does not exist'],
    ['an unavailable manager', { paused: false, manager: { ref: MANAGER, live: deployment({ availableReplicas: 0, conditions: [] }) } }, 'ManagerNotAvailable', 'waiting for manager Deployment k1-system/greeter-manager to become available (0/1 available)'],
    ['an available manager without CR', { paused: false, manager: { ref: MANAGER, live: deployment() } }, 'Ready', 'module is ready'],
    ['a missing CR', { paused: false, manager: { ref: MANAGER, live: deployment() }, cr: { ref: CR, live: undefined } }, 'ResourceMissing', 'default resource Greeter k1-system/default does not exist'],
    ['a CR without state', { paused: false, cr: { ref: CR, live: {} } }, 'ResourceNotReady', 'waiting for Greeter k1-system/default to report a state'],
    ['a Ready CR', { paused: false, cr: { ref: CR, live: { status: { state: 'Ready' } } } }, 'Ready', 'module is ready'],
    ['an Error CR with its message', { paused: false, cr: { ref: CR, live: { status: { state: 'Error', message: 'backend unreachable' } } } }, 'ResourceError', 'Greeter k1-system/default is Error: backend unreachable'],
    ['a Warning CR with a failing condition', { paused: false, cr: { ref: CR, live: { status: { state: 'Warning', conditions: [{ type: 'A', status: 'True' }, { type: 'B', status: 'False', message: 'quota low' }] } } } }, 'ResourceWarning', 'Greeter k1-system/default is Warning: quota low'],
    ['a Processing CR', { paused: false, cr: { ref: CR, live: { status: { state: 'Processing' } } } }, 'ResourceProcessing', 'Greeter k1-system/default is Processing'],
    ['a Deleting CR', { paused: false, cr: { ref: CR, live: { status: { state: 'Deleting' } } } }, 'ResourceDeleting', 'Greeter k1-system/default is Deleting'],
    ['a CR with an unknown state', { paused: false, cr: { ref: CR, live: { status: { state: 'Happy' } } } }, 'ResourceNotReady', 'waiting for Greeter k1-system/default to report a state'],
  ])('%s', (_what, observed, reason, message) => {
    expect(evaluateReadiness(observed)).toEqual({ reason, message });
  });
});

describe('workloadAvailable', () => {
  it.each<[string, WorkloadView, boolean]>([
    ['an available, current Deployment', deployment(), true],
    ['a Deployment whose spec the controller has not seen yet', deployment({}, 2), false],
    ['a Deployment still rolling out', deployment({ updatedReplicas: 0 }), false],
    ['a Deployment without the Available condition', deployment({ conditions: [] }), false],
    ['a ready StatefulSet on its update revision', { kind: 'StatefulSet', metadata: { generation: 1 }, spec: { replicas: 2 }, status: { observedGeneration: 1, readyReplicas: 2, currentRevision: 'a', updateRevision: 'a' } }, true],
    ['a StatefulSet between revisions', { kind: 'StatefulSet', metadata: { generation: 1 }, spec: { replicas: 2 }, status: { observedGeneration: 1, readyReplicas: 2, currentRevision: 'a', updateRevision: 'b' } }, false],
  ])('%s', (_what, w, ok) => {
    expect(workloadAvailable(w).ok).toBe(ok);
  });
});

describe('readinessView', () => {
  const deployment = (over: Record<string, unknown>) => ({
    kind: 'Deployment',
    metadata: { name: 'm', namespace: 'n', generation: 2, labels: { a: 'b' }, annotations: { big: 'x'.repeat(1000) } },
    spec: { replicas: 2, template: { spec: { containers: [{ name: 'c', image: 'i' }] } } },
    status: { observedGeneration: 2, replicas: 2, availableReplicas: 2, updatedReplicas: 2, conditions: [{ type: 'Available', status: 'True', reason: 'MinimumReplicasAvailable', lastUpdateTime: 't' }] },
    ...over,
  });

  it('keeps of a workload exactly what decides whether it is available, and nothing else', () => {
    for (const d of [deployment({}), deployment({ status: { observedGeneration: 1, availableReplicas: 2, updatedReplicas: 2, conditions: [{ type: 'Available', status: 'True' }] } }), deployment({ status: {} })]) {
      const view = readinessView(d);
      expect(workloadAvailable(view as unknown as WorkloadView)).toEqual(workloadAvailable(d as unknown as WorkloadView));
      expect(JSON.stringify(view)).not.toContain('image');
      expect(JSON.stringify(view)).not.toContain('xxxx');
    }
  });

  it('keeps of a module CR its state, message, conditions and the values a customStateCheck reads', () => {
    const cr = { kind: 'Greeter', metadata: { name: 'default', generation: 1, finalizers: ['f'] }, spec: { big: 'y'.repeat(1000) }, status: { state: 'Warning', message: 'slow', health: { level: 'green' }, other: 'z' } };
    const view = readinessView(cr, ['status.health.level', '.status.missing']);
    expect(view).toEqual({ kind: 'Greeter', metadata: { generation: 1, finalizers: ['f'] }, status: { state: 'Warning', message: 'slow', health: { level: 'green' } } });
    const checks = [{ jsonPath: 'status.health.level', value: 'green', mappedState: 'Ready' as const }, { jsonPath: 'status.health.level', value: 'red', mappedState: 'Error' as const }];
    expect(customReadiness(checks, view as ModuleCrView, 'Greeter default')).toEqual(customReadiness(checks, cr as ModuleCrView, 'Greeter default'));
    expect(evaluateReadiness({ paused: false, cr: { ref: { apiVersion: 'g/v1', kind: 'Greeter', name: 'default' }, live: view } })).toEqual(evaluateReadiness({ paused: false, cr: { ref: { apiVersion: 'g/v1', kind: 'Greeter', name: 'default' }, live: cr } }));
  });
});
