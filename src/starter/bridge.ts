// The bridge: routing from Kubernetes watches to Temporal signals. It decides nothing. Kyma
// events start or poke the Kyma's workflow (signalWithStart); ModuleTemplate and
// ModuleReleaseMeta events poke the Kyma workflows whose resolution they may change, as the
// fleet index (./fleet-index.ts, kept from the same watches) tells; events on
// module CRs and manager workloads in target clusters poke the owning module. Each
// remote target cluster is probed: when it stops answering, or answers again, its watches are
// re-established and every module on it is poked, so that the modules show the
// cluster as unreachable, and recover, within a probe and a check. A kubeconfig Secret that
// changes moves its Kyma's watches to a client of the new kubeconfig. In each cluster a
// kubeconfig Secret names, the runtime Kyma (kyma-system/default) is watched too: its users'
// edits poke the Kyma workflow; template and release-meta events also tell the Kymas with a
// runtime that their catalog may have changed (`catalogChanged`). Here the watches are wired:
// which workflows an event concerns and what each is told, ./routing.ts decides (pure); the
// target clusters' watches are ./target-pool.ts's; the Temporal calls, ./workflow-starts.ts's;
// what the holder of shard 0 does fleet-wide, ./fleet-duties.ts's.
import type { Client } from '@temporalio/client';
import type { Kyma } from '../api/kyma';
import type { ModuleReleaseMeta } from '../api/modulereleasemeta';
import { kymaWorkflowId, moduleKey, OWNED_BY_ANNOTATION, parseOwnedBy } from '../api/names';
import { effectiveKymaSpec } from '../api/runtime';
import { API_VERSION, LABELS, type KubeObject } from '../api/shared';
import type { KymaRef } from '../contract/kyma';
import type { ReconcileSettings } from '../contract/settings';
import type { WorkflowEnded } from '../contract/signals';
import type { SeenVersions } from '../contract/seen-versions';
import { shardOf } from '../decisions/shards';
import { exportShardClusters, templateSignals } from '../infra/metrics';
import { NEWS_WAIT_MS, NEWS_WINDOW_MS, type TargetWatchScope } from '../infra/config';
import { Informer, type InformerEventType, type InformerOptions } from '../k8s/informer';
import type { KubeClient } from '../k8s/rest-client';
import { FleetIndex } from './fleet-index';
import { FleetDuties } from './fleet-duties';
import { ModuleNews } from './module-news';
import {
  inShard,
  kymaRef,
  leads,
  newestVersion,
  newMemory,
  owns,
  routeCatalog,
  routeHealth,
  routeKyma,
  routeManifest,
  routeRuntimeKyma,
  routeSecret,
  routeTargetObject,
  routeTemplates,
  routeWorkflowEnded,
  servesNamespace,
  shardTakeover,
  signalKey,
  type ModuleNote,
  type Scope,
  type Signal,
} from './routing';
import { NOTHING_SENT, Signaller } from './signaller';
import { TargetPool } from './target-pool';
import type { TargetWatches } from './target-watches';
import { send } from './workflow-starts';

export interface BridgeOptions {
  kcp: KubeClient;
  temporal: Client;
  taskQueue: string;
  settings: ReconcileSettings;
  relistMs?: number;
  /** How often a remote target cluster is probed (and how long a probe may take), 10 s by default. */
  probeMs?: number;
  /** How long a request to a target cluster may go without an answer (watches excepted). */
  targetRequestTimeoutMs?: number;
  /** Whether kubeconfig Secrets may run commands for their credentials (default: yes). */
  allowKubeconfigExec?: boolean;
  /** The namespaces whose Kymas it serves (KLM_KYMA_NAMESPACES): Secrets are watched there only, Kymas elsewhere left alone. Unset: all. */
  kymaNamespaces?: readonly string[];
  /**
   * What a target cluster's watches of managed objects and module CRs see
   * (KLM_TARGET_WATCH_SCOPE): the cluster (default), or its kubeconfig context's namespace.
   */
  targetWatchScope?: TargetWatchScope;
  /**
   * How long news of a Kyma's modules waits before its signal goes (what comes meanwhile goes
   * with it, in one signal and one workflow task): NEWS_WINDOW_MS by default; 0: at once.
   */
  newsWindowMs?: number;
  /** How long news that can wait for a module's next news waits at most (./module-news.ts): NEWS_WAIT_MS by default; 0: it does not. */
  newsWaitMs?: number;
  /** How often to look for Kyma workflows the server ended (terminated, failed, timed out); 0: never. 30 s by default. */
  endedWorkflowsPollMs?: number;
  /**
   * How many shards the fleet is cut into when several bridges share it (./shard-leases.ts hands
   * them out): this bridge then watches and signals for the Kymas of the shards it is given
   * (`gain`) only, and does the fleet-wide duties while it holds shard 0. Unset: it serves all.
   */
  shards?: number;
  log?: (msg: string) => void;
}

