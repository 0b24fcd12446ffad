// The Kyma's status projection, driven directly: what the module set, the rollout gate and the
// runtime side hold in, the status (and its search attribute values) out.
import { describe, expect, it } from 'vitest';
import type { KymaSnapshot, SpecModule } from '../../../src/contract/kyma';
import type { ModuleReport } from '../../../src/contract/readiness';
import {
  kymaStatus,
  moduleEntries,
  writeStatusStep,
  type KymaStatusView,
  type ModuleSetView,
} from '../../../src/decisions/kyma-status';
import { mod, snapshot as loaded } from './fixtures';

const spec = (name: string, over: Partial<SpecModule> = {}): SpecModule => ({
  name,
  customResourcePolicy: 'CreateAndDelete',
  managed: true,
  ...over,
});
/** A Kyma as loaded, whose runtime side is on (`remote`). */
const snapshot = (modules: SpecModule[], over: Partial<KymaSnapshot> = {}) =>
  loaded(modules, { remote: true, ...over });
const ready = (name: string, version = '1.0.0'): ModuleReport => ({
  reason: 'Ready',
  status: { name, channel: 'regular', version, state: 'Ready', message: 'module is ready' },
});

function view(over: Partial<KymaStatusView> = {}, modules: Partial<ModuleSetView> = {}): KymaStatusView {
  return {
    snapshot: snapshot([spec('greeter')]),
    invalid: false,
    modules: { desired: {}, failures: {}, held: {}, reports: {}, removing: {}, leavingReported: new Set(), ...modules },
    awaitingRollout: {},
    rolloutEnded: {},
    finalizing: false,
    ...over,
  };
}

