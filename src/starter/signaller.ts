// Sends signals without storms: at most one call in flight per workflow and signal; events
// that arrive meanwhile collapse into one more call after it. A key with a window sends at most
// one call per window. A signal to a workflow that does not exist (any more) is dropped, except
// for signalWithStart, which creates it.
import { WorkflowNotFoundError } from '@temporalio/client';
import { signalLatency, signalsSent } from '../infra/metrics';

/** What a call resolves to that found nothing to send: not counted as a signal sent. */
export const NOTHING_SENT = Symbol('nothing sent');

type Send = () => Promise<unknown>;

/** The signal name of a Signaller key (`<workflow id>#<signal>[/<qualifier>]`). */
export function signalOf(key: string): string {
  const name = key.slice(key.lastIndexOf('#') + 1);
  const slash = name.indexOf('/');
  return slash < 0 ? name : name.slice(0, slash);
}

export class Signaller {
  private readonly inFlight = new Map<string, { again?: Send }>();
  sent = 0;
  failed = 0;

  constructor(private readonly onError: (err: unknown, key: string) => void) {}

  /**
   * Queues `send` under `key`: `<workflow id>#<signal name>`, optionally `/<qualifier>` after
   * the name, so that calls of one signal that must not replace each other (one per kind of
   * the object behind it, say) collapse apart. Metrics name the signal without the qualifier.
   * `holdMs`: a call with nothing in flight waits that long first, so that what comes meanwhile
   * goes out with it; one that comes while a call is in flight goes out no sooner than `holdMs`
   * after that call went out. So a key sends at most one call per window, each a workflow task.
   */
  submit(key: string, send: Send, holdMs = 0): void {
    const slot = this.inFlight.get(key);
    if (slot) {
      slot.again = send;
      return;
    }
    this.inFlight.set(key, {});
    // Held: what comes within `holdMs` goes out in this one call.
    if (holdMs > 0) setTimeout(() => void this.drain(key, send, holdMs), holdMs);
    else void this.drain(key, send, holdMs);
  }

  private async drain(key: string, send: Send, holdMs: number): Promise<void> {
    const signal = signalOf(key);
    // A call submitted while this one was held replaces it (it is the latest).
    const held = this.inFlight.get(key)!;
    let next: Send | undefined = held.again ?? send;
    held.again = undefined;
    while (next) {
      const sentAt = Date.now();
      const end = signalLatency.startTimer({ signal });
      let sent = true;
      try {
        sent = (await next()) !== NOTHING_SENT;
        if (sent) {
          this.sent++;
          signalsSent.inc({ signal, outcome: 'ok' });
        }
      } catch (err) {
        if (err instanceof WorkflowNotFoundError) {
          signalsSent.inc({ signal, outcome: 'no-workflow' });
        } else {
          this.failed++;
          signalsSent.inc({ signal, outcome: 'failed' });
          this.onError(err, key);
        }
      } finally {
        if (sent) end();
      }
      const slot = this.inFlight.get(key)!;
      // What came while this call was in flight waits for the rest of its window (unless it sent
      // nothing), and what comes during that wait replaces it.
      const rest = sentAt + holdMs - Date.now();
      if (slot.again && sent && rest > 0) await new Promise((r) => setTimeout(r, rest));
      next = slot.again;
      slot.again = undefined;
    }
    this.inFlight.delete(key);
  }

  /** Resolves once nothing is in flight (for orderly shutdown). */
  async idle(): Promise<void> {
    while (this.inFlight.size) await new Promise((r) => setTimeout(r, 20));
  }
}