/** When a target cluster's client could not be made (its credential plugin failed, say), how soon to try again. */
const TARGET_RETRY_MS = 30_000;

export class Bridge {
  private readonly signaller: Signaller;
  /** Which Kymas use which module on which channel: routes ModuleTemplate and ModuleReleaseMeta events. */
  readonly fleet = new FleetIndex();
  /** What the bridge remembers of the events it routed. */
  private readonly memory = newMemory();
  /** Kymas that template and release-meta events signalled, and those the index spared. */
  private readonly templateSignals = { sent: 0, skipped: 0 };
  /** What was seen for modules and not told yet, per Kyma. */
  private readonly news: ModuleNews;
  /** The target clusters' watches, per kubeconfig. */
  private readonly targets: TargetPool;
  /** The Kymas it serves: its namespaces, and the shards it holds (with `shards` set). */
  private readonly scope: Scope & { held: Set<number> };
  private readonly informers: Informer[] = [];
  private kymas!: Informer;
  /** Kubeconfig Secrets: one watch for all namespaces, or one per served namespace. */
  private secrets: Informer[] = [];
  private manifests!: Informer;
  private releaseMetas!: Informer;
  /** What the holder of shard 0 does fleet-wide. */
  private readonly duties: FleetDuties;
  private stopped = false;
  private readonly unexportShards: () => void;

  constructor(private readonly o: BridgeOptions) {
    this.signaller = new Signaller((err, key) => o.log?.(`signal ${key} failed: ${(err as Error).message}`));
    this.news = new ModuleNews(o.newsWaitMs ?? NEWS_WAIT_MS);
    this.scope = {
      held: new Set<number>(),
      ...(o.kymaNamespaces ? { namespaces: o.kymaNamespaces } : {}),
      ...(o.shards !== undefined ? { shards: o.shards } : {}),
    };
    this.targets = new TargetPool({
      kcp: o.kcp,
      relistMs: o.relistMs,
      probeMs: o.probeMs,
      targetRequestTimeoutMs: o.targetRequestTimeoutMs,
      allowKubeconfigExec: o.allowKubeconfigExec,
      targetWatchScope: o.targetWatchScope,
      onObject: (type, obj, t) => this.onTargetObject(type, obj, t),
      // News of managers that waited for their CR kind to be listed (./target-watches.ts).
      onListed: (unheld) => unheld.forEach(({ kyma }) => this.news.release(kyma, () => this.tell(kyma))),
      onHealth: (t, healthy, err) => this.onHealth(t, healthy, err),
    });
    this.unexportShards = exportShardClusters(() => this.clustersByShard());
    this.duties = new FleetDuties({
      kcp: o.kcp,
      temporal: o.temporal,
      taskQueue: o.taskQueue,
      ...(o.endedWorkflowsPollMs !== undefined ? { endedWorkflowsPollMs: o.endedWorkflowsPollMs } : {}),
      leads: () => this.leads,
      kymas: () => this.kymas.list(),
      manifests: () => this.manifests.list(),
      releaseMetas: () => this.releaseMetas.list(),
      promotionsOf: (namespace, name) => this.fleet.promotionsOf(namespace, name),
      templatesSeen: () => this.memory.templates,
      send: (signals) => this.sendAll(signals),
      onWorkflowEnded: (kyma, ended) => this.onWorkflowEnded(kyma, ended),
      ...(o.log ? { log: o.log } : {}),
    });
  }

