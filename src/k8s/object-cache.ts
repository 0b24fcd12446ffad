// The worker's view of the control plane: one informer per kind that activities read, so that
// a read costs no request. Presence is trusted, absence is verified: an object the cache does
// not hold (yet) is read from the API server. A caller that knows of a newer version (a
// signal carries the event's resourceVersion) waits until the cache has seen it, or reads from
// the API server when it does not catch up in time.
import type { KubeObject } from '../api/shared';
import { Informer } from './informer';
import type { KubeClient } from './rest-client';

export interface CachedKindOptions {
  apiVersion: string;
  kind: string;
  labelSelector?: string;
}

/** How long a read waits for the cache to catch up with a version it was told of. */
const CATCH_UP_MS = 3_000;

export class ObjectCache {
  private readonly informers = new Map<string, { informer: Informer; apiVersion: string }>();

  constructor(
    private readonly client: KubeClient,
    kinds: CachedKindOptions[],
    relistMs?: number,
    onError?: (err: unknown) => void,
  ) {
    for (const k of kinds) {
      const informer = new Informer(client, {
        apiVersion: k.apiVersion,
        kind: k.kind,
        labelSelector: k.labelSelector,
        relistMs,
        onEvent: () => undefined,
        onError,
      });
      this.informers.set(k.kind, { informer, apiVersion: k.apiVersion });
    }
  }

  /** Lists every kind once; resolves when all are in the cache. */
  async start(): Promise<void> {
    await Promise.all([...this.informers.values()].map(({ informer }) => informer.start()));
  }

  stop(): void {
    for (const { informer } of this.informers.values()) informer.stop();
  }

  /** The cached object, without asking the API server (undefined: not held). */
  peek<T extends KubeObject>(apiVersion: string, kind: string, name: string, namespace?: string): T | undefined {
    const entry = this.informers.get(kind);
    if (entry?.apiVersion !== apiVersion) throw new Error(`${apiVersion} ${kind} is not cached`);
    return entry.informer.get(namespace, name) as T | undefined;
  }

  /** The cached objects of a kind in a namespace, once the cache has seen `atLeast` (a resourceVersion) or waited for it. */
  async list<T extends KubeObject>(
    apiVersion: string,
    kind: string,
    namespace: string,
    atLeast?: string,
  ): Promise<T[]> {
    const entry = this.informers.get(kind);
    if (entry?.apiVersion !== apiVersion) throw new Error(`${apiVersion} ${kind} is not cached`);
    if (atLeast) await entry.informer.caughtUp(atLeast, CATCH_UP_MS);
    return entry.informer.list().filter((o) => o.metadata.namespace === namespace) as T[];
  }

  /**
   * The object: from the cache when it holds it (and has seen `atLeast`, a resourceVersion of
   * this kind), else from the API server.
   */
  async get<T extends KubeObject>(
    apiVersion: string,
    kind: string,
    name: string,
    namespace?: string,
    atLeast?: string,
  ): Promise<T | undefined> {
    const entry = this.informers.get(kind);
    const current =
      entry?.apiVersion === apiVersion && (!atLeast || (await entry.informer.caughtUp(atLeast, CATCH_UP_MS)));
    return await this.getIf<T>(apiVersion, kind, name, namespace, () => current);
  }

  /**
   * The object as of `atLeast` (a resourceVersion of this kind): once the cache has seen that
   * version, what it holds, absence included (nothing told of by then means none); from the API
   * server only when the cache does not catch up in time.
   */
  async getAt<T extends KubeObject>(
    apiVersion: string,
    kind: string,
    name: string,
    namespace: string | undefined,
    atLeast: string,
  ): Promise<T | undefined> {
    const entry = this.informers.get(kind);
    if (entry?.apiVersion === apiVersion && (await entry.informer.caughtUp(atLeast, CATCH_UP_MS)))
      return entry.informer.get(namespace, name) as T | undefined;
    return await this.client.get<T>(apiVersion, kind, name, namespace);
  }

  /** The object: from the cache when it holds one that is `usable` (new enough, say), else from the API server. */
  async getIf<T extends KubeObject>(
    apiVersion: string,
    kind: string,
    name: string,
    namespace: string | undefined,
    usable: (cached: T) => boolean,
  ): Promise<T | undefined> {
    const entry = this.informers.get(kind);
    const hit = entry?.apiVersion === apiVersion ? (entry.informer.get(namespace, name) as T | undefined) : undefined;
    if (hit && usable(hit)) return hit;
    return await this.client.get<T>(apiVersion, kind, name, namespace);
  }
}
