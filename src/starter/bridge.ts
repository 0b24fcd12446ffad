// The bridge: routing from Kubernetes watches to Temporal signals. It decides nothing. Kyma
// events start or poke the Kyma's workflow (signalWithStart); ModuleTemplate and
// ModuleReleaseMeta events poke the Kyma workflows whose resolution they may change, as the
// fleet index (./fleet-index.ts, kept from the same watches) tells; events on
// module CRs and manager workloads in target clusters poke the owning module workflow. Each
// remote target cluster is probed: when it stops answering, or answers again, its watches are
// re-established and every module workflow on it is poked, so that the modules show the
// cluster as unreachable, and recover, within a probe and a check. A kubeconfig Secret that
// changes moves its Kyma's watches to a client of the new kubeconfig. In each cluster a
// kubeconfig Secret names, the runtime Kyma (kyma-system/default) is watched too: its users'
// edits poke the Kyma workflow; template and release-meta events also tell the Kymas with a
// runtime that their catalog may have changed (`catalogChanged`).
import type { Client } from '@temporalio/client';
import { MANAGED_BY } from '../api/identity';
import type { Kyma } from '../api/kyma';
import type { ModuleReleaseMeta } from '../api/modulereleasemeta';
import { idOf, objectKey } from '../api/object-id';
import { CONTROL_PLANE_KYMA_ANNOTATION, effectiveKymaSpec, RUNTIME_KYMA } from '../api/runtime';
import {
  kymaWorkflowId,
  moduleWorkflowId,
  OWNED_BY_ANNOTATION,
  parseOwnedBy,
  RESOURCE_KIND_ANNOTATION,
  STATE_PATHS_ANNOTATION,
} from '../api/names';
import { SA } from '../api/search-attributes';
import { API_VERSION, LABELS, resourceVersionReached, type KubeObject } from '../api/shared';
import type { Visibility } from '../contract/kyma';
import { WORKFLOW_TASK_TIMEOUT, type ReconcileSettings } from '../contract/settings';
import {
  promoted,
  ROLLOUT_WORKFLOW,
  rolloutStart,
  rolloutWorkflowId,
  type ChannelRef,
  type Promotion,
  type RolloutWorkflowInput,
} from '../contract/rollout';
import {
  catalogChanged,
  kymaChanged,
  modulesChanged,
  templatesChanged,
  workflowEnded,
  type WorkflowEnded,
} from '../contract/signals';
import type { ObservedObject } from '../contract/readiness';
import type { CachedKind, SeenVersions } from '../contract/seen-versions';
import { readinessView } from '../decisions/readiness';
import { shardOf } from '../decisions/shards';
import { kymaVisibility, missingLabel, visibilityOf } from '../decisions/visibility';
import { KYMA_WORKFLOW, KYMA_WORKFLOW_SHAPE, type KymaWorkflowInput } from '../contract/workflow-inputs';
import { bridgeLeader, exportFleetStates, exportShardClusters, templateSignals } from '../infra/metrics';
import { NEWS_WINDOW_MS, type TargetWatchScope } from '../infra/config';
import { fleetStates } from './fleet-states';
import { Informer, type InformerEventType } from '../k8s/informer';
import type { KubeClient } from '../k8s/rest-client';
import { clientFromSecret, kubeconfigKey } from '../k8s/target-cluster';
import { EndedWorkflows } from './ended-workflows';
import { FleetIndex } from './fleet-index';
import { MandatoryFinalizer } from './mandatory-finalizer';
import { ModuleNews } from './module-news';
import { readinessFingerprint, withoutStatus } from './readiness-change';
import { Signaller } from './signaller';

const MANAGED = `${LABELS.managedBy}=${MANAGED_BY}`;
const CONTROL_PLANE = 'control-plane';

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
  /** What a target cluster's watches of managed objects and module CRs see (KLM_TARGET_WATCH_SCOPE): the cluster (default), or its kubeconfig context's namespace. */
  targetWatchScope?: TargetWatchScope;
  /**
   * How long news of a Kyma's modules waits before its signal goes (what comes meanwhile goes
   * with it, in one signal and one workflow task): NEWS_WINDOW_MS by default; 0: at once.
   */
  newsWindowMs?: number;
  /** How often to look for Kyma and module workflows the server ended (terminated, failed, timed out); 0: never. 30 s by default. */
  endedWorkflowsPollMs?: number;
  /**
   * How many shards the fleet is cut into when several bridges share it (./shard-leases.ts hands
   * them out): this bridge then watches and signals for the Kymas of the shards it is given
   * (`gain`) only, and does the fleet-wide duties while it holds shard 0. Unset: it serves all.
   */
  shards?: number;
  log?: (msg: string) => void;
}

type KymaWorkflowFn = (input: KymaWorkflowInput) => Promise<void>;

const PROBE_MS = 10_000;
const ENDED_POLL_MS = 30_000;
/** The key of the runtime Kyma's watch among a target cluster's informers. */
const RUNTIME_WATCH = 'runtime-kyma';
/** When a target cluster's client could not be made (its credential plugin failed, say), how soon to try again. */
const TARGET_RETRY_MS = 30_000;

