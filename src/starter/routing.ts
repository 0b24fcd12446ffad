// The bridge's routing, without I/O: given an event of a watched object (Kyma, ModuleTemplate,
// ModuleReleaseMeta, Manifest, kubeconfig Secret, or an object in a target cluster) and what the
// bridge remembers, which workflows it concerns and which signal, with which payload, each gets.
// The bridge (./bridge.ts) feeds it its watches' events and sends what it returns; which Kymas a
// template or release meta concerns the fleet index (./fleet-index.ts) tells.
import {
  kymaWorkflowId,
  moduleKey,
  OLD_CLUSTERS_CLEARED_ANNOTATION,
  RESOURCE_KIND_ANNOTATION,
  STATE_PATHS_ANNOTATION,
} from '../api/names';
import { KYMA_FINALIZER, LABELS, resourceVersionReached, type KubeObject } from '../api/shared';
import type { Kyma } from '../api/kyma';
import type { KymaRef, ModuleRef, Visibility } from '../contract/kyma';
import type { ObservedObject } from '../contract/readiness';
import { rolloutWorkflowId, type ChannelRef, type Promotion } from '../contract/rollout';
import type { CachedKind, SeenVersions } from '../contract/seen-versions';
import type { ModuleChange, WorkflowEnded } from '../contract/signals';
import { shardOf } from '../decisions/shards';
import { kymaVisibility, missingLabel, visibilityOf } from '../decisions/visibility';
import type { InformerEventType } from '../k8s/informer';
import { kubeconfigKey } from '../k8s/target-cluster';

/**
 * A signal the bridge sends (`start`: with signalWithStart, starting the workflow where none
 * runs; `fresh`: the Kyma has no status yet, so its workflow most likely never ran: started
 * without the signal, whose news its input carries, and signalled only if it runs after all).
 */
export type Signal =
  | {
      signal: 'kymaChanged';
      kyma: KymaRef;
      start: boolean;
      fresh?: FreshKyma;
      args: [SeenVersions] | [];
      runtime?: true;
    }
  | { signal: 'workflowEnded'; kyma: KymaRef; ended: WorkflowEnded }
  | { signal: 'templatesChanged'; kyma: KymaRef; of: 'ModuleTemplate' | 'ModuleReleaseMeta'; args: [SeenVersions] | [] }
  | { signal: 'catalogChanged'; kyma: KymaRef }
  | { signal: 'modulesChanged'; kyma: KymaRef; changes: ModuleChange[] }
  | { signal: 'promoted'; channel: ChannelRef; promotion: Promotion };

/** A Kyma without status: its spec's channel and module names, which its workflow starts showing as Processing. */
export interface FreshKyma {
  channel: string;
  modules: string[];
}

/** News for a module, told to its Kyma's workflow with `modulesChanged` (./module-news.ts). */
export interface ModuleNote {
  module: ModuleRef;
  news: { view: ObservedObject } | { seen: SeenVersions } | 'everything';
}

/** Which Kymas a bridge serves: of the namespaces it serves (unset: all) and, with `shards`, of the shards it holds. */
export interface Scope {
  namespaces?: readonly string[];
  shards?: number;
  held: ReadonlySet<number>;
}

export function kymaRef(who: string): KymaRef {
  const [namespace, name] = who.split('/') as [string, string];
  return { namespace, name };
}

/** Whether the bridge serves Kymas of namespace `namespace` (KLM_KYMA_NAMESPACES). */
export function servesNamespace(scope: Scope, namespace: string): boolean {
  return !scope.namespaces || scope.namespaces.includes(namespace);
}

/** Whether the bridge serves Kyma `namespace/name`: it is the only bridge, or holds the Kyma's shard. */
export function owns(scope: Scope, namespace: string, name: string): boolean {
  return scope.shards === undefined || scope.held.has(shardOf(namespace, name, scope.shards));
}

/** Whether the bridge does the fleet-wide duties: promotions, the mandatory finalizer, ended workflows, the fleet's state gauges. */
export function leads(scope: Scope): boolean {
  return scope.shards === undefined || scope.held.has(0);
}

