// List+watch with a local cache, as controllers do: an initial list, then a watch from its
// resourceVersion; the server ends each watch after `watchTimeoutSeconds`, and should it not
// (a connection that died silently), we end it ourselves a little later; we resume from the
// last seen version. A 410 Gone, an error, the periodic relist or resync() lists again and
// emits only the differences. Lists are served from the API server's watch cache (not older
// than what this informer has seen), in pages, never as full reads from etcd.
import { resourceVersionReached, type KubeObject } from '../api/shared';
import { isNotFound, KubeApiError } from './request-errors';
import { type KubeClient, type WatchEvent } from './rest-client';

export type InformerEventType = 'ADDED' | 'MODIFIED' | 'DELETED';

export interface InformerOptions {
  apiVersion: string;
  kind: string;
  namespace?: string;
  labelSelector?: string;
  /** e.g. `metadata.name=x`: watch one object. */
  fieldSelector?: string;
  /** Full relist period; catches anything a watch may have missed. */
  relistMs?: number;
  watchTimeoutSeconds?: number;
  /**
   * `listed`: the event was found by a list, and its object may have been made before this
   * informer watched (not a watch event, nor the first list of a kind that was not served when
   * the informer started: what that finds was made since).
   */
  onEvent(type: InformerEventType, obj: KubeObject, listed: boolean): void;
  onError?(err: unknown): void;
}

/** How long past its timeoutSeconds a watch may stay open before we end it. */
const WATCH_GRACE_S = 30;
/** Objects per page of a list. */
const PAGE = 500;

function key(o: KubeObject): string {
  return `${o.metadata.namespace ?? ''}/${o.metadata.name}`;
}

function rv(o: KubeObject): string | undefined {
  return o.metadata.resourceVersion;
}

/** What the cache keeps of an object: all but the field managers, which nobody here reads and which can outweigh the rest. */
function slim(o: KubeObject): KubeObject {
  delete o.metadata.managedFields;
  return o;
}

/**
 * What a fresh list means against the cache: objects new to it are ADDED, objects with another
 * resourceVersion MODIFIED, objects no longer listed DELETED. Updates the cache to the list.
 */
export function relistDiff(
  cache: Map<string, KubeObject>,
  items: KubeObject[],
): { type: InformerEventType; obj: KubeObject }[] {
  const events: { type: InformerEventType; obj: KubeObject }[] = [];
  const seen = new Set<string>();
  for (const item of items) {
    const k = key(item);
    seen.add(k);
    const old = cache.get(k);
    cache.set(k, item);
    if (!old) events.push({ type: 'ADDED', obj: item });
    else if (rv(old) !== rv(item)) events.push({ type: 'MODIFIED', obj: item });
  }
  for (const [k, old] of cache) {
    if (seen.has(k)) continue;
    cache.delete(k);
    events.push({ type: 'DELETED', obj: old });
  }
  return events;
}

export class Informer {
  private readonly cache = new Map<string, KubeObject>();
  private readonly abort = new AbortController();
  private resourceVersion = '';
  private synced!: Promise<void>;
  private needList = true;
  /** Whether a list went through; whether the kind was not served before the first did. */
  private listedOnce = false;
  private servedLate = false;
  /** Ends the current watch only (resync), not the informer. */
  private watchAbort?: AbortController;
  /** Callers of caughtUp() waiting for a version. */
  private readonly waiters = new Set<{ version: string; done: (ok: boolean) => void }>();

  constructor(
    private readonly client: KubeClient,
    private readonly opts: InformerOptions,
  ) {}

  /** Starts listing and watching; resolves once the first list has been delivered. */
  start(): Promise<void> {
    let markSynced!: () => void;
    this.synced = new Promise((r) => (markSynced = r));
    void this.run(markSynced);
    return this.synced;
  }

  stop(): void {
    this.abort.abort();
    for (const w of this.waiters) w.done(false);
  }

  /** Drops the current watch and lists again (the server was unreachable): the cache stays, so what went meanwhile comes as DELETED. */
  resync(): void {
    this.needList = true;
    this.watchAbort?.abort();
  }

  list(): KubeObject[] {
    return [...this.cache.values()];
  }

  /** The cached object, if any. */
  get(namespace: string | undefined, name: string): KubeObject | undefined {
    return this.cache.get(`${namespace ?? ''}/${name}`);
  }

