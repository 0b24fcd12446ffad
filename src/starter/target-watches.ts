// The watches on one target cluster (one per kubeconfig, shared by the Kymas whose Secrets hold
// it; ./target-pool.ts keeps them): manager workloads and module CRs, whose readiness changes
// are news to modules; the runtime Kyma, whose owner and spec are news to Kyma
// workflows; and a probe that tells when the cluster stops or starts answering.
import { MANAGED_BY } from '../api/identity';
import { CONTROL_PLANE_KYMA_ANNOTATION, RUNTIME_KYMA } from '../api/runtime';
import { API_VERSION, LABELS, type KubeObject } from '../api/shared';
import type { ObservedObject } from '../contract/readiness';
import type { KymaRef, ModuleRef } from '../contract/kyma';
import { idOf, objectKey } from '../api/object-id';
import { isWorkload } from '../decisions/workload';
import { readinessView } from '../decisions/readiness';
import { Informer, type InformerEventType } from '../k8s/informer';
import type { KubeClient } from '../k8s/rest-client';
import {
  crLetsWait,
  crNewsCanWait,
  moduleProcessing,
  readinessFingerprint,
  withoutStatus,
  workloadNewsCanWait,
  type CrState,
} from './readiness-change';

const MANAGED = `${LABELS.managedBy}=${MANAGED_BY}`;
/** The key of the runtime Kyma's watch among a target cluster's informers. */
const RUNTIME_WATCH = 'runtime-kyma';

/**
 * The watches on one target cluster: manager workloads (ours, by label) and every object of
 * each module CR kind (the user's too: those block a module's removal).
 */
export class TargetWatches {
  private readonly informers = new Map<string, Informer>();
  /** Modules per CR kind (by module key), for objects that carry no owner annotation. */
  readonly subscribers = new Map<string, Map<string, ModuleRef>>();
  /** Per CR kind, the status paths a customStateCheck of some module reads (besides state and message). */
  private readonly statePaths = new Map<string, Set<string>>();
  /** Every module whose Manifest targets this cluster (by module key). */
  readonly modules = new Map<string, ModuleRef>();
  /** Each module's state as its Manifest's status last showed it (by module key; absent: none yet). */
  private readonly written = new Map<string, string>();
  /** Whether the last probe got an answer. */
  healthy = true;
  private probe?: NodeJS.Timeout;

  /** Readiness fingerprint per object uid, as last seen. */
  private readonly seen = new Map<string, string>();

