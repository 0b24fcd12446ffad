// The finalizer of a mandatory ModuleReleaseMeta, the one object the bridge writes: while the
// module is mandatory, or a Manifest of it as a mandatory module is left in the namespace, the
// ModuleReleaseMeta keeps `operator.kyma-project.io/mandatory-module`, so that its deletion
// waits until every Kyma has removed the module (each Kyma workflow removes it once the
// ModuleReleaseMeta is being deleted; see src/activities/kyma.ts mandatoryModules).
import type { ModuleReleaseMeta } from '../api/modulereleasemeta';
import { API_VERSION, LABELS, MANDATORY_FINALIZER, type KubeObject } from '../api/shared';
import { KubeApiError } from '../k8s/request-errors';
import { type KubeClient } from '../k8s/rest-client';

/** Whether the ModuleReleaseMeta needs the finalizer, given how many mandatory Manifests of its module are left. */
export function wantsMandatoryFinalizer(
  meta: Pick<ModuleReleaseMeta, 'spec' | 'metadata'>,
  manifestsLeft: number,
): boolean {
  return (Boolean(meta.spec.mandatory?.version) && !meta.metadata.deletionTimestamp) || manifestsLeft > 0;
}

export class MandatoryFinalizer {
  /** Checks queued per ModuleReleaseMeta, run one after the other. */
  private readonly running = new Map<string, Promise<void>>();

  constructor(
    private readonly kcp: KubeClient,
    private readonly metas: () => KubeObject[],
    private readonly manifests: () => KubeObject[],
    private readonly log?: (msg: string) => void,
  ) {}

  /** Adds or drops the finalizer of the ModuleReleaseMeta `namespace/name` as the cache shows it now. */
  check(namespace: string, name: string): void {
    const key = `${namespace}/${name}`;
    const previous = this.running.get(key) ?? Promise.resolve();
    const next = previous
      .then(() => this.settle(namespace, name))
      .catch((err: unknown) => {
        // A conflict means a newer version is on its way: its event checks again.
        if (!(err instanceof KubeApiError && err.status === 409))
          this.log?.(`finalizer of ModuleReleaseMeta ${key}: ${(err as Error).message}`);
      });
    this.running.set(key, next);
    void next.finally(() => {
      if (this.running.get(key) === next) this.running.delete(key);
    });
  }

  /** Waits for the checks under way (tests, shutdown). */
  async idle(): Promise<void> {
    await Promise.all(this.running.values());
  }

  private async settle(namespace: string, name: string): Promise<void> {
    const meta = this.metas().find((m) => m.metadata.namespace === namespace && m.metadata.name === name) as
      (ModuleReleaseMeta & KubeObject) | undefined;
    if (!meta) return;
    const left = this.manifests().filter(
      (m) =>
        m.metadata.namespace === namespace &&
        m.metadata.labels?.[LABELS.moduleName] === name &&
        m.metadata.labels[LABELS.mandatoryModule] === 'true',
    ).length;
    const finalizers = meta.metadata.finalizers ?? [];
    const wanted = wantsMandatoryFinalizer(meta, left);
    if (finalizers.includes(MANDATORY_FINALIZER) === wanted) return;
    // A finalizer is never added to an object being deleted (the API server refuses it anyway).
    if (wanted && meta.metadata.deletionTimestamp) return;
    const next = wanted ? [...finalizers, MANDATORY_FINALIZER] : finalizers.filter((f) => f !== MANDATORY_FINALIZER);
    await this.kcp.mergePatch(API_VERSION, 'ModuleReleaseMeta', name, namespace, {
      metadata: { finalizers: next, resourceVersion: meta.metadata.resourceVersion },
    });
    this.log?.(
      `ModuleReleaseMeta ${namespace}/${name}: ${wanted ? 'added' : 'dropped'} finalizer ` +
        `${MANDATORY_FINALIZER}${wanted ? '' : ' (the module is removed from every Kyma)'}`,
    );
  }
}