/**
 * The watches on one target cluster: manager workloads (ours, by label) and every object of
 * each module CR kind (the user's too: those block a module's removal).
 */
class TargetWatches {
  private readonly informers = new Map<string, Informer>();
  /** Module workflows per CR kind, for objects that carry no owner annotation. */
  readonly subscribers = new Map<string, Set<string>>();
  /** Per CR kind, the status paths a customStateCheck of some module reads (besides state and message). */
  private readonly statePaths = new Map<string, Set<string>>();
  /** Every module workflow whose Manifest targets this cluster. */
  readonly modules = new Set<string>();
  /** Whether the last probe got an answer. */
  healthy = true;
  private probe?: NodeJS.Timeout;

  /** Readiness fingerprint per object uid, as last seen. */
  private readonly seen = new Map<string, string>();

  /** What of the runtime Kyma its control-plane Kyma acts on, as last seen. */
  private runtimeSeen?: string;

  /**
   * `owned`: the client is this cluster's own (a kubeconfig Secret's), closed with the watches;
   * `key`: its kubeconfig's; `namespace`: the one namespace its watches of managed objects and
   * module CRs see (a simulated runtime's, KLM_TARGET_WATCH_SCOPE), unset: the whole cluster.
   */
  constructor(
    readonly client: KubeClient,
    readonly key: string,
    private readonly owned: boolean,
    private readonly onEvent: (type: InformerEventType, obj: KubeObject, t: TargetWatches) => void,
    private readonly o: { relistMs?: number; onError?: (e: unknown) => void; namespace?: string } = {},
  ) {
    this.watch('apps/v1', 'Deployment', MANAGED);
    this.watch('apps/v1', 'StatefulSet', MANAGED);
  }

  /**
   * Watches the runtime Kyma (kyma-system/default); `onChange` hears of a change of its spec,
   * labels or owner, or of its deletion (its status, which the worker writes, is no news).
   * Until the worker has made the Kyma CRD there, the watch waits in its backoff.
   */
  watchRuntimeKyma(onChange: (owner: string | undefined) => void): void {
    if (this.informers.has(RUNTIME_WATCH)) return;
    const informer = new Informer(this.client, {
      apiVersion: API_VERSION,
      kind: 'Kyma',
      namespace: RUNTIME_KYMA.namespace,
      fieldSelector: `metadata.name=${RUNTIME_KYMA.name}`,
      relistMs: this.o.relistMs,
      onEvent: (type, k) => {
        const meta = k.metadata;
        const seen =
          type === 'DELETED'
            ? 'deleted'
            : JSON.stringify([
                meta.uid,
                meta.generation,
                meta.labels,
                meta.annotations?.[CONTROL_PLANE_KYMA_ANNOTATION],
                meta.deletionTimestamp,
              ]);
        if (seen === this.runtimeSeen) return;
        this.runtimeSeen = seen;
        onChange(type === 'DELETED' ? undefined : meta.annotations?.[CONTROL_PLANE_KYMA_ANNOTATION]);
      },
    });
    this.informers.set(RUNTIME_WATCH, informer);
    void informer.start();
  }

  /** Probes the cluster every `everyMs`; `onChange` hears when it stops or starts answering. */
  startProbe(everyMs: number, onChange: (healthy: boolean, err?: unknown) => void): void {
    const tick = async () => {
      let err: unknown;
      await this.client.ping(everyMs).catch((e: unknown) => (err = e));
      if (this.probe === undefined) return;
      if ((err === undefined) !== this.healthy) {
        this.healthy = err === undefined;
        // Watches on a cluster that hung are stale, and ones on a cluster back again are in
        // backoff: list and watch afresh either way (the caches stay, so what went meanwhile
        // comes as a deletion).
        for (const informer of this.informers.values()) informer.resync();
        onChange(this.healthy, err);
      }
      this.probe = setTimeout(() => void tick(), everyMs);
    };
    this.probe = setTimeout(() => void tick(), everyMs);
  }

  /** Drops a Kyma's module workflows (its Secret now points elsewhere); whether any are left. */
  forgetKyma(prefix: string): boolean {
    for (const set of [this.modules, ...this.subscribers.values()])
      for (const id of set) if (id.startsWith(prefix)) set.delete(id);
    return this.modules.size > 0;
  }

  /**
   * Whether an event is news to a module workflow: a deletion always is; a fresh object of
   * ours without status is not (its workflow just applied it); else only a changed
   * readiness fingerprint is.
   */
  changed(type: InformerEventType, o: KubeObject, ours: boolean): boolean {
    const uid = o.metadata.uid ?? `${o.metadata.namespace}/${o.metadata.name}`;
    if (type === 'DELETED') {
      this.seen.delete(uid);
      return true;
    }
    const print = readinessFingerprint(o, this.statePaths.get(`${o.apiVersion}/${o.kind}`));
    const before = this.seen.get(uid);
    this.seen.set(uid, print);
    if (before === undefined) return !(ours && withoutStatus(o));
    return before !== print;
  }

  /** The object as a signal carries it: what readiness reads of it, or null when it was deleted. */
  observed(type: InformerEventType, o: KubeObject): ObservedObject {
    return {
      key: objectKey(idOf(o)),
      resourceVersion: o.metadata.resourceVersion ?? '',
      view: type === 'DELETED' ? null : readinessView(o, this.statePaths.get(`${o.apiVersion}/${o.kind}`)),
    };
  }