  /** The `.status.state` of each module's own CRs as last seen, by module key, then CR kind (null: none). */
  private readonly crStates = new Map<string, Map<string, string | null>>();
  /** The kinds (`apiVersion/kind`) whose watch has listed once. */
  private readonly listed = new Set<string>();

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
    private readonly o: {
      relistMs?: number;
      onError?: (e: unknown) => void;
      namespace?: string;
      /** A CR kind's watch listed for the first time: the modules that follow it whose manager's news need wait no longer. */
      onListed?: (unheld: ModuleRef[]) => void;
    } = {},
  ) {
    this.watch('apps/v1', 'Deployment', MANAGED);
    this.watch('apps/v1', 'StatefulSet', MANAGED);
  }

  /**
   * Watches the runtime Kyma (kyma-system/default); `onChange` hears of a change of its spec,
   * labels or owner, or of its deletion (its status, which the worker writes, is no news).
   * Until the worker has made the Kyma CRD there, the watch waits in its backoff.
   */
  watchRuntimeKyma(onChange: (owner: string | undefined, listed: boolean) => void): void {
    if (this.informers.has(RUNTIME_WATCH)) return;
    const informer = new Informer(this.client, {
      apiVersion: API_VERSION,
      kind: 'Kyma',
      namespace: RUNTIME_KYMA.namespace,
      fieldSelector: `metadata.name=${RUNTIME_KYMA.name}`,
      relistMs: this.o.relistMs,
      onEvent: (type, k, listed) => {
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
        onChange(type === 'DELETED' ? undefined : meta.annotations?.[CONTROL_PLANE_KYMA_ANNOTATION], listed);
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

  /** Drops a Kyma's modules (its Secret now points elsewhere); whether any are left. */
  forgetKyma(kyma: KymaRef): boolean {
    for (const modules of [this.modules, ...this.subscribers.values()])
      for (const [key, m] of modules)
        if (m.kyma.namespace === kyma.namespace && m.kyma.name === kyma.name) {
          modules.delete(key);
          this.crStates.delete(key);
          this.written.delete(key);
        }
    return this.modules.size > 0;
  }

  /**
   * Whether an event is news to a module: a deletion always is; a fresh object of
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

  /**
   * Whether news of `o`, an object of module `moduleKey`'s own, can wait for the module's next
   * news: only while its Manifest shows it Processing (`moduleProcessing`), then as
   * `workloadNewsCanWait` and `crNewsCanWait` say; of a CR, notes what it reports.
   */
  canWait(type: InformerEventType, o: KubeObject, moduleKey: string): boolean {
    const processing = moduleProcessing(this.written.get(moduleKey));
    if (isWorkload(o.kind)) return processing && workloadNewsCanWait(type, o, this.crState(moduleKey));
    // Noted whether or not the module follows this kind yet: its CR may come before its Manifest.
    const kind = `${o.apiVersion}/${o.kind}`;
    const status = (o as { status?: { state?: unknown } }).status?.state;
    const state = typeof status === 'string' ? status : null;
    const states = this.crStates.get(moduleKey) ?? new Map<string, string | null>();
    if (type === 'DELETED') states.delete(kind);
    else states.set(kind, state);
    if (states.size) this.crStates.set(moduleKey, states);
    else this.crStates.delete(moduleKey);
    return processing && this.decidesByState(moduleKey, kind) && crNewsCanWait(type, o, state);
  }

  /** Module `moduleKey` (`m`) has its Manifest here (`on`), which shows `state`; or no longer. */
  manifest(moduleKey: string, m: ModuleRef, on: boolean, state: string | undefined): void {
    if (on) this.modules.set(moduleKey, m);
    else this.modules.delete(moduleKey);
    if (on && state) this.written.set(moduleKey, state);
    else this.written.delete(moduleKey);
  }

  /**
   * Whether objects of `kind` may be module `moduleKey`'s default CR, read by its state: the kind
   * it follows, without a customStateCheck; any kind while its Manifest is not seen.
   */
  private decidesByState(moduleKey: string, kind: string): boolean {
    if (!this.modules.has(moduleKey)) return true;
    return Boolean(this.subscribers.get(kind)?.has(moduleKey)) && !this.statePaths.get(kind)?.size;
  }

  /** Whether news of module `moduleKey`'s manager can wait now, for its state as written and what its CR reports (./readiness-change.ts). */
  letsWait(moduleKey: string): boolean {
    return moduleProcessing(this.written.get(moduleKey)) && crLetsWait(this.crState(moduleKey));
  }

  /**
   * What module `moduleKey`'s default CR reports, if its readiness follows the CR's state
   * (./readiness-change.ts). A module whose Manifest is not seen yet counts as one whose CR
   * reports nothing yet: its first install is under way (its workflow writes the Manifest once
   * that returns), and the install's own check reads the manager after it applied it; its news
   * waits for the Manifest (the bridge tells it then, unless its CR lets it wait on). So does one
   * whose CR kind's watch has not listed yet (the bridge tells it then, `onListed`). Once it has,
   * a module none of whose CRs it saw (none made, or one made before our install: it carries no
   * owner annotation) has nothing that lets the news wait.
   */
  private crState(moduleKey: string): CrState {
    if (!this.modules.has(moduleKey)) return null;
    for (const [kind, modules] of this.subscribers) {
      if (!modules.has(moduleKey)) continue;
      if (this.statePaths.get(kind)?.size) return undefined;
      const state = this.crStates.get(moduleKey)?.get(kind);
      if (state !== undefined) return state;
      return this.listed.has(kind) ? undefined : null;
    }
    return undefined;
  }

  /** The object as a signal carries it: what readiness reads of it, or null when it was deleted. */
  observed(type: InformerEventType, o: KubeObject): ObservedObject {
    return {
      key: objectKey(idOf(o)),
      resourceVersion: o.metadata.resourceVersion ?? '',
      view: type === 'DELETED' ? null : readinessView(o, this.statePaths.get(`${o.apiVersion}/${o.kind}`)),
    };
  }

  /** Module `m` (its key: `moduleKey`) follows the objects of CR kind `apiVersion/kind` (`on`), or no longer. */
  subscribe(
    apiVersion: string,
    kind: string,
    moduleKey: string,
    m: ModuleRef,
    on: boolean,
    statePaths: string[] = [],
  ): void {
    const key = `${apiVersion}/${kind}`;
    const modules = this.subscribers.get(key) ?? new Map<string, ModuleRef>();
    if (on) modules.set(moduleKey, m);
    else {
      modules.delete(moduleKey);
      this.crStates.delete(moduleKey);
    }
    this.subscribers.set(key, modules);
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
    void informer.start().then(() => {
      this.listed.add(key);
      const unheld = [...(this.subscribers.get(key) ?? [])].filter(([k]) => !this.letsWait(k)).map(([, m]) => m);
      if (unheld.length) this.o.onListed?.(unheld);
    });
  }

  stop(): void {
    clearTimeout(this.probe);
    this.probe = undefined;
    for (const i of this.informers.values()) i.stop();
    if (this.owned) this.client.close();
  }
}
