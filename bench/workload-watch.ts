// Promotion where it happens: watches Deployments in every target cluster and notes when each
// Kyma's namespace first holds the promoted module's manager with the new version's image.
import type { KubeObject } from '../src/api/shared';
import { Informer } from '../src/k8s/informer';
import type { KubeClient } from '../src/k8s/rest-client';

interface Deployment extends KubeObject {
  spec?: { template?: { spec?: { containers?: { image?: string }[] } } };
}

export class WorkloadWatch {
  /** Namespace (= Kyma, through the default namespace `{kyma}`) → when the new image appeared. */
  readonly seen = new Map<string, number>();
  private readonly informers: Informer[];
  private waiter?: () => void;

  constructor(
    targets: KubeClient[],
    private readonly deployment: string,
    private readonly imageSuffix: string,
    private readonly namespaces: Set<string>,
  ) {
    this.informers = targets.map(
      (client) =>
        new Informer(client, {
          apiVersion: 'apps/v1',
          kind: 'Deployment',
          onEvent: (type, o) => type !== 'DELETED' && this.onDeployment(o),
        }),
    );
  }

  private onDeployment(d: Deployment): void {
    const ns = d.metadata.namespace ?? '';
    if (d.metadata.name !== this.deployment || !this.namespaces.has(ns) || this.seen.has(ns)) return;
    if (!d.spec?.template?.spec?.containers?.some((c) => c.image?.endsWith(this.imageSuffix))) return;
    this.seen.set(ns, Date.now());
    if (this.seen.size === this.namespaces.size) this.waiter?.();
  }

  async start(): Promise<void> {
    await Promise.all(this.informers.map((i) => i.start()));
  }

  /** Resolves once every namespace holds the new version. */
  all(): Promise<void> {
    return this.seen.size === this.namespaces.size ? Promise.resolve() : new Promise((r) => (this.waiter = r));
  }

  stop(): void {
    for (const i of this.informers) i.stop();
  }
}