  private owns(namespace: string, name: string): boolean {
    return owns(this.scope, namespace, name);
  }

  private get leads(): boolean {
    return leads(this.scope);
  }

  /** Target clusters watched per served shard (distinct kubeconfigs of its Kymas whose watches run), for the shard gauges. */
  private clustersByShard(): Map<number, number> {
    const count = this.o.shards;
    return count === undefined
      ? this.targets.clustersByShard([0], () => 0)
      : this.targets.clustersByShard([...this.scope.held], (ns, name) => shardOf(ns, name, count));
  }

  /**
   * Serves shard `shard` from now on: what its Kymas' workflows may have missed while nobody did
   * is told again (each Kyma is poked, or started; each module reads its objects afresh; its
   * target clusters are watched, listing from scratch). Shard 0 brings the fleet-wide duties,
   * and each rollout is told its channel's version.
   */
  gain(shard: number): void {
    if (this.o.shards === undefined || this.scope.held.has(shard) || this.stopped) return;
    this.scope.held.add(shard);
    if (shard === 0) this.duties.take(true);
    // A template or release meta changed while nobody served the shard: their reads must reflect it.
    const missed = shardTakeover(shard, this.o.shards, {
      kymas: this.kymas.list(),
      secrets: this.secrets.flatMap((i) => i.list()),
      manifests: this.manifests.list(),
      templatesSeen: this.memory.templates,
      releaseMetasSeen: this.memory.releaseMetas,
    });
    for (const k of missed.kymas) this.onKyma('ADDED', k, missed.also);
    for (const s of missed.secrets) this.onSecret('ADDED', s);
    for (const { m, module } of missed.manifests) {
      this.onManifest('ADDED', m);
      this.note({ module, news: 'everything' });
    }
  }

  /** Stops serving shard `shard` at once (another bridge is about to): its Kymas' target watches stop, its signals cease. */
  lose(shard: number): void {
    if (this.o.shards === undefined || !this.scope.held.delete(shard)) return;
    const count = this.o.shards;
    if (shard === 0) this.duties.drop();
    for (const who of this.targets.kymas()) {
      const { namespace, name } = kymaRef(who);
      if (inShard(namespace, name, shard, count)) this.targets.drop(namespace, name);
    }
    for (const k of this.kymas.list())
      if (inShard(k.metadata.namespace, k.metadata.name, shard, count))
        this.memory.kymas.delete(kymaWorkflowId(k.metadata.namespace!, k.metadata.name));
  }

  get stats(): { sent: number; failed: number; templateSignals: { sent: number; skipped: number } } {
    return { sent: this.signaller.sent, failed: this.signaller.failed, templateSignals: { ...this.templateSignals } };
  }

  async start(): Promise<void> {
    const { kcp } = this.o;
    const onError = (e: unknown) => this.o.log?.(`watch error: ${(e as Error).message}`);
    this.secrets = (this.o.kymaNamespaces ?? [undefined]).map(
      (namespace) =>
        new Informer(kcp, {
          apiVersion: 'v1',
          kind: 'Secret',
          ...(namespace ? { namespace } : {}),
          labelSelector: LABELS.kymaName,
          relistMs: this.o.relistMs,
          onEvent: (t, s) => this.onSecret(t, s),
          onError,
        }),
    );
    this.informers.push(...this.secrets);
    await Promise.all(this.secrets.map((i) => i.start()));
    /** A watch on one kind of the lifecycle manager's in the control plane. */
    const watch = (kind: string, onEvent: InformerOptions['onEvent']) =>
      new Informer(kcp, { apiVersion: API_VERSION, kind, relistMs: this.o.relistMs, onEvent, onError });
    this.kymas = watch('Kyma', (t, k) => this.onKyma(t, k));
    const manifests = (this.manifests = watch('Manifest', (t, m) => this.onManifest(t, m)));
    this.releaseMetas = watch('ModuleReleaseMeta', (t, o) => this.onReleaseMeta(t, o));
    this.informers.push(
      this.kymas,
      watch('ModuleTemplate', (t, o) => this.onTemplate(t, o)),
      this.releaseMetas,
      manifests,
    );
    await Promise.all(this.informers.slice(this.secrets.length).map((i) => i.start()));
    if (this.o.shards === undefined) this.duties.take(false);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.news.stop();
    this.duties.drop();
    this.unexportShards();
    for (const i of this.informers) i.stop();
    this.targets.stop();
    await Promise.all([this.signaller.idle(), this.duties.idle()]);
  }