/** Whether Kyma `namespace/kyma` (none: no Kyma) is in shard `shard` of `count`. */
export function inShard(
  namespace: string | undefined,
  kyma: string | undefined,
  shard: number,
  count: number,
): boolean {
  return kyma !== undefined && shardOf(namespace ?? '', kyma, count) === shard;
}

/** The Signaller key of a signal: calls under one key collapse into one in flight and one more. */
export function signalKey(s: Signal): string {
  if (s.signal === 'promoted') return `${rolloutWorkflowId(s.channel)}#promoted`;
  const id = kymaWorkflowId(s.kyma.namespace, s.kyma.name);
  switch (s.signal) {
    case 'kymaChanged':
      // A Secret's news keeps its own key: the version it carries must not be lost to a Kyma event's.
      return `${id}#kymaChanged${s.runtime ? '/runtime' : ''}${s.args[0]?.Secret ? '/secret' : ''}`;
    case 'workflowEnded':
      return `${id}#workflowEnded/${s.ended.runId}`;
    case 'templatesChanged':
      // Keyed by kind: a template event and a release-meta event that collapse for one Kyma keep both versions.
      return `${id}#templatesChanged/${s.of}`;
    default:
      return `${id}#${s.signal}`;
  }
}

/** The object behind a control-plane event, as a signal's SeenVersions (none without a resourceVersion). */
export function seenVersion(kind: CachedKind, o: KubeObject): [SeenVersions] | [] {
  return o.metadata.resourceVersion ? [{ [kind]: o.metadata.resourceVersion }] : [];
}

/** The newest of the versions seen so far (`seen`, none yet: '') and `version`. */
export function newestVersion(seen: string, version: string): string {
  return !seen || resourceVersionReached(version, seen) ? version : seen;
}

/**
 * A Kyma event. `before`: what of the Kyma its workflow acts on, as last signalled; `also`:
 * further versions its reads must reflect (a bridge taking the Kyma's shard over: the newest
 * templates and release metas it has seen). Returns what to remember instead (undefined:
 * nothing) and the signal: a deletion pokes the workflow, never starts it; otherwise only spec
 * (generation), labels, finalizers but its workflow's own, deletion and the annotation that clears
 * what switches of its Secret left in other clusters are news (its own status writes come back as
 * events too; its drift timer covers anything missed), and start the workflow if none runs.
 */
export function routeKyma(
  type: InformerEventType,
  k: KubeObject,
  scope: Scope,
  before: string | undefined,
  also?: SeenVersions,
): { seen: string | undefined; signal?: Signal } {
  const kyma = { namespace: k.metadata.namespace!, name: k.metadata.name };
  if (type === 'DELETED') {
    if (!owns(scope, kyma.namespace, kyma.name)) return { seen: undefined };
    return { seen: undefined, signal: { signal: 'kymaChanged', kyma, start: false, args: [] } };
  }
  if (!owns(scope, kyma.namespace, kyma.name)) return { seen: before };
  const meta = k.metadata;
  const cleared = meta.annotations?.[OLD_CLUSTERS_CLEARED_ANNOTATION];
  const seen = JSON.stringify([
    meta.uid,
    meta.generation,
    meta.labels,
    // Its workflow's own finalizer is its own write (one signal and one workflow task per Kyma
    // saved); a finalizer of ours removed by hand is put back at its next wake-up.
    meta.finalizers?.filter((f) => f !== KYMA_FINALIZER).join(',') || undefined,
    meta.deletionTimestamp,
    cleared,
  ]);
  if (type === 'MODIFIED' && before === seen) return { seen };
  const [version] = seenVersion('Kyma', k);
  const args: [SeenVersions] | [] = version || also ? [{ ...version, ...also }] : [];
  const { spec, status } = k as Partial<Kyma>;
  const fresh = status === undefined && {
    channel: spec?.channel ?? '',
    modules: (spec?.modules ?? []).map((m) => m.name),
  };
  return { seen, signal: { signal: 'kymaChanged', kyma, start: true, ...(fresh ? { fresh } : {}), args } };
}

