// A Kyma's writes after a workflow task, in one local activity: Manifests, then the status that
// sums them up (and its copy in the runtime Kyma, whose failure is told, not thrown), then the
// Events, which never fail the writes before them.
import { ApplicationFailure } from '@temporalio/activity';
import { describe, expect, it } from 'vitest';
import { kymaWritesActivities } from '../../src/activities/kyma-writes';
import type { ManifestWriter } from '../../src/activities/manifest';
import { mod } from './decisions/fixtures';

describe('writing what a Kyma workflow gathered', () => {
  const kyma = { namespace: 'kcp-system', name: 'k1' };

  function writers(failEvents = false, runtime: (() => Promise<void>)[] = []) {
    const log: string[] = [];
    const manifests = {
      sync: (m: { module: { name: string } }) => (log.push(`manifest ${m.module.name}`), Promise.resolve()),
    } as unknown as ManifestWriter;
    return {
      log,
      activities: kymaWritesActivities({
        manifests,
        writeKymaStatus: ({ status }) => (log.push(`status ${status.state}`), Promise.resolve()),
        recordKymaEvent: ({ event }) => (
          log.push(`event ${event.reason}`),
          failEvents ? Promise.reject(new Error('namespace terminating')) : Promise.resolve()
        ),
        writeRuntimeStatus: ({ status }) => (
          log.push(`runtime ${status.state}`),
          runtime.shift()?.() ?? Promise.resolve()
        ),
      }),
    };
  }

  it('writes the Manifests, then the status, then the Events in their order', async () => {
    const { log, activities } = writers();
    const readiness = { reason: 'Ready' as const, message: 'module is ready' };
    await activities.writeKymaChanges({
      kyma,
      uid: 'u1',
      manifests: [{ uid: 'u1', module: mod(), readiness }],
      status: { state: 'Ready' },
      events: [
        { type: 'Normal', reason: 'ModuleInstalling', message: 'm' },
        { type: 'Normal', reason: 'ModuleUpgrading', message: 'k' },
      ],
    });
    expect(log).toEqual(['manifest greeter', 'status Ready', 'event ModuleInstalling', 'event ModuleUpgrading']);
  });

  it('goes through when an Event cannot be recorded', async () => {
    const { log, activities } = writers(true);
    await expect(
      activities.writeKymaChanges({
        kyma,
        uid: 'u1',
        status: { state: 'Ready' },
        events: [{ type: 'Warning', reason: 'DependencyTimeout', message: 'x' }],
      }),
    ).resolves.toEqual({});
    expect(log).toEqual(['status Ready', 'event DependencyTimeout']);
  });

  it("copies the status to the runtime Kyma after the control plane's, when asked to", async () => {
    const { log, activities } = writers();
    const status = { state: 'Ready' as const };
    await expect(activities.writeKymaChanges({ kyma, uid: 'u1', status, mirror: true })).resolves.toEqual({});
    await activities.writeKymaChanges({ kyma, uid: 'u1', status });
    expect(log).toEqual(['status Ready', 'runtime Ready', 'status Ready']);
  });

  it('tells a runtime copy that failed twice, or for good at once, as the Kyma shows it, and still records the Events', async () => {
    const refused = () => Promise.reject(new Error('connection reset'));
    const twice = writers(false, [refused, refused]);
    const done = await twice.activities.writeKymaChanges({
      kyma,
      uid: 'u1',
      status: { state: 'Ready' },
      mirror: true,
      events: [{ type: 'Normal', reason: 'ModuleInstalling', message: 'm' }],
    });
    expect(done).toEqual({
      runtimeFailure: { reason: 'Failed', message: "the runtime Kyma's status: connection reset" },
    });
    expect(twice.log).toEqual(['status Ready', 'runtime Ready', 'runtime Ready', 'event ModuleInstalling']);
    const unreachable = () =>
      Promise.reject(ApplicationFailure.nonRetryable('its API server is unreachable', 'TargetClusterUnreachable'));
    const once = writers(false, [unreachable]);
    expect(
      await once.activities.writeKymaChanges({ kyma, uid: 'u1', status: { state: 'Ready' }, mirror: true }),
    ).toEqual({ runtimeFailure: { reason: 'TargetClusterUnreachable', message: 'its API server is unreachable' } });
    expect(once.log).toEqual(['status Ready', 'runtime Ready']);
  });

  it('goes through a runtime copy that failed once', async () => {
    const { log, activities } = writers(false, [() => Promise.reject(new Error('connection reset'))]);
    expect(await activities.writeKymaChanges({ kyma, uid: 'u1', status: { state: 'Ready' }, mirror: true })).toEqual(
      {},
    );
    expect(log).toEqual(['status Ready', 'runtime Ready', 'runtime Ready']);
  });
});