  /** Sends routed signals, each collapsed by its key (./signaller.ts). */
  private sendAll(signals: Signal[]): void {
    for (const s of signals) this.signaller.submit(signalKey(s), () => send(this.o.temporal, this.o, s));
  }

  /** `also`: further versions its reads must reflect (a bridge taking the Kyma's shard over: the newest templates and release metas it has seen). */
  private onKyma(type: InformerEventType, k: KubeObject, also?: SeenVersions): void {
    const ns = k.metadata.namespace!;
    const name = k.metadata.name;
    if (!servesNamespace(this.scope, ns)) {
      // Its kubeconfig Secret cannot be read here: reconciling it could install into the wrong cluster.
      if (type !== 'DELETED' && !this.memory.unserved.has(`${ns}/${name}`))
        this.o.log?.(
          `Kyma ${ns}/${name} is in a namespace this installation does not serve (KLM_KYMA_NAMESPACES: ${this.o.kymaNamespaces!.join(', ')}): left alone`,
        );
      if (type === 'DELETED') this.memory.unserved.delete(`${ns}/${name}`);
      else this.memory.unserved.add(`${ns}/${name}`);
      return;
    }
    if (type === 'DELETED') this.fleet.deleteKyma(ns, name);
    else
      this.fleet.setKyma(
        ns,
        name,
        effectiveKymaSpec({ metadata: k.metadata, spec: (k as unknown as Kyma).spec ?? { channel: '' } }),
      );
    const workflowId = kymaWorkflowId(ns, name);
    const { seen, signal } = routeKyma(type, k, this.scope, this.memory.kymas.get(workflowId), also);
    if (seen === undefined) this.memory.kymas.delete(workflowId);
    else this.memory.kymas.set(workflowId, seen);
    if (signal) this.sendAll([signal]);
  }

  /** A workflow of this Kyma's ended without finishing: its Kyma's workflow (started again if it was its own run) shows it. */
  private onWorkflowEnded(kyma: { namespace: string; name: string }, ended: WorkflowEnded): void {
    const exists = this.kymas.get(kyma.namespace, kyma.name) !== undefined;
    const signal = routeWorkflowEnded(kyma, ended, this.scope, exists);
    if (signal) this.sendAll([signal]);
  }

  /** A ModuleTemplate added, changed or deleted: pokes the Kymas that resolve to it, and the runtimes that may see it. */
  private onTemplate(type: InformerEventType, t: KubeObject): void {
    const namespace = t.metadata.namespace ?? '';
    this.memory.templates = newestVersion(this.memory.templates, t.metadata.resourceVersion ?? '');
    this.signalTemplates(namespace, this.fleet.templateChanged(namespace, t.metadata.name), 'ModuleTemplate', t);
    this.signalCatalog(namespace, t, type === 'DELETED');
  }

  /**
   * A ModuleReleaseMeta added, changed or deleted: pokes the Kymas whose resolution it may
   * change, and tells the rollout of each channel that moved to another version.
   */
  private onReleaseMeta(type: InformerEventType, m: KubeObject): void {
    const namespace = m.metadata.namespace ?? '';
    this.memory.releaseMetas = newestVersion(this.memory.releaseMetas, m.metadata.resourceVersion ?? '');
    const now = type === 'DELETED' ? undefined : (m as unknown as ModuleReleaseMeta);
    const { poke, promotions } = this.fleet.releaseMetaChanged(namespace, m.metadata.name, now);
    if (now) this.duties.checkMandatory(namespace, m.metadata.name);
    this.signalTemplates(namespace, poke, 'ModuleReleaseMeta', m);
    this.signalCatalog(namespace);
    this.duties.promote(m, promotions);
  }

