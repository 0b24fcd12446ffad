// Maintenance windows, as upstream's lifecycle-manager has them (its `maintenancewindows`
// resolver and policy file): a module whose ModuleTemplate says `requiresDowntime: true` moves
// from its installed version to another only inside a window of the policy. The policy's first
// rule that matches the Kyma's runtime labels (any of its regular expressions finding its value)
// gives the windows, else its default. A window names week days (`Mon` … `Sun`) and a begin and
// end time of day with a UTC offset (`21:00:00+00:00`; an end not after the begin ends the next
// day), or no days and two RFC 3339 timestamps. First installs are never held; neither is a
// Kyma with `spec.skipMaintenanceWindows`. The activity resolves the window with its clock;
// the workflow decides with its own (replayable) time whether the window is open.
import type { Reason } from '../api/reasons';
import type { ResolvedModule, Resolution, Window } from '../contract/module';

export interface PolicyWindow {
  days?: string[];
  begin: string;
  end: string;
}

/** What a rule matches: upstream's runtime fields, each a regular expression. */
export interface PolicyMatch {
  globalAccountID?: string;
  plan?: string;
  region?: string;
  platformRegion?: string;
}

export interface MaintenancePolicy {
  rules?: { match: PolicyMatch; windows: PolicyWindow[] }[];
  default: PolicyWindow;
}

/** The Kyma's runtime labels a rule matches, by upstream's field names. */
export type Runtime = Partial<Record<keyof PolicyMatch, string>>;

/** Upstream's default minimum: a window counts while at least this much of it is left. */
export const MIN_WINDOW_MS = 20 * 60_000;

const DAY_MS = 24 * 3_600_000;
const WEEK_DAYS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];
const CLOCK = /^(\d{2}):(\d{2}):(\d{2})(Z|[+-]\d{2}:\d{2})$/;

/** A time of day with its UTC offset: seconds after midnight, offset in minutes. */
function clock(s: string): { seconds: number; offsetMinutes: number } | undefined {
  const m = CLOCK.exec(s);
  if (!m) return undefined;
  const [, h, min, sec, zone] = m;
  const offsetMinutes =
    zone === 'Z' ? 0 : (zone!.startsWith('-') ? -1 : 1) * (Number(zone!.slice(1, 3)) * 60 + Number(zone!.slice(4, 6)));
  return { seconds: Number(h) * 3600 + Number(min) * 60 + Number(sec), offsetMinutes };
}

function timestamp(s: string): number | undefined {
  if (!/^\d{4}-\d{2}-\d{2}T/.test(s)) return undefined;
  const t = Date.parse(s);
  return Number.isNaN(t) ? undefined : t;
}

function windowProblem(w: PolicyWindow, where: string): string | undefined {
  if (typeof w?.begin !== 'string' || typeof w.end !== 'string') return `${where}: a window needs begin and end`;
  const parse = w.days?.length ? clock : timestamp;
  const form = w.days?.length
    ? 'a time of day with offset (21:00:00+00:00)'
    : 'an RFC 3339 timestamp (a window without days)';
  for (const t of [w.begin, w.end]) if (parse(t) === undefined) return `${where}: "${t}" is not ${form}`;
  const unknown = (w.days ?? []).find((d) => !WEEK_DAYS.includes(d));
  return unknown ? `${where}: "${unknown}" is not a week day (Mon … Sun)` : undefined;
}

/** The policy in upstream's JSON format, or why it cannot be used. */
export function parsePolicy(json: string): { policy: MaintenancePolicy } | { problem: string } {
  let policy: MaintenancePolicy;
  try {
    policy = JSON.parse(json) as MaintenancePolicy;
  } catch (err) {
    return { problem: `not JSON: ${(err as Error).message}` };
  }
  if (typeof policy !== 'object' || policy === null || !policy.default) return { problem: 'it has no default window' };
  const problem = [
    windowProblem(policy.default, 'default'),
    ...(policy.rules ?? []).flatMap((r, i) => [
      ...(r.windows ?? []).map((w, j) => windowProblem(w, `rule ${i + 1}, window ${j + 1}`)),
      ...Object.values(r.match ?? {}).map((p) =>
        typeof p === 'string' && !validRegExp(p) ? `rule ${i + 1}: "${p}" is not a regular expression` : undefined,
      ),
    ]),
  ].find(Boolean);
  return problem ? { problem } : { policy };
}

