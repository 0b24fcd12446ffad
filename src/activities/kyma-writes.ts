// What a Kyma's workflow has to write to the control plane after one of its workflow tasks, in
// one local activity: its modules' Manifests (the newest report of each), the Kyma's status,
// then its Events. One marker and one activation, where a Manifest, a status and an Event each
// took their own; the requests are the same.
import type { KymaEvent } from '../api/events';
import type { KymaStatusInput } from '../api/kyma';
import type { KymaWrites } from '../contract/kyma-writes';
import type { ManifestWriter, SyncManifestInput } from './manifest';

export interface WriteKymaChangesInput extends KymaWrites {
  kyma: SyncManifestInput['kyma'];
  /** The Kyma's uid: its status and Events go to that Kyma only. */
  uid: string;
  /** When the workflow decided these writes (its time, ms): the status write's fence (activities/kyma.ts). */
  at?: number;
}

interface Writers {
  manifests: ManifestWriter;
  writeKymaStatus(input: {
    kyma: SyncManifestInput['kyma'];
    uid: string;
    status: KymaStatusInput;
    at?: number;
  }): Promise<void>;
  recordKymaEvent(input: { kyma: SyncManifestInput['kyma']; uid: string; event: KymaEvent }): Promise<void>;
}

export function kymaWritesActivities(w: Writers) {
  return {
    async writeKymaChanges({
      kyma,
      uid,
      manifests = [],
      status,
      events = [],
      at,
    }: WriteKymaChangesInput): Promise<void> {
      await Promise.all(manifests.map((m) => w.manifests.sync({ kyma, ...m })));
      if (status) await w.writeKymaStatus({ kyma, uid, status, ...(at !== undefined ? { at } : {}) });
      // In their order; an Event that cannot be recorded (its namespace is being deleted, say) holds nothing up.
      for (const event of events) await w.recordKymaEvent({ kyma, uid, event }).catch(() => undefined);
    },
  };
}