  /**
   * Resolves true once this informer has seen `version` (an event of its kind at that
   * resourceVersion, or a later one), false after `timeoutMs` or if versions cannot be compared.
   */
  caughtUp(version: string, timeoutMs: number): Promise<boolean> {
    if (resourceVersionReached(this.resourceVersion, version)) return Promise.resolve(true);
    if (!/^\d+$/.test(version)) return Promise.resolve(false);
    return new Promise((resolve) => {
      const waiter = {
        version,
        done: (ok: boolean) => {
          clearTimeout(timer);
          this.waiters.delete(waiter);
          resolve(ok);
        },
      };
      const timer = setTimeout(() => waiter.done(false), timeoutMs);
      this.waiters.add(waiter);
    });
  }

  private advance(version: string): void {
    this.resourceVersion = version;
    for (const w of this.waiters) if (resourceVersionReached(version, w.version)) w.done(true);
  }

  private async relist(): Promise<void> {
    const { items, resourceVersion } = await this.client.list(this.opts.apiVersion, this.opts.kind, {
      namespace: this.opts.namespace,
      labelSelector: this.opts.labelSelector,
      fieldSelector: this.opts.fieldSelector,
      // From the watch cache, no older than what was seen already.
      resourceVersion: this.resourceVersion || '0',
      resourceVersionMatch: 'NotOlderThan',
      limit: PAGE,
    });
    const listed = this.listedOnce || !this.servedLate;
    this.listedOnce = true;
    for (const { type, obj } of relistDiff(this.cache, items.map(slim))) this.opts.onEvent(type, obj, listed);
    this.advance(resourceVersion);
  }

  private handle(e: WatchEvent): 'relist' | undefined {
    if (e.type === 'ERROR') return 'relist';
    const obj = e.object;
    if (e.type === 'BOOKMARK') {
      if (rv(obj)) this.advance(rv(obj)!);
      return undefined;
    }
    obj.apiVersion = this.opts.apiVersion;
    obj.kind = this.opts.kind;
    slim(obj);
    if (e.type === 'DELETED') this.cache.delete(key(obj));
    else this.cache.set(key(obj), obj);
    // The cache holds the object before a waiter for its version is told.
    if (rv(obj)) this.advance(rv(obj)!);
    this.opts.onEvent(e.type, obj, false);
    return undefined;
  }

  private async run(markSynced: () => void): Promise<void> {
    const signal = this.abort.signal;
    const relistMs = this.opts.relistMs ?? 5 * 60_000;
    let backoff = 250;
    let lastList = 0;
    while (!signal.aborted) {
      try {
        if (this.needList || Date.now() - lastList > relistMs) {
          this.needList = false;
          await this.relist();
          lastList = Date.now();
          markSynced();
        }
        const path = this.opts.namespace
          ? await this.client.path(this.opts.apiVersion, this.opts.kind, this.opts.namespace)
          : await this.client.clusterWidePath(this.opts.apiVersion, this.opts.kind);
        const timeoutSeconds = Math.min(this.opts.watchTimeoutSeconds ?? 300, Math.ceil(relistMs / 1000));
        const query: Record<string, string> = {
          resourceVersion: this.resourceVersion,
          timeoutSeconds: String(timeoutSeconds),
        };
        if (this.opts.labelSelector) query.labelSelector = this.opts.labelSelector;
        if (this.opts.fieldSelector) query.fieldSelector = this.opts.fieldSelector;
        const watch = (this.watchAbort = new AbortController());
        const end = () => watch.abort();
        signal.addEventListener('abort', end, { once: true });
        const overdue = setTimeout(end, (timeoutSeconds + WATCH_GRACE_S) * 1000);
        try {
          await this.client.watch(
            path,
            query,
            (e) => {
              if (this.handle(e) === 'relist') this.needList = true;
            },
            watch.signal,
          );
        } finally {
          clearTimeout(overdue);
          signal.removeEventListener('abort', end);
        }
        backoff = 250;
      } catch (err) {
        if (signal.aborted) return;
        this.needList = true;
        if (!this.listedOnce && isNotFound(err)) this.servedLate = true;
        if (!(err instanceof KubeApiError && err.status === 410)) this.opts.onError?.(err);
        await new Promise((r) => setTimeout(r, backoff));
        backoff = Math.min(backoff * 2, 10_000);
      }
    }
  }
}