  /** Signals templatesChanged to the Kymas the event concerns, carrying its kind and version; counts those signalled and spared. */
  private signalTemplates(
    namespace: string,
    concerned: string[],
    kind: 'ModuleTemplate' | 'ModuleReleaseMeta',
    o: KubeObject,
  ): void {
    const { signals, skipped } = routeTemplates(namespace, concerned, kind, o, {
      scope: this.scope,
      templatesSeen: this.memory.templates,
      kymaCount: this.fleet.kymaCount(namespace),
    });
    this.templateSignals.sent += signals.length;
    this.templateSignals.skipped += skipped;
    templateSignals.inc({ outcome: 'sent' }, signals.length);
    templateSignals.inc({ outcome: 'skipped' }, skipped);
    this.sendAll(signals);
  }

  /** Makes sure the Manifest's target cluster is watched for its CR kind, and who listens. */
  private onManifest(type: InformerEventType, m: KubeObject): void {
    const namespace = m.metadata.namespace!;
    const paused = this.memory.manifestPaused;
    const route = routeManifest(type, m, this.scope, paused);
    if (!route) return;
    const { module, key, watch } = route;
    const kyma = module.kyma.name;
    if (route.checkMandatory) this.duties.checkMandatory(namespace, module.module);
    if (route.paused === undefined) paused.delete(key);
    else paused.set(key, route.paused);
    if (route.note) this.note(route.note);
    if (!watch) return;
    void this.targetFor(namespace, kyma).then(
      (t) => {
        t.manifest(key, module, watch.on, (m as { status?: { state?: string } }).status?.state);
        if (watch.resource)
          t.subscribe(watch.resource.apiVersion, watch.resource.kind, key, module, watch.on, watch.statePaths);
        // News of its manager waited for its Manifest (./target-watches.ts): told now, unless its CR lets it wait on.
        if (!t.letsWait(key)) this.news.release(module.kyma, () => this.tell(module.kyma));
      },
      (err: unknown) => {
        this.o.log?.(
          `target cluster of Kyma ${namespace}/${kyma}: ${(err as Error).message}; trying again in ${TARGET_RETRY_MS / 1000} s`,
        );
        setTimeout(() => {
          const live = this.manifests.list().find((x) => x.metadata.uid === m.metadata.uid);
          if (live && !this.stopped && this.owns(live.metadata.namespace!, kyma)) this.onManifest('MODIFIED', live);
        }, TARGET_RETRY_MS).unref();
      },
    );
  }

  /**
   * A Kyma's kubeconfig Secret changed or went: its watches move to the new kubeconfig (the
   * old client's credentials may be revoked); watches nobody uses any more stop.
   */
  private onSecret(type: InformerEventType, s: KubeObject): void {
    const namespace = s.metadata.namespace!;
    const kyma = s.metadata.labels?.[LABELS.kymaName];
    const route = routeSecret(type, s, this.scope, kyma && this.targets.keyOf(`${namespace}/${kyma}`));
    if (!route) return;
    if (route.signal) this.sendAll([route.signal]);
    if (route.move) {
      this.targets.drop(namespace, route.kyma);
      for (const m of this.manifests.list()) {
        if (m.metadata.namespace === namespace && m.metadata.labels?.[LABELS.kymaName] === route.kyma)
          this.onManifest('ADDED', m);
      }
    }
    // Its runtime Kyma is watched in the cluster the Secret names now.
    if (route.watchRuntime) this.watchRuntime(namespace, route.kyma);
  }

  /**
   * Watches the runtime Kyma in the cluster of a Kyma's kubeconfig Secret: an edit by its users
   * (or its deletion) pokes the Kyma workflows that target that cluster.
   */
  private watchRuntime(namespace: string, kyma: string): void {
    void this.targetFor(namespace, kyma).then(
      (t) =>
        t.watchRuntimeKyma((owner, listed) => {
          const before = this.targets.setRuntimeOwner(t.key, owner);
          this.sendAll(routeRuntimeKyma(owner, before, this.targets.kymasOn(t.key), this.scope, { listed }));
        }),
      (err: unknown) => {
        this.o.log?.(
          `target cluster of Kyma ${namespace}/${kyma}: ${(err as Error).message}; watching its runtime Kyma again in ${TARGET_RETRY_MS / 1000} s`,
        );
        setTimeout(() => {
          if (this.secretFor(namespace, kyma) && !this.stopped && this.owns(namespace, kyma))
            this.watchRuntime(namespace, kyma);
        }, TARGET_RETRY_MS).unref();
      },
    );
  }