  subscribe(apiVersion: string, kind: string, workflowId: string, on: boolean, statePaths: string[] = []): void {
    const key = `${apiVersion}/${kind}`;
    const set = this.subscribers.get(key) ?? new Set<string>();
    if (on) set.add(workflowId);
    else set.delete(workflowId);
    this.subscribers.set(key, set);
    // Paths are only ever added: following one more field than needed costs a poke, missing one a wake-up.
    if (statePaths.length) this.statePaths.set(key, new Set([...(this.statePaths.get(key) ?? []), ...statePaths]));
    if (on) this.watch(apiVersion, kind);
  }

  private watch(apiVersion: string, kind: string, labelSelector?: string): void {
    const key = `${apiVersion}/${kind}`;
    if (this.informers.has(key)) return;
    const informer = new Informer(this.client, {
      apiVersion,
      kind,
      labelSelector,
      ...(this.o.namespace ? { namespace: this.o.namespace } : {}),
      relistMs: this.o.relistMs,
      onEvent: (type, o) => this.onEvent(type, o, this),
      onError: this.o.onError,
    });
    this.informers.set(key, informer);
    void informer.start();
  }

  stop(): void {
    clearTimeout(this.probe);
    this.probe = undefined;
    for (const i of this.informers.values()) i.stop();
    if (this.owned) this.client.close();
  }
}

/** The object behind a control-plane event, as a signal's SeenVersions (none without a resourceVersion). */
function seenVersion(kind: CachedKind, o: KubeObject): [SeenVersions] | [] {
  return o.metadata.resourceVersion ? [{ [kind]: o.metadata.resourceVersion }] : [];
}

export class Bridge {
  private readonly signaller: Signaller;
  /** Which Kymas use which module on which channel: routes ModuleTemplate and ModuleReleaseMeta events. */
  readonly fleet = new FleetIndex();
  /** The newest ModuleTemplate version this bridge has seen (of any template). */
  private templatesSeen = '';
  /** The newest ModuleReleaseMeta version this bridge has seen (of any release meta). */
  private releaseMetasSeen = '';
  /** Kymas that template and release-meta events signalled, and those the index spared. */
  private readonly templateSignals = { sent: 0, skipped: 0 };
  private readonly informers: Informer[] = [];
  private readonly targets = new Map<string, Promise<TargetWatches>>();
  /** The kubeconfig keys whose watches run (their client made). */
  private readonly watching = new Set<string>();
  /** Which watches each Kyma (`<namespace>/<name>`) uses, by kubeconfig key. */
  private readonly kymaTarget = new Map<string, string>();
  /** What of each Kyma the workflow acts on, as last signalled: status writes alone are not news. */
  private readonly kymaSeen = new Map<string, string>();
  /** What was seen for modules and not told yet, per Kyma. */
  private readonly news = new ModuleNews();
  /** The control-plane Kyma (`ns/name`) each runtime's Kyma belongs to, by kubeconfig key, as its watch saw it. */
  private readonly runtimeOwners = new Map<string, string>();
  /** The beta and internal labels last seen per ModuleTemplate (`ns/name`): a runtime that loses one is told. */
  private readonly templateVisibility = new Map<string, Visibility>();
  /** The skip-reconciliation label last seen per Manifest: a flip pokes its module workflow. */
  private readonly manifestPaused = new Map<string, boolean>();
  private kymas!: Informer;
  /** Kubeconfig Secrets: one watch for all namespaces, or one per served namespace. */
  private secrets: Informer[] = [];
  /** Kymas outside the served namespaces, told of once. */
  private readonly unserved = new Set<string>();
  private manifests!: Informer;
  private releaseMetas!: Informer;
  private mandatory!: MandatoryFinalizer;
  private stopped = false;
  /** Stops exporting the fleet's state gauges (this bridge exports them while it leads). */
  private unexport?: () => void;
  private readonly unexportShards: () => void;
  private ended?: EndedWorkflows;
  /** The shards this bridge serves (with `shards` set). */
  private readonly held = new Set<number>();

  constructor(private readonly o: BridgeOptions) {
    this.signaller = new Signaller((err, key) => o.log?.(`signal ${key} failed: ${(err as Error).message}`));
    this.unexportShards = exportShardClusters(() => this.clustersByShard());
  }

  /** Whether this bridge serves Kyma `namespace/name`: it is the only bridge, or holds the Kyma's shard. */
  private owns(namespace: string, name: string): boolean {
    return this.o.shards === undefined || this.held.has(shardOf(namespace, name, this.o.shards));
  }

  /** Whether this bridge does the fleet-wide duties: promotions, the mandatory finalizer, ended workflows, the fleet's state gauges. */
  private get leads(): boolean {
    return this.o.shards === undefined || this.held.has(0);
  }

