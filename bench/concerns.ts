// Where a module install's cost goes, by concern: history events (by the kind of event), API
// requests (by server and resource) and, in a profiled run (KLM_BENCH_CPU_PROF=DIR), CPU (each
// sample of the worker's and the bridge's V8 CPU profiles counted for the first of our source
// files on its stack, from the leaf up). The concerns are the per-runtime work issue 38 names.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { SourceMap, type SourceMapPayload } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { RequestCounts } from './apiserver-metrics';

export const CONCERNS = [
  'install',
  'readiness',
  'runtime Kyma',
  'catalog sync',
  'status writes',
  'watches and signals',
  'workflow tasks and run bookkeeping',
  'other',
] as const;
export type Concern = (typeof CONCERNS)[number];

export interface ConcernCost {
  concern: Concern;
  events: number;
  requests: number;
  /** CPU ms per install of worker and bridge (profiled runs only). */
  cpuMs?: number;
}

export interface ConcernCosts {
  perInstall: ConcernCost[];
  /** The profiles' directory, in a profiled run. */
  profiles?: string;
}

/** A history event kind (./history-breakdown.ts) → its concern. */
export function concernOfEvent(kind: string): Concern {
  if (/installModule|resolveModules|runModuleActions/.test(kind)) return 'install';
  if (/modulesChanged/.test(kind)) return 'readiness';
  if (/syncRuntimeKyma/.test(kind)) return 'runtime Kyma';
  if (/syncRuntimeCatalog|catalogChanged/.test(kind)) return 'catalog sync';
  if (/writeKymaChanges|upsert_workflow_search_attributes/.test(kind)) return 'status writes';
  if (/^signal /.test(kind)) return 'watches and signals';
  return 'workflow tasks and run bookkeeping';
}

/** An API request key (`<server> <VERB> <resource> <subresource>`) → its concern. */
export function concernOfRequest(key: string): Concern {
  const [server, verb, resource, subresource] = key.split(' ');
  const target = server !== 'kcp';
  if (verb === 'WATCH' || verb === 'LIST') return 'watches and signals';
  if (target && resource === 'kymas') return 'runtime Kyma';
  if (target && (resource === 'moduletemplates' || resource === 'modulereleasemetas')) return 'catalog sync';
  if (!target && (resource === 'kymas' || resource === 'events') && (subresource === 'status' || verb === 'POST'))
    return 'status writes';
  if (!target && resource === 'manifests' && subresource === 'status') return 'status writes';
  if (target && verb === 'GET' && (resource === 'deployments' || resource === 'statefulsets')) return 'readiness';
  if (target || resource === 'manifests') return 'install';
  return 'other';
}

/** CPU spent on API requests of any concern: our Kubernetes client, and Node's HTTP and TLS under it. */
const REQUESTS = 'requests';
const HTTP = /^node:(_http|_tls|https|net|internal\/tls|internal\/streams|zlib)/;

/** Our source file on a CPU profile's stack → its concern (undefined: not ours, look further up). */
export function concernOfSource(url: string, fn: string): Concern | typeof REQUESTS | undefined {
  if (HTTP.test(url) || /\/src\/k8s\/(rest-client|transport|credentials)/.test(url)) return REQUESTS;
  const file = url.replace(/^.*\/src\//, '');
  if (!file || file === url) return undefined;
  if (/activities\/install\/|activities\/manifest|activities\/module-actions|manifests\//.test(file)) return 'install';
  if (/activities\/readiness|starter\/readiness-change|starter\/module-news/.test(file)) return 'readiness';
  if (/activities\/runtime/.test(file))
    return /atalog|Copies|Unwanted|isTheirs/.test(fn) ? 'catalog sync' : 'runtime Kyma';
  if (/activities\/kyma-writes|activities\/events/.test(file)) return 'status writes';
  if (/starter\/|k8s\/informer|k8s\/object-cache/.test(file)) return 'watches and signals';
  return undefined;
}

const WORKFLOW_CODE = /workflow-bundle\.js$|@temporalio\/worker\/lib\/workflow\//;

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number };
  children?: number[];
}

/** The source a frame of the build (dist/, bundled by esbuild) comes from, by its source map. */
function sourcesOfBuild(): (f: ProfileNode['callFrame']) => string {
  const maps = new Map<string, SourceMap | undefined>();
  return (f) => {
    if (!/\/dist\/.*\.js$/.test(f.url)) return f.url;
    if (!maps.has(f.url)) {
      const file = `${f.url.startsWith('file:') ? fileURLToPath(f.url) : f.url}.map`;
      maps.set(
        f.url,
        existsSync(file) ? new SourceMap(JSON.parse(readFileSync(file, 'utf8')) as SourceMapPayload) : undefined,
      );
    }
    const entry = maps.get(f.url)?.findEntry(f.lineNumber, f.columnNumber);
    return (entry && 'originalSource' in entry ? entry.originalSource : undefined) ?? f.url;
  };
}