/** A workflow of Kyma `kyma` ended without finishing: the Kyma's workflow (started again if it was its own run) shows it, if the Kyma is still there. */
export function routeWorkflowEnded(
  kyma: KymaRef,
  ended: WorkflowEnded,
  scope: Scope,
  kymaExists: boolean,
): Signal | undefined {
  // Not leading: a poll that was under way when shard 0 went to another bridge.
  if (!leads(scope) || !kymaExists) return undefined;
  return { signal: 'workflowEnded', kyma, ended };
}

/**
 * A template or release-meta event (`o`, of `kind`) that concerns Kymas `concerned` of the
 * namespace (as the fleet index says, of `kymaCount` there): templatesChanged to those this
 * bridge serves, carrying the event's kind and version; and how many the index spared (counted
 * by the bridge that leads only). `templatesSeen`: the newest template version the bridge has seen.
 */
export function routeTemplates(
  namespace: string,
  concerned: string[],
  kind: 'ModuleTemplate' | 'ModuleReleaseMeta',
  o: KubeObject,
  p: { scope: Scope; templatesSeen: string; kymaCount: number },
): { signals: Signal[]; skipped: number } {
  const skipped = leads(p.scope) ? Math.max(0, p.kymaCount - concerned.length) : 0;
  const kymas = concerned.filter((k) => owns(p.scope, namespace, k));
  // A promotion may resolve to a template changed a moment before (an event that signalled
  // nobody): the Kymas' reads must reflect every template this bridge has seen, too.
  const [seen] = seenVersion(kind, o);
  const args: [SeenVersions] | [] =
    seen && kind === 'ModuleReleaseMeta' && p.templatesSeen
      ? [{ ...seen, ModuleTemplate: p.templatesSeen }]
      : seen
        ? [seen]
        : [];
  return {
    signals: kymas.map((name) => ({ signal: 'templatesChanged', kyma: { namespace, name }, of: kind, args })),
    skipped,
  };
}

/** A promotion to `version` by release meta `m`, with the versions the rollout's reads must reflect. */
export function promotion(version: string, m: KubeObject, templatesSeen: string): Promotion {
  const [seen] = seenVersion('ModuleReleaseMeta', m);
  return {
    version,
    ...(seen ? { seen: { ...seen, ...(templatesSeen ? { ModuleTemplate: templatesSeen } : {}) } } : {}),
  };
}

/** The channels release meta `m` promoted (to `version` each): `promoted` to each channel's rollout. */
export function routePromotions(
  m: KubeObject,
  promotions: { channel: string; version: string }[],
  templatesSeen: string,
): Signal[] {
  const namespace = m.metadata.namespace ?? '';
  return promotions.map(({ channel, version }) => ({
    signal: 'promoted',
    channel: { namespace, module: m.metadata.name, channel },
    promotion: promotion(version, m, templatesSeen),
  }));
}

/** What the catalog sync needs to know of the fleet: Secrets, Kymas, runtime owners, template visibility. */
export interface CatalogView {
  /** The kubeconfig Secrets the bridge watches. */
  secrets: readonly KubeObject[];
  /** Kyma `namespace/name`, as the control plane's watch holds it. */
  kyma(namespace: string, name: string): KubeObject | undefined;
  /** The control-plane Kyma (`ns/name`) that owns the runtime Kyma in the cluster of Kyma `who`'s Secret; none: unknown. */
  runtimeOwner(who: string): string | undefined;
  /** The beta and internal labels last seen on template `ns/name`. */
  visibility(key: string): Visibility | undefined;
}

/**
 * The Kymas (`ns/name`) with a runtime (a kubeconfig Secret) in the namespace to tell that their
 * catalog may have changed: for a template, those that may see it now or could before (beta,
 * internal); for a release meta, all of them. Their sync writes only what differs. With a
 * template: its visibility to remember (`now`; undefined: forget it, it was deleted).
 */
