// A Kyma's writes after a workflow task, in one local activity: Manifests, then the status that
// sums them up, then the Events, which never fail the writes before them.
import { describe, expect, it } from 'vitest';
import { kymaWritesActivities } from '../../src/activities/kyma-writes';
import type { ManifestWriter } from '../../src/activities/manifest';
import { mod } from './decisions/fixtures';

describe('writing what a Kyma workflow gathered', () => {
  const kyma = { namespace: 'kcp-system', name: 'k1' };

  function writers(failEvents = false) {
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
    ).resolves.toBeUndefined();
    expect(log).toEqual(['status Ready', 'event DependencyTimeout']);
  });
});
