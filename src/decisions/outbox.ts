// What a Kyma's workflow has gathered to write to the control plane: its modules' Manifests (the
// newest report of each) and its Events, taken together with the Kyma's status (or alone, while
// the Kyma waits) as one write.
import type { KymaEvent } from '../api/events';
import type { KymaStatusInput } from '../api/kyma';
import type { KymaWrites, ManifestWrite } from '../contract/kyma-writes';

export class Outbox {
  private manifests = new Map<string, ManifestWrite>();
  private events: KymaEvent[] = [];

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

  /** What is gathered, with `status` after the Manifests; the outbox is empty after. */
  take(status?: KymaStatusInput): KymaWrites {
    const manifests = [...this.manifests.values()];
    const events = this.events;
    this.manifests = new Map();
    this.events = [];
    return {
      ...(manifests.length ? { manifests } : {}),
      ...(status ? { status } : {}),
      ...(events.length ? { events } : {}),
    };
  }
}