export function routeCatalog(
  namespace: string,
  v: CatalogView,
  template?: KubeObject,
  deleted = false,
): { kymas: string[]; visibility?: { key: string; now: Visibility | undefined } } {
  let sees = (_k: KubeObject | undefined) => true;
  let visibility: { key: string; now: Visibility | undefined } | undefined;
  if (template) {
    const key = `${namespace}/${template.metadata.name}`;
    const now = visibilityOf(template.metadata.labels);
    const was = v.visibility(key) ?? now;
    visibility = { key, now: deleted ? undefined : now };
    sees = (k) => [now, was].some((needs) => !missingLabel(needs, k && kymaVisibility(k)));
  }
  const kymas: string[] = [];
  for (const secret of v.secrets) {
    const kyma = secret.metadata.labels?.[LABELS.kymaName];
    if (secret.metadata.namespace !== namespace || !kyma) continue;
    // Only the Kyma whose runtime Kyma it is syncs that runtime's catalog.
    const who = `${namespace}/${kyma}`;
    if (v.runtimeOwner(who) !== who) continue;
    if (sees(v.kyma(namespace, kyma))) kymas.push(who);
  }
  return { kymas, ...(visibility ? { visibility } : {}) };
}

/** What a Manifest event asks of the bridge (./bridge.ts `onManifest`). */
export interface ManifestRoute {
  /** Its module. */
  module: ModuleRef;
  /** Its module's key in the bridge's maps (`moduleKey`). */
  key: string;
  /** The last mandatory Manifest of a module may be what a ModuleReleaseMeta's deletion waits for: check it. */
  checkMandatory: boolean;
  /** Whether to remember the Manifest as paused (skip-reconciliation), undefined: forget it. */
  paused: boolean | undefined;
  /** News for its module: it was paused or resumed. */
  note?: ModuleNote;
  /** What to watch in its target cluster (for a Kyma this bridge serves): the module's workflow on it, and its CR kind. */
  watch?: { on: boolean; resource?: { apiVersion: string; kind: string }; statePaths: string[] };
}

/** A Manifest event; `paused`: whether each Manifest (by module key) was last seen paused. None without Kyma and module labels. */
export function routeManifest(
  type: InformerEventType,
  m: KubeObject,
  scope: Scope,
  paused: ReadonlyMap<string, boolean>,
): ManifestRoute | undefined {
  const meta = m.metadata;
  const namespace = meta.namespace!;
  const kyma = meta.labels?.[LABELS.kymaName];
  const module = meta.labels?.[LABELS.moduleName];
  if (!kyma || !module) return undefined;
  const key = moduleKey(namespace, kyma, module);
  const pausedBefore = paused.get(key);
  const route: ManifestRoute = {
    module: { kyma: { namespace, name: kyma }, module },
    key,
    checkMandatory: type === 'DELETED' && meta.labels?.[LABELS.mandatoryModule] === 'true' && leads(scope),
    paused: pausedBefore,
  };
  // The Manifest of a Kyma left alone (outside KLM_KYMA_NAMESPACES) is left alone too: no watches for it.
  if (!servesNamespace(scope, namespace)) return route;
  if (!owns(scope, namespace, kyma)) return { ...route, paused: undefined };
  const pausedNow = meta.labels?.[LABELS.skipReconciliation] === 'true';
  if (type === 'DELETED') route.paused = undefined;
  else if ((pausedBefore ?? false) !== pausedNow) {
    route.paused = pausedNow;
    // Kept apart from target-cluster views (which carry no Manifest version) so that none replaces it.
    const [seen] = seenVersion('Manifest', m);
    route.note = { module: route.module, news: seen ? { seen } : 'everything' };
  }
  route.watch = manifestWatch(type, meta);
  return route;
}