describe('the Kyma status projection', () => {
  it('shows a module installing until it reports, then its report, and aggregates Ready', () => {
    const installing = kymaStatus(view({}, { desired: { greeter: mod('1.0.0') } }));
    expect(installing).toMatchObject({
      state: 'Processing',
      modules: [{ name: 'greeter', state: 'Processing', message: 'installing 1.0.0', channel: 'regular' }],
      conditions: [{ type: 'Modules', status: 'False', reason: 'Installing' }],
    });
    const done = kymaStatus(view({}, { desired: { greeter: mod('1.0.0') }, reports: { greeter: ready('greeter') } }));
    expect(done).toMatchObject({
      state: 'Ready',
      conditions: [{ type: 'Modules', status: 'True', reason: 'Ready', message: 'all modules are ready' }],
      lastOperation: { operation: 'kyma is ready' },
    });
  });

  it('says a module held by the rollout gate waits for its version, or why it stays when that rollout was aborted', () => {
    const held = { awaitingRollout: { greeter: '1.1.0' } };
    const reports = { reports: { greeter: ready('greeter') } };
    expect(moduleEntries(view(held, reports))[0]?.status.message).toBe(
      'module is ready; version 1.1.0 of channel regular waits for its rollout',
    );
    const aborted = {
      ...held,
      rolloutEnded: {
        greeter: { module: 'greeter', channel: 'regular', version: '1.1.0', message: 'the rollout was aborted' },
      },
    };
    expect(moduleEntries(view(aborted, reports))[0]?.status.message).toBe(
      'module is ready; the rollout was aborted; it stays at 1.0.0 until the next promotion',
    );
  });

  it('shows an upgrade held for its maintenance window as maintenance, and one whose policy cannot be used as its failure', () => {
    const report = { reports: { greeter: ready('greeter') } };
    expect(
      moduleEntries(view({}, { ...report, held: { greeter: { message: 'waiting for the maintenance window' } } }))[0]
        ?.status,
    ).toMatchObject({ state: 'Ready', maintenance: true, message: 'waiting for the maintenance window' });
    expect(
      moduleEntries(
        view({}, { ...report, held: { greeter: { message: 'policy broken', reason: 'MaintenancePolicyInvalid' } } }),
      )[0],
    ).toMatchObject({ status: { state: 'Error', message: 'policy broken' }, reason: 'MaintenancePolicyInvalid' });
  });

  it('keeps a leaving module Deleting until its workflow reports after being told to go, and gives mandatory modules no entry', () => {
    const modules = {
      desired: { counter: mod('1.0.0', { name: 'counter' }) },
      reports: { counter: ready('counter') },
      removing: { counter: 'remove' as const },
    };
    const v = view({ snapshot: snapshot([spec('base', { mandatory: true })]) }, modules);
    expect(moduleEntries(v)).toEqual([
      { status: { ...ready('counter').status, state: 'Deleting', message: 'removing the module' }, reason: 'Removing' },
    ]);
    const blocked: ModuleReport = {
      reason: 'DeletionBlocked',
      status: { name: 'counter', state: 'Deleting', message: 'blocked' },
    };
    expect(
      moduleEntries(
        view(
          { snapshot: v.snapshot },
          { ...modules, reports: { counter: blocked }, leavingReported: new Set(['counter']) },
        ),
      ),
    ).toEqual([{ status: blocked.status, reason: 'DeletionBlocked' }]);
  });

  it('lets a runtime that cannot be synced sway the state only when given its problem, and names it in the last operation', () => {
    const runtime = {
      type: 'Runtime',
      status: 'False' as const,
      reason: 'TargetClusterUnreachable',
      message: 'the runtime Kyma could not be synced: down',
    };
    const reports = { reports: { greeter: ready('greeter') } };
    expect(kymaStatus(view({ runtime }, reports)).state).toBe('Ready');
    const swayed = kymaStatus(
      view({ runtime, runtimeProblem: { reason: 'TargetClusterUnreachable', message: 'down' } }, reports),
    );
    expect(swayed).toMatchObject({ state: 'Error', lastOperation: { operation: runtime.message } });
    expect(swayed.conditions).toContainEqual(runtime);
  });

  it("shows a cluster that cannot be reached in its modules' entries too, Unmanaged and failed ones as they are", () => {
    const runtime = {
      type: 'Runtime',
      status: 'False' as const,
      reason: 'TargetClusterUnreachable',
      message: 'the runtime Kyma could not be synced: down',
    };
    const failed: ModuleReport = {
      reason: 'ResourceError',
      status: { name: 'counter', state: 'Error', message: 'broken' },
    };
    const status = kymaStatus(
      view(
        {
          runtime,
          runtimeProblem: { reason: 'TargetClusterUnreachable', message: 'down' },
          snapshot: snapshot([spec('greeter'), spec('counter'), spec('other', { managed: false })]),
        },
        { reports: { greeter: ready('greeter'), counter: failed } },
      ),
    );
    expect(status.modules).toEqual([
      { ...ready('greeter').status, state: 'Error', message: 'down (last reported: Ready, module is ready)' },
      failed.status,
      expect.objectContaining({ name: 'other', state: 'Unmanaged' }),
    ]);
    // The outage is told once; the module failing for a reason of its own is named after it.
    expect(status.lastOperation?.operation).toBe(`${runtime.message}; counter: broken`);
    expect(status.conditions?.[0]).toMatchObject({
      type: 'Modules',
      status: 'False',
      reason: 'TargetClusterUnreachable',
    });
  });

  it('shows an invalid Kyma by its reason alone', () => {
    const invalid = { reason: 'InvalidKymaName' as const, message: 'the name is too long' };
    expect(kymaStatus(view({ invalid: true, snapshot: snapshot([spec('greeter')], { invalid }) }))).toEqual({
      state: 'Error',
      activeChannel: 'regular',
      modules: [],
      conditions: [{ type: 'Modules', status: 'False', ...invalid }],
      lastOperation: { operation: invalid.message },
    });
  });

  it('writes the status with the search attribute values it brings: the modules, those in Error, and name@version', () => {
    const step = writeStatusStep(
      {
        state: 'Error',
        modules: [
          { name: 'greeter', version: '1.0.0', state: 'Ready' },
          { name: 'counter', state: 'Error' },
        ],
      },
      'fast',
    );
    expect(step).toMatchObject({
      kind: 'writeStatus',
      searchAttributes: {
        state: 'Error',
        channel: 'fast',
        modules: ['greeter', 'counter'],
        omitted: 0,
        inError: ['counter'],
        versions: ['greeter@1.0.0'],
      },
    });
  });
});
