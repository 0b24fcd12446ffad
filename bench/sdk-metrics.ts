// The workers' figures from the Temporal SDK's Prometheus metrics, summed over label sets:
// workflow task execution latency (histogram `temporal_workflow_task_execution_latency…_bucket`,
// summed over the workers too) as a snapshot of the cumulative buckets, of which the bench takes
// the delta around the install and estimates a percentile (the upper bound of the bucket it falls
// in); and each worker's count of the tasks it executed (the histograms' `_count`).

/** Upper bound in seconds → cumulative count. */
export type Histogram = Map<number, number>;

const scrape = async (url: string) => (await (await fetch(url)).text()).split('\n');

export async function workflowTaskLatency(urls: string[]): Promise<Histogram> {
  return await latency(urls, 'workflow_task_execution_latency');
}

/** How long local activities took (each one, from the SDK's histogram), summed over the workers. */
export async function localActivityLatency(urls: string[]): Promise<Histogram> {
  return await latency(urls, 'local_activity_execution_latency');
}

async function latency(urls: string[], name: string): Promise<Histogram> {
  const bucket = new RegExp(`^temporal_${name}(\\w*)_bucket\\{(.*)\\} (\\S+)`);
  const h: Histogram = new Map();
  for (const line of (await Promise.all(urls.map(scrape))).flat()) {
    const m = bucket.exec(line);
    if (!m) continue;
    const le = /le="([^"]+)"/.exec(m[2]!)?.[1];
    if (!le) continue;
    // The SDK records milliseconds unless the name says seconds.
    const bound = le === '+Inf' ? Infinity : Number(le) / (m[1]!.includes('seconds') ? 1 : 1000);
    h.set(bound, (h.get(bound) ?? 0) + Number(m[3]));
  }
  return h;
}

/** What one worker executed since it started. */
export interface TaskCounts {
  workflowTasks: number;
  activities: number;
  localActivities: number;
}

const COUNT = /^temporal_(workflow_task|activity|local_activity)_execution_latency\w*_count(?:\{.*\})? (\S+)/;
const KEY = { workflow_task: 'workflowTasks', activity: 'activities', local_activity: 'localActivities' } as const;

/** Workflow tasks, activities and local activities one worker executed (its SDK metrics at `url`). */
export async function taskCounts(url: string): Promise<TaskCounts> {
  const c: TaskCounts = { workflowTasks: 0, activities: 0, localActivities: 0 };
  for (const line of await scrape(url)) {
    const m = COUNT.exec(line);
    if (m) c[KEY[m[1] as keyof typeof KEY]] += Number(m[2]);
  }
  return c;
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
  return bound === undefined
    ? { count, seconds: bounds.at(-1) ?? 0, above: true }
    : { count, seconds: bound, above: false };
}

/** The share of observations above `seconds` (a bucket bound). */
export function shareAbove(h: Histogram, seconds: number): number {
  const count = h.get(Infinity) ?? 0;
  return count ? 1 - (h.get(seconds) ?? 0) / count : 0;
}