/** What to watch in a Manifest's target cluster: its module's workflow on it (not once deleted), its CR kind and the status paths its check reads. */
function manifestWatch(type: InformerEventType, meta: KubeObject['metadata']): ManifestRoute['watch'] {
  const resourceKind = meta.annotations?.[RESOURCE_KIND_ANNOTATION];
  const slash = resourceKind?.lastIndexOf('/') ?? -1;
  const statePaths = meta.annotations?.[STATE_PATHS_ANNOTATION]?.split(',').filter(Boolean) ?? [];
  return {
    on: type !== 'DELETED',
    ...(resourceKind
      ? { resource: { apiVersion: resourceKind.slice(0, slash), kind: resourceKind.slice(slash + 1) } }
      : {}),
    statePaths,
  };
}

/**
 * A kubeconfig Secret event, `before`: the kubeconfig key of the watches its Kyma uses. `move`:
 * it changed or went, so its Kyma's watches move to the new kubeconfig (the old client's
 * credentials may be revoked), and its Kyma's workflow is told (`signal`: it may name another
 * cluster now, which the Kyma's next load reads from the Secret as of this event);
 * `watchRuntime`: its runtime Kyma is watched in the cluster it names now. None for a Secret of
 * no Kyma, or of a Kyma this bridge does not serve.
 */
export function routeSecret(
  type: InformerEventType,
  s: KubeObject,
  scope: Scope,
  before: string | undefined,
): { kyma: string; move: boolean; watchRuntime: boolean; signal?: Signal } | undefined {
  const namespace = s.metadata.namespace!;
  const kyma = s.metadata.labels?.[LABELS.kymaName];
  if (!kyma || !owns(scope, namespace, kyma)) return undefined;
  const move = before !== undefined && (type === 'DELETED' || kubeconfigKey(s) !== before);
  const args: [SeenVersions] | [] = type === 'DELETED' ? [] : seenVersion('Secret', s);
  return {
    kyma,
    move,
    watchRuntime: type !== 'DELETED',
    ...(move
      ? { signal: { signal: 'kymaChanged' as const, kyma: { namespace, name: kyma }, start: false, args } }
      : {}),
  };
}

/**
 * The runtime Kyma of a target cluster changed: `owner`, the control-plane Kyma it names now
 * (none: deleted or unowned), `before`, the one before; `kymasOn`: the Kymas whose Secrets name
 * the cluster; `listed`: the change was found by a list that may hold what was made before the
 * bridge watched (its watch starting on a cluster that served Kymas, or listing again), not seen
 * made. Its users' edit is news to its owner only (if this bridge serves it);
 * made, taken over or deleted, each Kyma on the cluster may own it now (but for the owner that
 * made it); and a new owner may have missed catalog events while it had no runtime Kyma yet,
 * unless the bridge saw it made: then its owner's workflow made it, and syncs the catalog in full
 * after.
 */
export function routeRuntimeKyma(
  owner: string | undefined,
  before: string | undefined,
  kymasOn: string[],
  scope: Scope,
  o: { listed: boolean },
): Signal[] {
  const poke = (who: string): Signal => ({
    signal: 'kymaChanged',
    kyma: kymaRef(who),
    start: false,
    args: [],
    runtime: true,
  });
  if (owner && owner === before) {
    const { namespace, name } = kymaRef(owner);
    return owns(scope, namespace, name) ? [poke(owner)] : [];
  }
  // First seen, its owner made it (its workflow's own write), or a bridge starts, when every
  // Kyma is told by its own ADDED event: only the others on the cluster are news to.
  const made = before === undefined && owner !== undefined;
  const told = made ? kymasOn.filter((k) => k !== owner) : kymasOn;
  const catalog = owner && (!made || o.listed) ? [{ signal: 'catalogChanged', kyma: kymaRef(owner) } as const] : [];
  return [...told.map(poke), ...catalog];
}

/**
 * A target cluster stopped or started answering: every module on it (`modules`) reads
 * everything again, and the Kymas on it (`kymasOn`) read their runtime again (its condition
 * tells the outage; once it answers, its status is written again).
 */