  /** Target clusters watched per served shard (distinct kubeconfigs of its Kymas whose watches run), for the shard gauges. */
  private clustersByShard(): Map<number, number> {
    const keys = new Map<number, Set<string>>(
      this.o.shards === undefined ? [[0, new Set<string>()]] : [...this.held].map((s) => [s, new Set<string>()]),
    );
    for (const [who, key] of this.kymaTarget) {
      if (!this.watching.has(key)) continue;
      const [ns, name] = who.split('/') as [string, string];
      keys.get(this.o.shards === undefined ? 0 : shardOf(ns, name, this.o.shards))?.add(key);
    }
    return new Map([...keys].map(([s, k]) => [s, k.size]));
  }

  /**
   * Serves shard `shard` from now on: what its Kymas' workflows may have missed while nobody did
   * is told again (each Kyma is poked, or started; each module reads its objects afresh; its
   * target clusters are watched, listing from scratch). Shard 0 brings the fleet-wide duties,
   * and each rollout is told its channel's version.
   */
  gain(shard: number): void {
    if (this.o.shards === undefined || this.held.has(shard) || this.stopped) return;
    this.held.add(shard);
    const count = this.o.shards;
    const inShard = (namespace: string | undefined, kyma: string | undefined) =>
      kyma !== undefined && shardOf(namespace ?? '', kyma, count) === shard;
    if (shard === 0) this.lead();
    // A template or release meta changed while nobody served the shard: their reads must reflect it.
    const also: SeenVersions = {
      ...(this.templatesSeen ? { ModuleTemplate: this.templatesSeen } : {}),
      ...(this.releaseMetasSeen ? { ModuleReleaseMeta: this.releaseMetasSeen } : {}),
    };
    for (const k of this.kymas.list())
      if (inShard(k.metadata.namespace, k.metadata.name)) this.onKyma('ADDED', k, also);
    for (const s of this.secrets.flatMap((i) => i.list()))
      if (inShard(s.metadata.namespace, s.metadata.labels?.[LABELS.kymaName])) this.onSecret('ADDED', s);
    for (const m of this.manifests.list()) {
      const kyma = m.metadata.labels?.[LABELS.kymaName];
      const module = m.metadata.labels?.[LABELS.moduleName];
      if (!inShard(m.metadata.namespace, kyma) || !module) continue;
      this.onManifest('ADDED', m);
      this.tellModules(this.news.everything(moduleWorkflowId(m.metadata.namespace!, kyma!, module)));
    }
  }

  /** Stops serving shard `shard` at once (another bridge is about to): its Kymas' target watches stop, its signals cease. */
  lose(shard: number): void {
    if (this.o.shards === undefined || !this.held.delete(shard)) return;
    const count = this.o.shards;
    if (shard === 0) this.unlead();
    for (const who of [...this.kymaTarget.keys()]) {
      const [ns, name] = who.split('/') as [string, string];
      if (shardOf(ns, name, count) === shard) this.dropTarget(ns, name);
    }
    for (const k of this.kymas.list())
      if (shardOf(k.metadata.namespace!, k.metadata.name, count) === shard)
        this.kymaSeen.delete(kymaWorkflowId(k.metadata.namespace!, k.metadata.name));
  }

  /** Takes up the fleet-wide duties: the fleet's state gauges, the watch on ended workflows; each rollout hears its channel's version, each mandatory module is checked. */
  private lead(): void {
    bridgeLeader.set(1);
    this.unexport = exportFleetStates(() =>
      fleetStates(this.kymas.list(), this.manifests.list(), this.releaseMetas.list()),
    );
    const every = this.o.endedWorkflowsPollMs ?? ENDED_POLL_MS;
    if (every > 0) {
      this.ended = new EndedWorkflows(
        this.o.temporal,
        this.o.taskQueue,
        every,
        (kyma, ended) => this.onWorkflowEnded(kyma, ended),
        this.o.log,
      );
      this.ended.start();
    }
    if (this.o.shards === undefined) return; // at start: the release-meta watch's first list does the rest
    for (const m of this.releaseMetas.list()) {
      const namespace = m.metadata.namespace ?? '';
      this.mandatory.check(namespace, m.metadata.name);
      for (const { channel, version } of this.fleet.promotionsOf(namespace, m.metadata.name))
        this.promote({ namespace, module: m.metadata.name, channel }, this.promotion(version, m));
    }
  }

  private unlead(): void {
    bridgeLeader.set(0);
    this.unexport?.();
    this.unexport = undefined;
    this.ended?.stop();
    this.ended = undefined;
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
    this.kymas = new Informer(kcp, {
      apiVersion: API_VERSION,
      kind: 'Kyma',
      relistMs: this.o.relistMs,
      onEvent: (t, k) => this.onKyma(t, k),
      onError,
    });
    const manifests = (this.manifests = new Informer(kcp, {
      apiVersion: API_VERSION,
      kind: 'Manifest',
      relistMs: this.o.relistMs,
      onEvent: (t, m) => this.onManifest(t, m),
      onError,
    }));
    this.releaseMetas = new Informer(kcp, {
      apiVersion: API_VERSION,
      kind: 'ModuleReleaseMeta',
      relistMs: this.o.relistMs,
      onEvent: (t, o) => this.onReleaseMeta(t, o),
      onError,
    });
    this.mandatory = new MandatoryFinalizer(
      kcp,
      () => this.releaseMetas.list(),
      () => this.manifests.list(),
      this.o.log,
    );
    this.informers.push(
      this.kymas,
      new Informer(kcp, {
        apiVersion: API_VERSION,
        kind: 'ModuleTemplate',
        relistMs: this.o.relistMs,
        onEvent: (t, o) => this.onTemplate(t, o),
        onError,
      }),
      this.releaseMetas,
      manifests,
    );
    await Promise.all(this.informers.slice(this.secrets.length).map((i) => i.start()));
    if (this.o.shards === undefined) this.lead();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.unlead();
    this.unexportShards();
    for (const i of this.informers) i.stop();
    for (const t of this.targets.values())
      void t.then(
        (w) => w.stop(),
        () => undefined,
      );
    await Promise.all([this.signaller.idle(), this.mandatory?.idle()]);
  }

