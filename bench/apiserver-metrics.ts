// API requests by verb, from the kube-apiservers' own /metrics (`apiserver_request_total`),
// read with the stack's kubeconfig (system:masters). A snapshot counts requests per
// (server, verb, resource, subresource); the bench takes deltas around a phase.
//
// What counts as ours: all requests but those on resources only the clusters' own controllers
// and kwok write (pods, ReplicaSets, nodes, leases, …; `ours` below) and, in target clusters,
// Events, status subresources and what the controller-manager creates in each new namespace
// (written by the controllers and by the sample module managers, for the engine and the loop
// alike). What remains of the background (discovery and
// lists by the controller-manager, the API server's own bookkeeping) is removed by subtracting
// each key's rate in a quiet window before the install. The engine writes none of the left-out
// resources and reads none of them, so none of its requests is left out.
import https from 'node:https';
import type { KubeConfig } from '@kubernetes/client-node';

export const VERBS = ['GET', 'LIST', 'WATCH', 'POST', 'PUT', 'PATCH', 'APPLY', 'DELETE'] as const;

export interface MetricsSource {
  /** `kcp` or a target cluster's name. */
  name: string;
  kubeconfig: KubeConfig;
}

/** `server verb resource subresource` → count. */
export type RequestCounts = Map<string, number>;

async function getMetrics(kc: KubeConfig): Promise<string> {
  const cluster = kc.getCurrentCluster()!;
  const opts: https.RequestOptions = { timeout: 10_000 };
  await kc.applyToHTTPSOptions(opts);
  return await new Promise((resolve, reject) => {
    const req = https.get(`${cluster.server}/metrics`, opts, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (body += d));
      res.on('end', () =>
        res.statusCode === 200 ? resolve(body) : reject(new Error(`${cluster.server}/metrics: HTTP ${res.statusCode}`)),
      );
    });
    req.on('error', reject);
    req.on('timeout', () => req.destroy(new Error(`${cluster.server}/metrics: timeout`)));
  });
}

const LINE = /^apiserver_request_total\{([^}]*)\} (\S+)/;

/** The request counters of every server, keyed `server verb resource subresource` (dry runs left out). */
export async function requestCounts(sources: MetricsSource[]): Promise<RequestCounts> {
  const counts: RequestCounts = new Map();
  await Promise.all(
    sources.map(async (s) => {
      for (const line of (await getMetrics(s.kubeconfig)).split('\n')) {
        const m = LINE.exec(line);
        if (!m) continue;
        const labels = Object.fromEntries([...m[1]!.matchAll(/(\w+)="([^"]*)"/g)].map((x) => [x[1]!, x[2]!]));
        if (labels.dry_run) continue;
        const key = `${s.name} ${labels.verb} ${labels.resource ?? ''} ${labels.subresource ?? ''}`;
        counts.set(key, (counts.get(key) ?? 0) + Number(m[2]));
      }
    }),
  );
  return counts;
}

const WATCHES = /^apiserver_longrunning_requests\{([^}]*verb="WATCH"[^}]*)\} (\S+)/;

/** Watches open on each server now (its gauge of long-running requests, verb WATCH), by server. */
export async function openWatches(sources: MetricsSource[]): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  await Promise.all(
    sources.map(async (s) => {
      let open = 0;
      for (const line of (await getMetrics(s.kubeconfig)).split('\n')) {
        const m = WATCHES.exec(line);
        if (m) open += Number(m[2]);
      }
      out[s.name] = open;
    }),
  );
  return out;
}

export function delta(before: RequestCounts, after: RequestCounts): RequestCounts {
  const d: RequestCounts = new Map();
  for (const [k, v] of after) if (v - (before.get(k) ?? 0) > 0) d.set(k, v - (before.get(k) ?? 0));
  return d;
}

/** Resources only the cluster's own controllers and kwok write (they follow our Deployments). */
const OTHERS = new Set([
  'pods',
  'replicasets',
  'nodes',
  'leases',
  'endpoints',
  'endpointslices',
  'controllerrevisions',
  'limitranges',
  'apiservices',
]);

/** What the controller-manager creates in every new namespace (kube-root-ca.crt, the default ServiceAccount); the engine and the loop apply theirs. */
const NEW_NAMESPACE = new Set(['POST configmaps', 'POST serviceaccounts']);

/**
 * Leaves out what is not the engine's or the loop's: the resources of `OTHERS`; in target
 * clusters also Events (the controllers'), status subresources (the controller-manager writes
 * Deployments' status, the sample module managers their CRs': for the engine and the loop alike)
 * and the controller-manager's objects in each new namespace.
 */
export function ours(counts: RequestCounts): RequestCounts {
  const kept: RequestCounts = new Map();
  for (const [k, v] of counts) {
    const [server, verb, resource, subresource] = k.split(' ');
    const target = server !== 'kcp';
    if (
      OTHERS.has(resource!) ||
      (target && (resource === 'events' || subresource === 'status' || NEW_NAMESPACE.has(`${verb} ${resource}`)))
    )
      continue;
    kept.set(k, v);
  }
  return kept;
}

/** `counts` less what the quiet window's rate (per key, per second) predicts over `seconds`. */
export function lessIdle(
  counts: RequestCounts,
  idle: RequestCounts,
  idleSeconds: number,
  seconds: number,
): RequestCounts {
  const out: RequestCounts = new Map();
  for (const [k, v] of counts) {
    const rest = v - ((idle.get(k) ?? 0) / idleSeconds) * seconds;
    if (rest > 0) out.set(k, rest);
  }
  return out;
}

export interface PerVerb {
  /** Requests per module install (or per module the loop applied), by verb, and all together. */
  byVerb: Record<string, number>;
  total: number;
}

export function perVerb(counts: RequestCounts, installs: number): PerVerb {
  const byVerb: Record<string, number> = Object.fromEntries(VERBS.map((v) => [v, 0]));
  let total = 0;
  for (const [k, v] of counts) {
    const verb = k.split(' ')[1]!;
    byVerb[verb] = (byVerb[verb] ?? 0) + v / installs;
    total += v / installs;
  }
  return { byVerb, total };
}