export function routeHealth(
  modules: Iterable<ModuleRef>,
  kymasOn: string[],
): { notes: ModuleNote[]; signals: Signal[] } {
  return {
    // Keyed apart: a view sent meanwhile must not replace this call to read everything again.
    notes: [...modules].map((module) => ({ module, news: 'everything' })),
    signals: kymasOn.map((who) => ({
      signal: 'kymaChanged',
      kyma: kymaRef(who),
      start: false,
      args: [],
      runtime: true,
    })),
  };
}

/**
 * The modules an object in a target cluster that changed readiness concerns: the
 * one that owns it (its owner annotation, `owner`), else those that subscribed to its kind
 * (`subscribers`). Objects of Kymas of other shards are their bridges' to tell: none.
 */
export function routeTargetObject(
  owner: { namespace: string; kyma: string; module: string } | undefined,
  subscribers: Iterable<ModuleRef>,
  scope: Scope,
): ModuleRef[] {
  if (owner && !owns(scope, owner.namespace, owner.kyma)) return [];
  return owner ? [{ kyma: { namespace: owner.namespace, name: owner.kyma }, module: owner.module }] : [...subscribers];
}

/**
 * What a bridge that takes shard `shard` (of `count`) over tells again, of what its Kymas'
 * workflows may have missed while nobody served it: each Kyma (`also`: the newest template and
 * release-meta versions it has seen, which their reads must reflect), each kubeconfig Secret
 * (its watches), each Manifest (its watches, and its module reads everything again).
 */
export function shardTakeover(
  shard: number,
  count: number,
  fleet: {
    kymas: KubeObject[];
    secrets: KubeObject[];
    manifests: KubeObject[];
    templatesSeen: string;
    releaseMetasSeen: string;
  },
): {
  also: SeenVersions;
  kymas: KubeObject[];
  secrets: KubeObject[];
  manifests: { m: KubeObject; module: ModuleRef }[];
} {
  const also: SeenVersions = {
    ...(fleet.templatesSeen ? { ModuleTemplate: fleet.templatesSeen } : {}),
    ...(fleet.releaseMetasSeen ? { ModuleReleaseMeta: fleet.releaseMetasSeen } : {}),
  };
  const manifests: { m: KubeObject; module: ModuleRef }[] = [];
  for (const m of fleet.manifests) {
    const kyma = m.metadata.labels?.[LABELS.kymaName];
    const module = m.metadata.labels?.[LABELS.moduleName];
    if (!inShard(m.metadata.namespace, kyma, shard, count) || !module) continue;
    manifests.push({ m, module: { kyma: { namespace: m.metadata.namespace!, name: kyma! }, module } });
  }
  return {
    also,
    kymas: fleet.kymas.filter((k) => inShard(k.metadata.namespace, k.metadata.name, shard, count)),
    secrets: fleet.secrets.filter((s) =>
      inShard(s.metadata.namespace, s.metadata.labels?.[LABELS.kymaName], shard, count),
    ),
    manifests,
  };
}

/** What the bridge remembers of the events it routed, for routing the next ones. */
export interface Memory {
  /** What of each Kyma its workflow acts on, as last signalled, by workflow id: status writes alone are not news. */
  kymas: Map<string, string>;
  /** Kymas (`ns/name`) outside the served namespaces, told of once. */
  unserved: Set<string>;
  /** The newest ModuleTemplate version seen (of any template); '': none yet. */
  templates: string;
  /** The newest ModuleReleaseMeta version seen (of any release meta); '': none yet. */
  releaseMetas: string;
  /** The beta and internal labels last seen per ModuleTemplate (`ns/name`): a runtime that loses one is told. */
  templateVisibility: Map<string, Visibility>;
  /** The skip-reconciliation label last seen per Manifest (by module key): a flip pokes its module. */
  manifestPaused: Map<string, boolean>;
}

export function newMemory(): Memory {
  return {
    kymas: new Map(),
    unserved: new Set(),
    templates: '',
    releaseMetas: '',
    templateVisibility: new Map(),
    manifestPaused: new Map(),
  };
}