  /** `also`: further versions its reads must reflect (a bridge taking the Kyma's shard over: the newest templates and release metas it has seen). */
  private onKyma(type: InformerEventType, k: KubeObject, also?: SeenVersions): void {
    const ns = k.metadata.namespace!;
    const name = k.metadata.name;
    if (this.o.kymaNamespaces && !this.o.kymaNamespaces.includes(ns)) {
      // Its kubeconfig Secret cannot be read here: reconciling it could install into the wrong cluster.
      if (type !== 'DELETED' && !this.unserved.has(`${ns}/${name}`))
        this.o.log?.(
          `Kyma ${ns}/${name} is in a namespace this installation does not serve (KLM_KYMA_NAMESPACES: ${this.o.kymaNamespaces.join(', ')}): left alone`,
        );
      if (type === 'DELETED') this.unserved.delete(`${ns}/${name}`);
      else this.unserved.add(`${ns}/${name}`);
      return;
    }
    const workflowId = kymaWorkflowId(ns, name);
    const { temporal } = this.o;
    if (type === 'DELETED') {
      // Gone for good (our finalizer was dropped): poke, never start.
      this.fleet.deleteKyma(ns, name);
      this.kymaSeen.delete(workflowId);
      if (!this.owns(ns, name)) return;
      this.signaller.submit(`${workflowId}#kymaChanged`, () =>
        temporal.workflow.getHandle(workflowId).signal(kymaChanged),
      );
      return;
    }
    // The workflow's own status writes come back as events too; only spec (generation),
    // labels, finalizers and deletion are news to it (its drift timer covers anything missed).
    const meta = k.metadata;
    this.fleet.setKyma(
      ns,
      name,
      effectiveKymaSpec({ metadata: meta, spec: (k as unknown as Kyma).spec ?? { channel: '' } }),
    );
    if (!this.owns(ns, name)) return;
    const seen = JSON.stringify([meta.uid, meta.generation, meta.labels, meta.finalizers, meta.deletionTimestamp]);
    if (type === 'MODIFIED' && this.kymaSeen.get(workflowId) === seen) return;
    this.kymaSeen.set(workflowId, seen);
    const [kyma] = seenVersion('Kyma', k);
    const signalArgs: [SeenVersions] | [] = kyma || also ? [{ ...kyma, ...also }] : [];
    this.signaller.submit(`${workflowId}#kymaChanged`, () =>
      temporal.workflow.signalWithStart<KymaWorkflowFn, [SeenVersions?]>(KYMA_WORKFLOW, {
        ...this.kymaStart(ns, name),
        signal: kymaChanged,
        signalArgs,
      }),
    );
  }

  /** How the bridge starts the workflow of Kyma `ns/name` (with signalWithStart) when it does not run. */
  private kymaStart(ns: string, name: string) {
    const { taskQueue, settings } = this.o;
    return {
      workflowId: kymaWorkflowId(ns, name),
      taskQueue,
      args: [{ kyma: { namespace: ns, name }, settings, shape: KYMA_WORKFLOW_SHAPE }] as [KymaWorkflowInput],
      workflowTaskTimeout: WORKFLOW_TASK_TIMEOUT,
      typedSearchAttributes: [
        { key: SA.KymaName, value: name },
        { key: SA.KymaNamespace, value: ns },
      ],
    };
  }

  /** A workflow of this Kyma's ended without finishing: its Kyma's workflow (started again if it was its own run) shows it. */
  private onWorkflowEnded(kyma: { namespace: string; name: string }, ended: WorkflowEnded): void {
    if (!this.leads) return; // a poll that was under way when shard 0 went to another bridge
    if (!this.kymas.get(kyma.namespace, kyma.name)) return; // the Kyma is gone: nothing to show it on
    this.signaller.submit(`${kymaWorkflowId(kyma.namespace, kyma.name)}#workflowEnded/${ended.runId}`, () =>
      this.o.temporal.workflow.signalWithStart<KymaWorkflowFn, [WorkflowEnded]>(KYMA_WORKFLOW, {
        ...this.kymaStart(kyma.namespace, kyma.name),
        signal: workflowEnded,
        signalArgs: [ended],
      }),
    );
  }

  /** A ModuleTemplate added, changed or deleted: pokes the Kymas that resolve to it, and the runtimes that may see it. */
  private onTemplate(type: InformerEventType, t: KubeObject): void {
    const namespace = t.metadata.namespace ?? '';
    const version = t.metadata.resourceVersion ?? '';
    if (!this.templatesSeen || resourceVersionReached(version, this.templatesSeen)) this.templatesSeen = version;
    this.signalTemplates(namespace, this.fleet.templateChanged(namespace, t.metadata.name), 'ModuleTemplate', t);
    this.signalCatalog(namespace, t, type === 'DELETED');
  }

