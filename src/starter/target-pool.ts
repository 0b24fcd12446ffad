// The target clusters' watches (./target-watches.ts), one set per kubeconfig: Kymas whose Secrets
// hold the same kubeconfig share them (a Kyma without a Secret uses the control plane's). Made
// on first use, a remote cluster's probed; stopped once no Kyma uses them. Per cluster it keeps
// the control-plane Kyma its runtime Kyma names as owner, as the watch saw it.
import type { KubeObject } from '../api/shared';
import type { ModuleRef } from '../contract/kyma';
import type { TargetWatchScope } from '../infra/config';
import type { InformerEventType } from '../k8s/informer';
import type { KubeClient } from '../k8s/rest-client';
import { clientFromSecret, kubeconfigKey } from '../k8s/target-cluster';
import { TargetWatches } from './target-watches';

const CONTROL_PLANE = 'control-plane';
const PROBE_MS = 10_000;

export interface TargetPoolOptions {
  kcp: KubeClient;
  relistMs?: number;
  /** How often a remote target cluster is probed (and how long a probe may take), 10 s by default. */
  probeMs?: number;
  /** How long a request to a target cluster may go without an answer (watches excepted). */
  targetRequestTimeoutMs?: number;
  /** Whether kubeconfig Secrets may run commands for their credentials (default: yes). */
  allowKubeconfigExec?: boolean;
  /** What a target cluster's watches of managed objects and module CRs see: the cluster (default), or its kubeconfig context's namespace. */
  targetWatchScope?: TargetWatchScope;
  /** An event of a watched object in a target cluster. */
  onObject: (type: InformerEventType, o: KubeObject, t: TargetWatches) => void;
  /** A CR kind's watch on a target cluster listed for the first time: the modules whose manager's news need wait no longer. */
  onListed?: (unheld: ModuleRef[]) => void;
  /** A remote target cluster stopped (`healthy` false) or started answering. */
  onHealth: (t: TargetWatches, healthy: boolean, err?: unknown) => void;
}

export class TargetPool {
  private readonly targets = new Map<string, Promise<TargetWatches>>();
  /** The kubeconfig keys whose watches run (their client made). */
  private readonly watching = new Set<string>();
  /** Which watches each Kyma (`<namespace>/<name>`) uses, by kubeconfig key. */
  private readonly kymaTarget = new Map<string, string>();
  /** The control-plane Kyma (`ns/name`) each runtime's Kyma belongs to, by kubeconfig key, as its watch saw it. */
  private readonly runtimeOwners = new Map<string, string>();

  constructor(private readonly o: TargetPoolOptions) {}

  /** The watches Kyma `namespace/kyma` uses, those of its kubeconfig Secret's cluster (none: the control plane), made unless they run. */
  for(namespace: string, kyma: string, secret: KubeObject | undefined): Promise<TargetWatches> {
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
        const w = new TargetWatches(client, key, Boolean(secret), this.o.onObject, {
          relistMs: this.o.relistMs,
          onListed: this.o.onListed,
          ...(namespace ? { namespace } : {}),
        });
        if (secret) w.startProbe(this.o.probeMs ?? PROBE_MS, (healthy, err) => this.o.onHealth(w, healthy, err));
        this.watching.add(key);
        return w;
      })();
      const created = t;
      t.catch(() => this.targets.get(key) === created && this.targets.delete(key));
      this.targets.set(key, t);
    }
    return t;
  }

  /** Kyma `namespace/kyma` no longer uses the watches it used: they stop unless another Kyma uses them. */
  drop(namespace: string, kyma: string): void {
    const who = `${namespace}/${kyma}`;
    const key = this.kymaTarget.get(who);
    if (key === undefined) return;
    this.kymaTarget.delete(who);
    const old = this.targets.get(key);
    void old?.then(
      (t) => {
        if (t.forgetKyma({ namespace, name: kyma }) || [...this.kymaTarget.values()].includes(key)) return;
        t.stop();
        this.runtimeOwners.delete(key);
        if (this.targets.get(key) !== old) return;
        this.targets.delete(key);
        this.watching.delete(key);
      },
      () => undefined,
    );
  }

  /** The kubeconfig key of the watches Kyma `who` (`ns/name`) uses. */
  keyOf(who: string): string | undefined {
    return this.kymaTarget.get(who);
  }

  /** Every Kyma (`ns/name`) that uses watches. */
  kymas(): string[] {
    return [...this.kymaTarget.keys()];
  }

  /** The Kymas (`ns/name`) that use the watches of kubeconfig key `key`. */
  kymasOn(key: string): string[] {
    return [...this.kymaTarget].filter(([, k]) => k === key).map(([who]) => who);
  }

  /** The control-plane Kyma (`ns/name`) that owns the runtime Kyma of cluster `key`, as its watch saw it. */
  runtimeOwner(key: string): string | undefined {
    return this.runtimeOwners.get(key);
  }

  /** Records the owner of the runtime Kyma of cluster `key` (none: it has none, or no runtime Kyma); returns the one before. */
  setRuntimeOwner(key: string, owner: string | undefined): string | undefined {
    const before = this.runtimeOwners.get(key);
    if (owner) this.runtimeOwners.set(key, owner);
    else this.runtimeOwners.delete(key);
    return before;
  }

  /** Target clusters watched per shard (distinct kubeconfigs whose watches run), for `shards`, by `shardOf` of each Kyma. */
  clustersByShard(shards: number[], shardOf: (namespace: string, name: string) => number): Map<number, number> {
    const keys = new Map<number, Set<string>>(shards.map((s) => [s, new Set<string>()]));
    for (const [who, key] of this.kymaTarget) {
      if (!this.watching.has(key)) continue;
      const [ns, name] = who.split('/') as [string, string];
      keys.get(shardOf(ns, name))?.add(key);
    }
    return new Map([...keys].map(([s, k]) => [s, k.size]));
  }

  /** Stops every watch. */
  stop(): void {
    for (const t of this.targets.values())
      void t.then(
        (w) => w.stop(),
        () => undefined,
      );
  }
}
