// The ground the runtime side of a remote Kyma stands on, per managed cluster: whether a
// client reaches the control-plane cluster itself (which gets no runtime side), and the
// kyma-system namespace and our CRDs, applied once per cluster and trusted for a while.
import { MANAGED_BY } from '../api/identity';
import { RUNTIME_CRDS, RUNTIME_KYMA } from '../api/runtime';
import { LABELS } from '../api/shared';
import { applyCrds, loadCrds, type Crd } from '../k8s/crds';
import { isNotFound } from '../k8s/request-errors';
import type { KubeClient } from '../k8s/rest-client';

/** How long CRDs applied to a runtime are trusted to be there. */
const CRDS_FRESH_MS = 10 * 60_000;
/**
 * How long a full sync, which applies them again, trusts them: an install's first full catalog
 * sync follows the runtime Kyma's sync, which applied them a moment before.
 */
const CRDS_JUST_APPLIED_MS = 30_000;

async function clusterId(client: KubeClient): Promise<string | undefined> {
  return (await client.get('v1', 'Namespace', 'kube-system'))?.metadata.uid;
}

export class RuntimeBootstrap {
  /** Per client: whether it reaches the control-plane cluster itself (the uid of kube-system tells). */
  private readonly selfCheck = new WeakMap<KubeClient, Promise<boolean>>();
  /** Per client: our CRDs' bootstrap there, under way (`at` unset) or done at `at`. */
  private readonly crdsApplied = new WeakMap<KubeClient, { at?: number; done: Promise<void> }>();
  private crds: Promise<Crd[]> | undefined;

  constructor(private readonly kcp: KubeClient) {}

  isControlPlane(client: KubeClient): Promise<boolean> {
    if (client === this.kcp) return Promise.resolve(true);
    let p = this.selfCheck.get(client);
    if (!p) {
      p = Promise.all([clusterId(this.kcp), clusterId(client)]).then(([a, b]) => a !== undefined && a === b);
      p.catch(() => this.selfCheck.delete(client));
      this.selfCheck.set(client, p);
    }
    return p;
  }

  /**
   * The kyma-system namespace and our CRDs, Established. A CRD we create is labelled ours (the
   * clean-up may remove it); one the runtime had before stays the runtime's (kept at our version,
   * never removed). Applied once per ten minutes; `fresh` (a full sync): again, unless applied
   * within the last 30 s.
   */
  async bootstrap(client: KubeClient, fresh = false): Promise<void> {
    const last = this.crdsApplied.get(client);
    // One bootstrap per cluster at a time: the Kymas that share it wait for the one under way.
    const trusted = fresh ? CRDS_JUST_APPLIED_MS : CRDS_FRESH_MS;
    if (last && (last.at === undefined || Date.now() - last.at < trusted)) return await last.done;
    const entry: { at?: number; done: Promise<void> } = { done: this.applyRuntimeCrds(client) };
    this.crdsApplied.set(client, entry);
    try {
      await entry.done;
      entry.at = Date.now();
    } catch (err) {
      if (this.crdsApplied.get(client) === entry) this.crdsApplied.delete(client);
      throw err;
    }
  }

  /** Forgets the bootstrap in `client`'s cluster: the next one applies it again. */
  forget(client: KubeClient): void {
    this.crdsApplied.delete(client);
  }

  /**
   * Runs `run`; when the runtime answers 404 (our namespace or CRDs went: a clean-up by another
   * worker, the runtime's users), forgets the bootstrap and runs it once more (`again`).
   */
  async rebootstrappedOnce<T>(client: KubeClient, run: (again: boolean) => Promise<T>): Promise<T> {
    try {
      return await run(false);
    } catch (err) {
      if (!isNotFound(err)) throw err;
      this.forget(client);
      return await run(true);
    }
  }

  private async applyRuntimeCrds(client: KubeClient): Promise<void> {
    await client.apply({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: RUNTIME_KYMA.namespace } });
    this.crds ??= loadCrds().then((all) =>
      all.filter((c) => (RUNTIME_CRDS as readonly string[]).includes(c.metadata.name)),
    );
    this.crds.catch(() => (this.crds = undefined));
    const wanted = await Promise.all(
      (await this.crds).map(async (crd) => {
        const live = await client.get<Crd>(crd.apiVersion, crd.kind, crd.metadata.name);
        const ours = !live || live.metadata.labels?.[LABELS.managedBy] === MANAGED_BY;
        return ours
          ? {
              ...crd,
              metadata: { ...crd.metadata, labels: { ...crd.metadata.labels, [LABELS.managedBy]: MANAGED_BY } },
            }
          : crd;
      }),
    );
    await applyCrds(client, wanted);
  }
}