  /**
   * A ModuleReleaseMeta added, changed or deleted: pokes the Kymas whose resolution it may
   * change, and tells the rollout of each channel that moved to another version.
   */
  private onReleaseMeta(type: InformerEventType, m: KubeObject): void {
    const namespace = m.metadata.namespace ?? '';
    const version = m.metadata.resourceVersion ?? '';
    if (!this.releaseMetasSeen || resourceVersionReached(version, this.releaseMetasSeen))
      this.releaseMetasSeen = version;
    const now = type === 'DELETED' ? undefined : (m as unknown as ModuleReleaseMeta);
    const { poke, promotions } = this.fleet.releaseMetaChanged(namespace, m.metadata.name, now);
    if (now && this.leads) this.mandatory.check(namespace, m.metadata.name);
    this.signalTemplates(namespace, poke, 'ModuleReleaseMeta', m);
    this.signalCatalog(namespace);
    if (!this.leads) return;
    for (const { channel, version } of promotions)
      this.promote({ namespace, module: m.metadata.name, channel }, this.promotion(version, m));
  }

  /** A promotion to `version` by release meta `m`, with the versions the rollout's reads must reflect. */
  private promotion(version: string, m: KubeObject): Promotion {
    const [seen] = seenVersion('ModuleReleaseMeta', m);
    return {
      version,
      ...(seen ? { seen: { ...seen, ...(this.templatesSeen ? { ModuleTemplate: this.templatesSeen } : {}) } } : {}),
    };
  }

  /** Starts the channel's rollout workflow, or tells the running one, of a promotion. */
  private promote(channel: ChannelRef, promotion: Promotion): void {
    const workflowId = rolloutWorkflowId(channel);
    this.signaller.submit(`${workflowId}#promoted`, () =>
      this.o.temporal.workflow.signalWithStart<(input: RolloutWorkflowInput) => Promise<void>, [Promotion]>(
        ROLLOUT_WORKFLOW,
        {
          ...rolloutStart(channel, this.o.taskQueue, this.o.settings.defaultNamespace),
          signal: promoted,
          signalArgs: [promotion],
        },
      ),
    );
  }

  /**
   * Signals templatesChanged to the Kymas, carrying the event's kind and version. Keyed by
   * kind: a template event and a release-meta event that collapse for one Kyma keep both versions.
   */
  private signalTemplates(
    namespace: string,
    concerned: string[],
    kind: 'ModuleTemplate' | 'ModuleReleaseMeta',
    o: KubeObject,
  ): void {
    // Each bridge counts the Kymas the index spared once: the one that leads.
    const skipped = this.leads ? Math.max(0, this.fleet.kymaCount(namespace) - concerned.length) : 0;
    const kymas = concerned.filter((k) => this.owns(namespace, k));
    this.templateSignals.sent += kymas.length;
    this.templateSignals.skipped += skipped;
    templateSignals.inc({ outcome: 'sent' }, kymas.length);
    templateSignals.inc({ outcome: 'skipped' }, skipped);
    // A promotion may resolve to a template changed a moment before (an event that signalled
    // nobody): the Kymas' reads must reflect every template this bridge has seen, too.
    const [seen] = seenVersion(kind, o);
    const args =
      seen && kind === 'ModuleReleaseMeta' && this.templatesSeen
        ? [{ ...seen, ModuleTemplate: this.templatesSeen }]
        : seen
          ? [seen]
          : [];
    for (const kyma of kymas) {
      const workflowId = kymaWorkflowId(namespace, kyma);
      this.signaller.submit(`${workflowId}#templatesChanged/${kind}`, () =>
        this.o.temporal.workflow.getHandle(workflowId).signal(templatesChanged, ...args),
      );
    }
  }