/** CPU ms by concern over every profile under `dir` (one directory per process, as the bench writes them). */
export function profileConcerns(dir: string): Map<Concern | typeof REQUESTS, number> {
  const out = new Map<Concern | typeof REQUESTS, number>();
  const sourceOf = sourcesOfBuild();
  for (const proc of readdirSync(dir)) {
    for (const file of readdirSync(path.join(dir, proc)).filter((x) => x.endsWith('.cpuprofile'))) {
      const p = JSON.parse(readFileSync(path.join(dir, proc, file), 'utf8')) as {
        nodes: ProfileNode[];
        samples: number[];
        startTime: number;
        endTime: number;
      };
      const byId = new Map(p.nodes.map((n) => [n.id, n]));
      const parent = new Map<number, number>();
      for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
      const ms = (p.endTime - p.startTime) / 1000 / Math.max(1, p.samples.length);
      const memo = new Map<number, Concern | typeof REQUESTS | 'idle'>();
      const concernOf = (id: number): Concern | typeof REQUESTS | 'idle' => {
        const known = memo.get(id);
        if (known) return known;
        let c: Concern | typeof REQUESTS | 'idle' =
          byId.get(id)!.callFrame.functionName === '(idle)' ? 'idle' : 'other';
        if (c !== 'idle')
          for (let x: number | undefined = id; x !== undefined; x = parent.get(x)) {
            const f = byId.get(x)!.callFrame;
            // The workflows' code (the bundle) and the SDK's sandbox that runs it.
            const found = WORKFLOW_CODE.test(f.url)
              ? 'workflow tasks and run bookkeeping'
              : concernOfSource(sourceOf(f), f.functionName);
            if (found) {
              c = found;
              break;
            }
          }
        memo.set(id, c);
        return c;
      };
      for (const s of p.samples) {
        const c = concernOf(s);
        if (c !== 'idle') out.set(c, (out.get(c) ?? 0) + ms);
      }
    }
  }
  return out;
}

function add(m: Map<Concern, number>, c: Concern, v: number): void {
  m.set(c, (m.get(c) ?? 0) + v);
}

/** Per module install, by concern. */
export function concernCosts(o: {
  historyKinds: { kind: string; perInstall: number }[];
  requests: RequestCounts;
  installs: number;
  profiles?: string;
  /** CPU ms over the whole profiled run by concern, and the share of it the install phase took. */
  installShare?: number;
}): ConcernCosts {
  const events = new Map<Concern, number>();
  for (const k of o.historyKinds) add(events, concernOfEvent(k.kind), k.perInstall);
  const requests = new Map<Concern, number>();
  for (const [k, v] of o.requests) add(requests, concernOfRequest(k), v / o.installs);
  const cpu = o.profiles ? profileConcerns(o.profiles) : undefined;
  // The requests' CPU (client, HTTP, TLS) goes to each concern by its share of the requests.
  const allRequests = [...requests.values()].reduce((a, b) => a + b, 0);
  const cpuMs = (concern: Concern) =>
    (((cpu?.get(concern) ?? 0) +
      (allRequests > 0 ? ((cpu?.get(REQUESTS) ?? 0) * (requests.get(concern) ?? 0)) / allRequests : 0)) *
      (o.installShare ?? 1)) /
    o.installs;
  return {
    perInstall: CONCERNS.map((concern) => ({
      concern,
      events: events.get(concern) ?? 0,
      requests: requests.get(concern) ?? 0,
      ...(cpu ? { cpuMs: cpuMs(concern) } : {}),
    })),
    ...(o.profiles ? { profiles: o.profiles } : {}),
  };
}

export function renderConcerns(r: { concerns?: ConcernCosts }): string[] {
  const c = r.concerns;
  if (!c) return [];
  const cpu = c.perInstall.some((x) => x.cpuMs !== undefined);
  return [
    '## Where a module install goes, by concern',
    '',
    `| concern | history events | API requests${cpu ? ' | worker + bridge CPU' : ''} |`,
    `| --- | --- | ---${cpu ? ' | ---' : ''} |`,
    ...c.perInstall.map(
      (x) =>
        `| ${x.concern} | ${x.events.toFixed(2)} | ${x.requests.toFixed(1)}${cpu ? ` | ${(x.cpuMs ?? 0).toFixed(1)} ms` : ''} |`,
    ),
    '',
    'Per module install. History events by their kind (the table below); API requests as counted ' +
      'below, by server and resource (watches and lists: the informers; in target clusters the ' +
      "runtime Kyma, the catalog's ModuleTemplates and ModuleReleaseMetas, readiness reads of " +
      'workloads, the rest the install; in the control plane status subresources and Events: ' +
      'the status writes).' +
      (cpu
        ? ` CPU from the worker's and the bridge's V8 CPU profiles (${c.profiles}) over the whole run, ` +
          "scaled to the install phase's share of their CPU: a sample counts for the first of our " +
          "source files on its stack from the leaf up; the workflow code and the SDK's sandbox that " +
          'runs it are "workflow tasks"; the API requests\' own CPU (our client, Node\'s HTTP and TLS) ' +
          'goes to the concerns by their share of the requests; "other" is what none of that is on ' +
          "(the SDK's plumbing, garbage collection, timers). A profiled run's own figures include the " +
          "profiler's sampling (its idle CPU most of all): the CPU targets hold unprofiled runs."
        : ' CPU by concern: a profiled run (KLM_BENCH_CPU_PROF=DIR npm run bench …).'),
    '',
  ];
}
