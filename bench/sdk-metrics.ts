// The worker's workflow task execution latency, from the Temporal SDK's Prometheus metrics
// (histogram `temporal_workflow_task_execution_latency…_bucket`, summed over its label sets):
// a snapshot of the cumulative buckets; the bench takes the delta around the install and
// estimates a percentile from it (the upper bound of the bucket it falls in).

/** Upper bound in seconds → cumulative count. */
export type Histogram = Map<number, number>;

const BUCKET = /^temporal_workflow_task_execution_latency(\w*)_bucket\{(.*)\} (\S+)/;

export async function workflowTaskLatency(url: string): Promise<Histogram> {
  const h: Histogram = new Map();
  const text = await (await fetch(url)).text();
  for (const line of text.split('\n')) {
    const m = BUCKET.exec(line);
    if (!m) continue;
    const le = /le="([^"]+)"/.exec(m[2]!)?.[1];
    if (!le) continue;
    // The SDK records milliseconds unless the name says seconds.
    const bound = le === '+Inf' ? Infinity : Number(le) / (m[1]!.includes('seconds') ? 1 : 1000);
    h.set(bound, (h.get(bound) ?? 0) + Number(m[3]));
  }
  return h;
}

export function histogramDelta(before: Histogram, after: Histogram): Histogram {
  return new Map([...after].map(([le, c]) => [le, c - (before.get(le) ?? 0)]));
}

/**
 * Tasks counted, and the bucket bound at or below which `p` % of them finished (seconds); past
 * the largest finite bucket, that bound with `above` set.
 */
export function histogramPercentile(h: Histogram, p: number): { count: number; seconds: number; above: boolean } {
  const bounds = [...h.keys()].filter(Number.isFinite).sort((a, b) => a - b);
  const count = h.get(Infinity) ?? 0;
  if (count === 0) return { count, seconds: 0, above: false };
  const bound = bounds.find((b) => h.get(b)! >= (p / 100) * count);
  return bound === undefined ? { count, seconds: bounds.at(-1) ?? 0, above: true } : { count, seconds: bound, above: false };
}

/** The share of observations above `seconds` (a bucket bound). */
export function shareAbove(h: Histogram, seconds: number): number {
  const count = h.get(Infinity) ?? 0;
  return count ? 1 - (h.get(seconds) ?? 0) / count : 0;
}