function validRegExp(p: string): boolean {
  try {
    new RegExp(p);
    return true;
  } catch {
    return false;
  }
}

/** Upstream's rule match: any field whose expression is set finds the runtime's (non-empty) value. */
function matches(match: PolicyMatch, runtime: Runtime): boolean {
  return (Object.keys(match) as (keyof PolicyMatch)[]).some((k) => {
    const pattern = match[k];
    const value = runtime[k];
    return Boolean(pattern && value && new RegExp(pattern).test(value));
  });
}

/** The first occurrence of a window that has at least `minMs` left at `now`, within the next week. */
function nextOccurrence(w: PolicyWindow, now: number, minMs: number): Window | undefined {
  const open = (begin: number, end: number) => now + minMs < end;
  if (!w.days?.length) {
    const begin = timestamp(w.begin)!;
    const end = timestamp(w.end)!;
    return open(begin, end) ? { begin, end } : undefined;
  }
  const b = clock(w.begin)!;
  const e = clock(w.end)!;
  const today = new Date(now);
  const [y, m, d] = [today.getUTCFullYear(), today.getUTCMonth(), today.getUTCDate()];
  // Upstream takes today's date (UTC) with the window's clock in the window's offset; the week
  // day is that date's.
  for (let k = 0; k < 8; k++) {
    const date = Date.UTC(y, m, d + k);
    if (!w.days.includes(WEEK_DAYS[new Date(date).getUTCDay()]!)) continue;
    const begin = date + b.seconds * 1000 - b.offsetMinutes * 60_000;
    let end = date + e.seconds * 1000 - e.offsetMinutes * 60_000;
    if (end <= begin) end += DAY_MS;
    if (open(begin, end)) return { begin, end };
  }
  return undefined;
}

/** The window the Kyma may be upgraded in now or next (upstream's `Resolve` with an ongoing window). */
export function resolveWindow(
  policy: MaintenancePolicy,
  runtime: Runtime,
  now: number,
  minMs = MIN_WINDOW_MS,
): Window | undefined {
  const rule = (policy.rules ?? []).find((r) => matches(r.match ?? {}, runtime));
  for (const w of rule?.windows ?? []) {
    const found = nextOccurrence(w, now, minMs);
    if (found) return found;
  }
  return nextOccurrence(policy.default, now, minMs);
}

/** A module kept at its installed version until a window opens. */
export interface Hold {
  message: string;
  /** The policy cannot be used: the module shows this failure (upstream: Error) rather than a wait. */
  reason?: Reason;
  /** When it may move (the window's begin); none: no window ahead, a change or the drift timer looks again. */
  until?: number;
}

const iso = (ms: number) => new Date(ms).toISOString();

/**
 * Whether a resolved module moves now or keeps its installed version: it moves unless its
 * template requires downtime, it is installed at another version, and `now` is outside its window.
 */
export function holdForMaintenance(
  r: Extract<Resolution, { module: object }>,
  installed: ResolvedModule | undefined,
  now: number,
): { module: ResolvedModule; hold?: Hold } {
  const { downtime } = r;
  if (!downtime || !installed || installed.version === r.module.version) return { module: r.module };
  const upgrade = `upgrading ${r.name} from ${installed.version} to ${r.module.version} requires downtime`;
  if (downtime.problem)
    return {
      module: installed,
      hold: {
        reason: 'MaintenancePolicyInvalid',
        message: `${upgrade}, and the maintenance policy cannot be used: ${downtime.problem}`,
      },
    };
  const w = downtime.window;
  if (!w) return { module: installed, hold: { message: `${upgrade}, and the maintenance policy has no window ahead` } };
  if (now >= w.begin && now < w.end) return { module: r.module };
  return {
    module: installed,
    hold: {
      message: `${upgrade}: waiting for the maintenance window ${iso(w.begin)} – ${iso(w.end)}`,
      ...(w.begin > now ? { until: w.begin } : {}),
    },
  };
}