  /** Tells the Kymas with a runtime in the namespace whose catalog a template or release-meta event may have changed. */
  private signalCatalog(namespace: string, template?: KubeObject, deleted = false): void {
    const { kymas, visibility } = routeCatalog(
      namespace,
      {
        secrets: this.secrets.flatMap((i) => i.list()),
        kyma: (ns, name) => this.kymas.get(ns, name),
        runtimeOwner: (who) => {
          const key = this.targets.keyOf(who);
          return key === undefined ? undefined : this.targets.runtimeOwner(key);
        },
        visibility: (key) => this.memory.templateVisibility.get(key),
      },
      template,
      deleted,
    );
    if (visibility?.now) this.memory.templateVisibility.set(visibility.key, visibility.now);
    else if (visibility) this.memory.templateVisibility.delete(visibility.key);
    this.sendAll(kymas.map((who) => ({ signal: 'catalogChanged', kyma: kymaRef(who) })));
  }

  /**
   * Notes news for a module and tells its Kyma's workflow (which runs its modules) what the
   * bridge saw for them (`ModuleNews`): one signal for all its modules, held for the news window;
   * what piles up while it is in flight goes in the next.
   */
  private note({ module, news }: ModuleNote, canWait = false): void {
    if (news === 'everything') this.news.everything(module);
    else if ('view' in news) this.news.view(module, news.view);
    else this.news.seen(module, news.seen);
    const { kyma } = module;
    this.news.due(kyma, canWait, () => this.tell(kyma));
  }

  /** Tells a Kyma's workflow what is pending for its modules, in one signal held for the news window. */
  private tell(kyma: KymaRef): void {
    this.signaller.submit(
      `${kymaWorkflowId(kyma.namespace, kyma.name)}#modulesChanged`,
      async () => {
        const changes = this.news.take(kyma);
        if (!changes.length) return NOTHING_SENT;
        return send(this.o.temporal, this.o, { signal: 'modulesChanged', kyma, changes });
      },
      this.o.newsWindowMs ?? NEWS_WINDOW_MS,
    );
  }

  /** Pokes every module on a target cluster that stopped or started answering. */
  private onHealth(t: TargetWatches, healthy: boolean, err?: unknown): void {
    this.o.log?.(
      `target cluster ${t.client.server} ` +
        `${healthy ? 'answers again' : `does not answer: ${(err as Error).message}`}; poking ` +
        `${t.modules.size} modules`,
    );
    const { notes, signals } = routeHealth(t.modules.values(), this.targets.kymasOn(t.key));
    for (const n of notes) this.note(n);
    this.sendAll(signals);
  }

  /** The kubeconfig Secret of Kyma `namespace/kyma`, as the watch holds it. */
  private secretFor(namespace: string, kyma: string): KubeObject | undefined {
    return this.secrets
      .flatMap((i) => i.list())
      .find((s) => s.metadata.namespace === namespace && s.metadata.labels?.[LABELS.kymaName] === kyma);
  }

  private targetFor(namespace: string, kyma: string): Promise<TargetWatches> {
    return this.targets.for(namespace, kyma, this.secretFor(namespace, kyma));
  }

  private onTargetObject(type: InformerEventType, o: KubeObject, t: TargetWatches): void {
    const owner = parseOwnedBy(o.metadata.annotations?.[OWNED_BY_ANNOTATION]);
    // Before the filter: what a module's own CR reports is noted even when it is no news.
    const canWait = owner !== undefined && t.canWait(type, o, moduleKey(owner.namespace, owner.kyma, owner.module));
    if (!t.changed(type, o, owner !== undefined)) return;
    const modules = routeTargetObject(
      owner,
      t.subscribers.get(`${o.apiVersion}/${o.kind}`)?.values() ?? [],
      this.scope,
    );
    if (!modules.length) return;
    // The object as seen, so that the readiness check need not read it again. Views that pile
    // up while a signal is in flight go out together in the next one, the newest of each object.
    const observed = t.observed(type, o);
    for (const module of modules) this.note({ module, news: { view: observed } }, canWait);
  }
}
