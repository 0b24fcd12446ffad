// What a Kyma's workflow has to write after one of its workflow tasks, in one local activity:
// its modules' Manifests (the newest report of each), the Kyma's status, its copy in the runtime
// Kyma, then its Events. One marker and one activation, where a Manifest, a status, its copy and
// an Event each took their own; the requests are the same. The control plane's writes are retried
// until they go through; the runtime's copy has a deadline of its own and, should it fail, is
// told to the workflow (which stops mirroring until the runtime answers again), never retried
// with them.
import { ApplicationFailure } from '@temporalio/activity';
import type { KymaEvent } from '../api/events';
import type { KymaStatusInput } from '../api/kyma';
import { reasonOf } from '../api/reasons';
import type { KymaWrites, KymaWritesDone } from '../contract/kyma-writes';
import type { Readiness } from '../contract/readiness';
import type { WriteRuntimeStatusInput } from '../contract/runtime';
import { within } from '../infra/deadline';
import type { ManifestWriter, SyncManifestInput } from './manifest';

/** How long the runtime's copy of the status may take (the writes of the Kyma's next task wait meanwhile). */
const RUNTIME_STATUS_DEADLINE_MS = 5_000;
/** How long before the runtime's copy is tried once more after a failure that may pass. */
const RUNTIME_STATUS_RETRY_MS = 1_000;

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
  writeRuntimeStatus(input: WriteRuntimeStatusInput): Promise<void>;
}

/** A failure of the runtime's copy as the Kyma shows it: its typed reason, else Failed. */
function failureOf(err: unknown): Readiness {
  if (err instanceof ApplicationFailure) return { reason: reasonOf(err.type), message: err.message };
  return { reason: 'Failed', message: `the runtime Kyma's status: ${(err as Error).message}` };
}

/** The runtime's copy of the status, tried twice unless the first failure is for good; its failure, if it failed. */
async function mirrored(write: () => Promise<void>): Promise<Readiness | undefined> {
  for (let attempt = 1; ; attempt++) {
    try {
      await within(write(), RUNTIME_STATUS_DEADLINE_MS);
      return undefined;
    } catch (err) {
      if (attempt === 2 || (err instanceof ApplicationFailure && err.nonRetryable)) return failureOf(err);
      await new Promise((r) => setTimeout(r, RUNTIME_STATUS_RETRY_MS));
    }
  }
}

export function kymaWritesActivities(w: Writers) {
  return {
    async writeKymaChanges({
      kyma,
      uid,
      manifests = [],
      status,
      mirror,
      events = [],
      at,
    }: WriteKymaChangesInput): Promise<KymaWritesDone> {
      await Promise.all(manifests.map((m) => w.manifests.sync({ kyma, ...m })));
      if (status) await w.writeKymaStatus({ kyma, uid, status, ...(at !== undefined ? { at } : {}) });
      const runtimeFailure =
        status && mirror ? await mirrored(() => w.writeRuntimeStatus({ kyma, status })) : undefined;
      // In their order; an Event that cannot be recorded (its namespace is being deleted, say) holds nothing up.
      for (const event of events) await w.recordKymaEvent({ kyma, uid, event }).catch(() => undefined);
      return runtimeFailure ? { runtimeFailure } : {};
    },
  };
}