  /** Makes sure the Manifest's target cluster is watched for its CR kind, and who listens. */
  private onManifest(type: InformerEventType, m: KubeObject): void {
    const meta = m.metadata;
    const kyma = meta.labels?.[LABELS.kymaName];
    const module = meta.labels?.[LABELS.moduleName];
    const resourceKind = meta.annotations?.[RESOURCE_KIND_ANNOTATION];
    if (!kyma || !module) return;
    const workflowId = moduleWorkflowId(m.metadata.namespace!, kyma, module);
    // The last mandatory Manifest of a module may be what a ModuleReleaseMeta's deletion waits for.
    if (type === 'DELETED' && meta.labels?.[LABELS.mandatoryModule] === 'true' && this.leads)
      this.mandatory.check(m.metadata.namespace!, module);
    // The Manifest of a Kyma left alone (outside KLM_KYMA_NAMESPACES) is left alone too: no watches for it.
    if (this.o.kymaNamespaces && !this.o.kymaNamespaces.includes(m.metadata.namespace!)) return;
    if (!this.owns(m.metadata.namespace!, kyma)) {
      this.manifestPaused.delete(workflowId);
      return;
    }
    const paused = meta.labels?.[LABELS.skipReconciliation] === 'true';
    if (type === 'DELETED') this.manifestPaused.delete(workflowId);
    else if ((this.manifestPaused.get(workflowId) ?? false) !== paused) {
      this.manifestPaused.set(workflowId, paused);
      // Kept apart from target-cluster views (which carry no Manifest version) so that none replaces it.
      const [seen] = seenVersion('Manifest', m);
      this.tellModules(seen ? this.news.seen(workflowId, seen) : this.news.everything(workflowId));
    }
    const slash = resourceKind?.lastIndexOf('/') ?? -1;
    void this.targetFor(m.metadata.namespace!, kyma).then(
      (t) => {
        if (type === 'DELETED') t.modules.delete(workflowId);
        else t.modules.add(workflowId);
        const statePaths = meta.annotations?.[STATE_PATHS_ANNOTATION]?.split(',').filter(Boolean) ?? [];
        if (resourceKind)
          t.subscribe(
            resourceKind.slice(0, slash),
            resourceKind.slice(slash + 1),
            workflowId,
            type !== 'DELETED',
            statePaths,
          );
      },
      (err: unknown) => {
        this.o.log?.(
          `target cluster of Kyma ${m.metadata.namespace}/${kyma}: ${(err as Error).message}; trying again in ${TARGET_RETRY_MS / 1000} s`,
        );
        setTimeout(() => {
          const live = this.manifests.list().find((x) => x.metadata.uid === meta.uid);
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
    if (!kyma || !this.owns(namespace, kyma)) return;
    const before = this.kymaTarget.get(`${namespace}/${kyma}`);
    if (before !== undefined && (type === 'DELETED' || kubeconfigKey(s) !== before)) {
      this.dropTarget(namespace, kyma);
      for (const m of this.manifests.list()) {
        if (m.metadata.namespace === namespace && m.metadata.labels?.[LABELS.kymaName] === kyma)
          this.onManifest('ADDED', m);
      }
    }
    // Its runtime Kyma is watched in the cluster the Secret names now.
    if (type !== 'DELETED') this.watchRuntime(namespace, kyma);
  }

  /** Kyma `namespace/kyma` no longer uses the watches it used: they stop unless another Kyma uses them. */
  private dropTarget(namespace: string, kyma: string): void {
    const who = `${namespace}/${kyma}`;
    const key = this.kymaTarget.get(who);
    if (key === undefined) return;
    this.kymaTarget.delete(who);
    const old = this.targets.get(key);
    void old?.then(
      (t) => {
        if (t.forgetKyma(`${kymaWorkflowId(namespace, kyma)}/`) || [...this.kymaTarget.values()].includes(key)) return;
        t.stop();
        this.runtimeOwners.delete(key);
        if (this.targets.get(key) !== old) return;
        this.targets.delete(key);
        this.watching.delete(key);
      },
      () => undefined,
    );
  }

  /**
   * Watches the runtime Kyma in the cluster of a Kyma's kubeconfig Secret: an edit by its users
   * (or its deletion) pokes the Kyma workflows that target that cluster.
   */
  private watchRuntime(namespace: string, kyma: string): void {
    void this.targetFor(namespace, kyma).then(
      (t) =>
        t.watchRuntimeKyma((owner) => {
          const before = this.runtimeOwners.get(t.key);
          if (owner) this.runtimeOwners.set(t.key, owner);
          else this.runtimeOwners.delete(t.key);
          if (owner && owner === before) {
            // Its users' edit: news to its owner only (if this bridge serves it).
            const [ns, name] = owner.split('/') as [string, string];
            if (this.owns(ns, name)) this.pokeKyma(owner);
            return;
          }
          // Made, taken over or deleted: each Kyma on the cluster may own it now.
          this.pokeKymasOn(t);
          // A new owner may have missed catalog events while it had no runtime Kyma yet.
          if (owner) this.signalCatalogTo(owner);
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

  /** Signals kymaChanged to the Kyma workflows whose Secrets name the cluster of these watches. */
  private pokeKymasOn(t: TargetWatches): void {
    for (const [who, key] of this.kymaTarget) if (key === t.key) this.pokeKyma(who);
  }

  /** Signals kymaChanged to the workflow of Kyma `ns/name`: its runtime changed. */
  private pokeKyma(who: string): void {
    const [ns, name] = who.split('/') as [string, string];
    const workflowId = kymaWorkflowId(ns, name);
    this.signaller.submit(`${workflowId}#kymaChanged/runtime`, () =>
      this.o.temporal.workflow.getHandle(workflowId).signal(kymaChanged),
    );
  }

  /**
   * Tells the Kymas with a runtime (a kubeconfig Secret) in the namespace that their catalog may
   * have changed: for a template, those that may see it now or could before (beta, internal);
   * for a release meta, all of them. Their sync writes only what differs.
   */
  private signalCatalog(namespace: string, template?: KubeObject, deleted = false): void {
    let sees = (_k: KubeObject | undefined) => true;
    if (template) {
      const key = `${namespace}/${template.metadata.name}`;
      const now = visibilityOf(template.metadata.labels);
      const was = this.templateVisibility.get(key) ?? now;
      if (deleted) this.templateVisibility.delete(key);
      else this.templateVisibility.set(key, now);
      sees = (k) => [now, was].some((needs) => !missingLabel(needs, k && kymaVisibility(k)));
    }
    for (const secret of this.secrets.flatMap((i) => i.list())) {
      const kyma = secret.metadata.labels?.[LABELS.kymaName];
      if (secret.metadata.namespace !== namespace || !kyma) continue;
      // Only the Kyma whose runtime Kyma it is syncs that runtime's catalog.
      const who = `${namespace}/${kyma}`;
      const target = this.kymaTarget.get(who);
      if (target === undefined || this.runtimeOwners.get(target) !== who) continue;
      if (sees(this.kymas.get(namespace, kyma))) this.signalCatalogTo(who);
    }
  }

  /** Signals catalogChanged to the workflow of Kyma `ns/name`. */
  private signalCatalogTo(who: string): void {
    const [namespace, name] = who.split('/') as [string, string];
    const workflowId = kymaWorkflowId(namespace, name);
    this.signaller.submit(`${workflowId}#catalogChanged`, () =>
      this.o.temporal.workflow.getHandle(workflowId).signal(catalogChanged),
    );
  }

  /**
   * Tells the Kyma's workflow (`kymaId`), which runs its modules, what the bridge saw for them
   * (`ModuleNews`, kept per module under the module's id `kyma/<ns>/<name>/module/<module>`):
   * one signal for all its modules, what piles up while it is in flight in the next.
   */
  private tellModules(kymaId: string): void {
    this.signaller.submit(
      `${kymaId}#modulesChanged`,
      async () => {
        const changes = this.news.take(kymaId);
        if (changes.length) await this.o.temporal.workflow.getHandle(kymaId).signal(modulesChanged, changes);
      },
      this.o.newsWindowMs ?? NEWS_WINDOW_MS,
    );
  }

  /** Pokes every module workflow on a target cluster that stopped or started answering. */
  private onHealth(t: TargetWatches, healthy: boolean, err?: unknown): void {
    this.o.log?.(
      `target cluster ${t.client.server} ${healthy ? 'answers again' : `does not answer: ${(err as Error).message}`}; poking ${t.modules.size} module workflows`,
    );
    for (const workflowId of t.modules) {
      // Keyed apart: a view sent meanwhile must not replace this call to read everything again.
      this.tellModules(this.news.everything(workflowId));
    }
    // Their Kymas read their runtime again: its condition tells the outage, and once it answers, its status is written again.
    this.pokeKymasOn(t);
  }

  /** The kubeconfig Secret of Kyma `namespace/kyma`, as the watch holds it. */
  private secretFor(namespace: string, kyma: string): KubeObject | undefined {
    return this.secrets
      .flatMap((i) => i.list())
      .find((s) => s.metadata.namespace === namespace && s.metadata.labels?.[LABELS.kymaName] === kyma);
  }

  private targetFor(namespace: string, kyma: string): Promise<TargetWatches> {
    const secret = this.secretFor(namespace, kyma);
    // Kymas whose Secrets hold the same kubeconfig share the watches on that cluster.
    const key = secret ? kubeconfigKey(secret) : CONTROL_PLANE;
    this.kymaTarget.set(`${namespace}/${kyma}`, key);
    let t = this.targets.get(key);
    if (!t) {
      t = (async () => {
        const options = {
          ...(this.o.targetRequestTimeoutMs ? { requestTimeoutMs: this.o.targetRequestTimeoutMs } : {}),
          ...(this.o.allowKubeconfigExec === false ? { allowExec: false } : {}),
        };
        const client = secret ? await clientFromSecret(secret, options) : this.o.kcp;
        const namespace =
          secret && this.o.targetWatchScope === 'context-namespace' ? client.contextNamespace() : undefined;
        const w = new TargetWatches(client, key, Boolean(secret), (type, o, tw) => this.onTargetObject(type, o, tw), {
          relistMs: this.o.relistMs,
          ...(namespace ? { namespace } : {}),
        });
        if (secret) w.startProbe(this.o.probeMs ?? PROBE_MS, (healthy, err) => this.onHealth(w, healthy, err));
        this.watching.add(key);
        return w;
      })();
      const created = t;
      t.catch(() => this.targets.get(key) === created && this.targets.delete(key));
      this.targets.set(key, t);
    }
    return t;
  }

  private onTargetObject(type: InformerEventType, o: KubeObject, t: TargetWatches): void {
    const owner = parseOwnedBy(o.metadata.annotations?.[OWNED_BY_ANNOTATION]);
    if (!t.changed(type, o, owner !== undefined)) return;
    // Watches on a cluster that Kymas of other shards use too see their objects: those are their bridges' to tell.
    if (owner && !this.owns(owner.namespace, owner.kyma)) return;
    const ids = owner
      ? [moduleWorkflowId(owner.namespace, owner.kyma, owner.module)]
      : [...(t.subscribers.get(`${o.apiVersion}/${o.kind}`) ?? [])];
    // The object as seen, so that the readiness check need not read it again. Views that pile
    // up while a signal is in flight go out together in the next one, the newest of each object.
    const observed = t.observed(type, o);
    for (const workflowId of ids) this.tellModules(this.news.view(workflowId, observed));
  }
}
