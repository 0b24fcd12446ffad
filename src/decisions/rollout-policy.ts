// A channel's rollout policy: validated from what operators write in the ConfigMap
// `klm-rollout-policy`, and cut into waves. Pure.
import type { RolloutPolicy, WaveSize } from '../contract/rollout';

/** The fleet's default: a 1 % canary, then growing waves, 10 minutes of soak after each. */
export const DEFAULT_ROLLOUT_POLICY: RolloutPolicy = {
  waves: ['1%', '10%', '30%'],
  soakMs: 10 * 60_000,
  maxConcurrent: 100,
  failureBudget: '5%',
  waveTimeoutMs: 30 * 60_000,
  start: 'auto',
};

const UNITS: Record<string, number> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000 };

/** `"90s"`, `"10m"`, `"1h30m"`, or milliseconds as a number. */
export function parseDuration(v: unknown): number | undefined {
  if (typeof v === 'number') return Number.isFinite(v) && v >= 0 ? v : undefined;
  if (typeof v !== 'string' || !/^(\d+(ms|s|m|h))+$/.test(v)) return undefined;
  let total = 0;
  for (const [, n, unit] of v.matchAll(/(\d+)(ms|s|m|h)/g)) total += Number(n) * UNITS[unit!]!;
  return total;
}

/**
 * A whole count of at least `min`: a number, or a string of digits (YAML reads `"5"` as a
 * string); negative, fractional and other values are no count.
 */
function wholeCount(v: unknown, min: number): number | undefined {
  const n = typeof v === 'string' && /^\d+$/.test(v) ? Number(v) : v;
  return typeof n === 'number' && Number.isInteger(n) && n >= min ? n : undefined;
}

/** A positive count (5, "5") or a share between 0 and 100 % ("10%"). */
function waveSize(v: unknown): WaveSize | undefined {
  if (typeof v === 'string' && /^\d+(\.\d+)?%$/.test(v)) {
    const p = Number(v.slice(0, -1));
    return p > 0 && p <= 100 ? (v as WaveSize) : undefined;
  }
  return wholeCount(v, 1);
}

/** What a field an operator wrote sets in the policy, or the problem with it. */
type FieldValue = { set: Partial<RolloutPolicy>; problem?: undefined } | { problem: string; set?: undefined };

function wavesOf(v: unknown): FieldValue {
  if (!Array.isArray(v))
    return { problem: `waves ${JSON.stringify(v)} must be a list of sizes, each a count (5) or a share ("10%")` };
  const given = v as unknown[];
  const sizes = given.map(waveSize);
  const bad: unknown = given.find((_, i) => sizes[i] === undefined);
  if (bad !== undefined)
    return {
      problem: `waves: the size ${JSON.stringify(bad)} is neither a positive whole count (5) nor a share between 0 and 100 % ("10%")`,
    };
  return { set: { waves: sizes as WaveSize[] } };
}

function durationOf(field: string, key: 'soakMs' | 'waveTimeoutMs', v: unknown): FieldValue {
  const ms = parseDuration(v);
  if (ms === undefined) return { problem: `${field} ${JSON.stringify(v)} is not a duration ("90s", "10m", "1h")` };
  return { set: { [key]: ms } };
}

function maxConcurrentOf(v: unknown): FieldValue {
  const n = wholeCount(v, 1);
  if (n === undefined) return { problem: `maxConcurrent ${JSON.stringify(v)} must be a whole number of at least 1` };
  return { set: { maxConcurrent: n } };
}

function failureBudgetOf(v: unknown): FieldValue {
  const b = wholeCount(v, 0) ?? waveSize(v);
  if (b === undefined)
    return {
      problem: `failureBudget ${JSON.stringify(v)} must be a whole count (0, 2) or a share of the Kymas reached ("5%")`,
    };
  return { set: { failureBudget: b } };
}

function startOf(v: unknown): FieldValue {
  if (v !== 'auto' && v !== 'manual') return { problem: `start ${JSON.stringify(v)} must be auto or manual` };
  return { set: { start: v } };
}

/** The fields an operator may write, each with how it is read, in the order they are checked. */
const FIELDS: [string, (v: unknown) => FieldValue][] = [
  ['waves', wavesOf],
  ['soak', (v) => durationOf('soak', 'soakMs', v)],
  ['waveTimeout', (v) => durationOf('waveTimeout', 'waveTimeoutMs', v)],
  ['maxConcurrent', maxConcurrentOf],
  ['failureBudget', failureBudgetOf],
  ['start', startOf],
];

/**
 * The policy an operator wrote (parsed YAML or JSON), over the default for what it leaves out;
 * or the problem with it, in words that say what to fix.
 */
export function rolloutPolicyOf(
  raw: unknown,
  base: RolloutPolicy = DEFAULT_ROLLOUT_POLICY,
): { policy: RolloutPolicy; problem?: undefined } | { problem: string; policy?: undefined } {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw))
    return { problem: 'the policy must be a map of waves, soak, maxConcurrent, failureBudget, waveTimeout, start' };
  const r = raw as Record<string, unknown>;
  const known = new Set(['waves', 'soak', 'maxConcurrent', 'failureBudget', 'waveTimeout', 'start']);
  const unknown = Object.keys(r).filter((k) => !known.has(k));
  if (unknown.length)
    return {
      problem: `unknown field${unknown.length > 1 ? 's' : ''} ${unknown.join(', ')} (known: ${[...known].join(', ')})`,
    };
  let policy = { ...base };
  for (const [field, read] of FIELDS) {
    if (r[field] === undefined) continue;
    const v = read(r[field]);
    if (v.problem !== undefined) return { problem: v.problem };
    policy = { ...policy, ...v.set };
  }
  return { policy };
}

/** How many of `total` a size names (a share rounds up, at least one). */
function countOf(size: WaveSize, total: number): number {
  return typeof size === 'number' ? size : Math.max(1, Math.ceil((Number(size.slice(0, -1)) / 100) * total));
}

/** Cuts the Kymas (in order) into the policy's waves; what is left forms the last wave. */
export function cutWaves<T>(kymas: readonly T[], policy: RolloutPolicy): T[][] {
  const waves: T[][] = [];
  let at = 0;
  for (const size of policy.waves) {
    if (at >= kymas.length) break;
    const n = countOf(size, kymas.length);
    waves.push(kymas.slice(at, at + n));
    at += n;
  }
  if (at < kymas.length) waves.push(kymas.slice(at));
  return waves;
}

/** Whether `failed` of `reached` Kymas spend more than the budget. */
export function budgetExceeded(policy: RolloutPolicy, failed: number, reached: number): boolean {
  const b = policy.failureBudget;
  if (typeof b === 'number') return failed > b;
  return reached > 0 && failed / reached > Number(b.slice(0, -1)) / 100;
}
