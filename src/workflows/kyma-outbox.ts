// What a Kyma's workflow and the modules it runs have to write to the control plane, gathered
// and written by one local activity (activities/kyma-writes.ts): the modules' Manifests (the
// newest report of each), the Kyma's status, its Events. The Kyma's status write takes
// whatever is gathered with it; what is gathered while the Kyma's loop waits is written by
// `flushWhenIdle`.
import { condition } from '@temporalio/workflow';
import type { KymaEvent } from '../api/events';
import type { KymaStatusInput } from '../api/kyma';
import type { Activities } from '../activities';
import type { KymaRef } from '../contract/kyma';
import { controlPlaneActivities } from './control-plane';
import type { LocalLane } from './local-lane';

type Changes = Parameters<Activities['writeKymaChanges']>[0];
export type ManifestWrite = NonNullable<Changes['manifests']>[number];

export class KymaOutbox {
  private manifests = new Map<string, ManifestWrite>();
  private events: KymaEvent[] = [];
  /** Writes under way: a continue-as-new waits for them. */
  private inFlight = 0;
  /** Retried until they go through, as every control-plane write of the Kyma's workflow. */
  private readonly writes: typeof controlPlaneActivities;

  /** `uid`: the Kyma's uid now (its status and Events go to that Kyma only). */
  constructor(
    private readonly kyma: KymaRef,
    private readonly uid: () => string,
    lane: LocalLane,
  ) {
    this.writes = lane.serial(controlPlaneActivities);
  }

  /** Module `name`'s Manifest is to be written so (replacing what was gathered for it). */
  manifest(name: string, m: ManifestWrite): void {
    this.manifests.set(name, m);
  }

  event(e: KymaEvent): void {
    this.events.push(e);
  }

  /** Module `name`'s Manifest is about to be deleted: what was gathered for it is not written. */
  forget(name: string): void {
    this.manifests.delete(name);
  }

  pending(): boolean {
    return this.manifests.size > 0 || this.events.length > 0;
  }

  /** Nothing gathered, nothing being written. */
  empty(): boolean {
    return !this.pending() && this.inFlight === 0;
  }

  /** Writes what is gathered, with `status` after the Manifests. */
  async flush(status?: KymaStatusInput): Promise<void> {
    if (!this.pending() && !status) return;
    const manifests = [...this.manifests.values()];
    const events = this.events;
    this.manifests = new Map();
    this.events = [];
    this.inFlight++;
    try {
      // `at`, the workflow's time: a retry of this task writes with a later one, so a late write of this attempt is not made over it.
      await this.writes.writeKymaChanges({
        kyma: this.kyma,
        uid: this.uid(),
        ...(manifests.length ? { manifests } : {}),
        ...(status ? { status } : {}),
        ...(events.length ? { events } : {}),
        at: Date.now(),
      });
    } finally {
      this.inFlight--;
    }
  }

  /** Writes what is gathered whenever `idle()` says the Kyma's loop will not write its status with it; runs for good. */
  async flushWhenIdle(idle: () => boolean): Promise<void> {
    for (;;) {
      await condition(() => this.pending() && idle());
      await this.flush();
    }
  }
}
