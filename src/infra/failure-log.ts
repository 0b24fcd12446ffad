// What the log says of failing activities: one line when a failure starts (or fails another way),
// nothing for further attempts that fail the same way, a reminder with their count once a
// window has passed, and a line when the activity succeeds again. A failing Kyma is retried for
// as long as it fails; its log must not grow with every attempt.
import { BoundedMap } from './bounded-map';

/** One failed attempt of an activity. */
export interface AttemptFailure {
  /** The workflow it ran for (kyma/<ns>/<name>, with ` (module <module>)` for a module's activity, ...). */
  workflowId: string;
  activity: string;
  reason: string;
  message: string;
  /** When and how it is tried again (see `retryOutlook`). */
  next: string;
}

interface Seen {
  /** When this failure was last written. */
  lastLine: number;
  /** Attempts that failed so since then. */
  unwritten: number;
}

interface Failing {
  since: number;
  attempts: number;
  /** By reason and message. */
  seen: BoundedMap<string, Seen>;
}

/** Different failures remembered per activity of a workflow. */
const FAILURES_KEPT = 16;

export class FailureLog {
  private readonly failing: BoundedMap<string, Failing>;

  /**
   * `remindAfterMs`: a failure that goes on is written again, with the count of attempts that
   * failed so meanwhile, once this long has passed since it was last written. `kept`: how many
   * workflows' activities are remembered (the oldest is forgotten).
   */
  constructor(
    private readonly remindAfterMs = 10 * 60_000,
    kept = 10_000,
  ) {
    this.failing = new BoundedMap(kept);
  }

  /** The line to write for this failed attempt, or none when it fails as the last line said. */
  failed(f: AttemptFailure, now: number): string | undefined {
    const key = `${f.workflowId} ${f.activity}`;
    let entry = this.failing.get(key);
    if (!entry) this.failing.set(key, (entry = { since: now, attempts: 0, seen: new BoundedMap(FAILURES_KEPT) }));
    entry.attempts++;
    const signature = `${f.reason} ${f.message}`;
    const seen = entry.seen.get(signature);
    if (!seen) {
      entry.seen.set(signature, { lastLine: now, unwritten: 0 });
      return `${f.workflowId}: ${f.activity} failed (${f.reason}): ${f.message}; ${f.next}`;
    }
    if (now - seen.lastLine < this.remindAfterMs) {
      seen.unwritten++;
      return undefined;
    }
    const again = seen.unwritten + 1;
    const line =
      `${f.workflowId}: ${f.activity} failed again (${f.reason}), ${again} ` +
      `${again === 1 ? 'time' : 'times'} in ${span(now - seen.lastLine)}: ${f.message}; ${f.next}`;
    entry.seen.set(signature, { lastLine: now, unwritten: 0 });
    return line;
  }

  /** The line to write when an activity that was failing succeeds, else none. */
  succeeded(workflowId: string, activity: string, now: number): string | undefined {
    const key = `${workflowId} ${activity}`;
    const entry = this.failing.get(key);
    if (!entry) return undefined;
    this.failing.delete(key);
    return `${workflowId}: ${activity} succeeded after ${entry.attempts} failed ${entry.attempts === 1 ? 'attempt' : 'attempts'} in ${span(now - entry.since)}`;
  }
}

/** 1.5s, 45s, 2m, 2m30s, 1h5m. */
export function span(ms: number): string {
  if (ms < 10_000) return `${Math.round(ms / 100) / 10}s`;
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return s % 60 ? `${m}m${s % 60}s` : `${m}m`;
  return m % 60 ? `${Math.floor(m / 60)}h${m % 60}m` : `${Math.floor(m / 60)}h`;
}
