// A small Kubernetes REST client for objects of any kind, sent and received as plain JSON: the
// verbs (get, list, apply, create, patch, delete, watch). client-node's generic object API
// re-serialises known kinds through its typed models, which drops keys such as
// `x-kubernetes-validations`; this client never rewrites a body. Paths are found through API
// discovery (cached per group/version). Credentials come from the kubeconfig (credentials.ts),
// each request goes through the transport (transport.ts: deadline, stale-connection retry,
// request metrics), failures are typed (request-errors.ts).
import type http from 'node:http';
import type { KubeConfig } from '@kubernetes/client-node';
import { FIELD_MANAGER } from '../api/identity';
import type { KubeObject } from '../api/shared';
import { Credentials, type Auth } from './credentials';
import {
  ClusterUnreachableError,
  describeNetworkError,
  isNotFound,
  KubeApiError,
  refusal,
  type StatusDetails,
} from './request-errors';
import { Transport } from './transport';

export interface WatchEvent {
  type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';
  object: KubeObject & { code?: number };
}

interface ApiResource {
  name: string;
  kind: string;
  namespaced: boolean;
}

export interface KubeClientOptions {
  /** How long a request may go without an answer (watches excepted), 30 s by default. */
  requestTimeoutMs?: number;
  /** A fresh KubeConfig of the same source, for a reload after a 401. */
  reload?: () => KubeConfig;
  /** How long a credential plugin or provider may take, 30 s by default. */
  authTimeoutMs?: number;
  /** What the client's requests are counted as (`control-plane`, else `target`). */
  cluster?: string;
  /** Who its writes are by (server-side apply's and every write's field manager): this product's by default. */
  fieldManager?: string;
}

export interface ListOptions {
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
  /** Unset: the newest data, read from etcd; '0': any, from the watch cache; else see resourceVersionMatch. */
  resourceVersion?: string;
  resourceVersionMatch?: 'NotOlderThan' | 'Exact';
  limit?: number;
  continue?: string;
}

/** Calls `onEvent` per line of a watch's stream until the server ends it (resolves) or it fails (rejects; resolves when `signal` aborted it). */
function readEvents(
  res: http.IncomingMessage,
  server: string,
  onEvent: (e: WatchEvent) => void,
  signal: AbortSignal,
): Promise<void> {
  return new Promise((resolve, reject) => {
    let buf = '';
    res.setEncoding('utf8');
    res.on('data', (chunk: string) => {
      buf += chunk;
      let nl: number;
      while ((nl = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, nl).trim();
        buf = buf.slice(nl + 1);
        if (line) onEvent(JSON.parse(line) as WatchEvent);
      }
    });
    res.on('end', () => resolve());
    res.on('error', (err) =>
      signal.aborted ? resolve() : reject(new ClusterUnreachableError(server, describeNetworkError(err))),
    );
  });
}

/** How often a request the API server did not take in (429) is sent again. */
const TOO_MANY_RETRIES = 2;

/** How long to wait before sending a 429's request again: what the server asked for, at most a second. */
function retryAfterMs(text: string): number {
  let seconds = 1;
  try {
    seconds = (JSON.parse(text) as { details?: { retryAfterSeconds?: number } }).details?.retryAfterSeconds ?? 1;
  } catch {
    // not a Status: the default
  }
  return Math.min(Math.max(seconds, 0), 1) * 1000;
}

/** The body of an answer that streams, read to its end; rejects when the stream fails first. */
function readBody(res: http.IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    res.on('data', (c: Buffer) => chunks.push(c));
    res.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    res.on('error', reject);
  });
}

export class KubeClient {
  private readonly discovery = new Map<string, Promise<ApiResource[]>>();
  private readonly credentials: Credentials;
  private readonly transport: Transport;
  private readonly fieldManager: string;

  private constructor(
    readonly server: string,
    kc: KubeConfig,
    private readonly opts: KubeClientOptions,
  ) {
    this.transport = new Transport(server, opts.requestTimeoutMs ?? 30_000, opts.cluster ?? 'target');
    this.fieldManager = encodeURIComponent(opts.fieldManager ?? FIELD_MANAGER);
    this.credentials = new Credentials(server, kc, { reload: opts.reload, authTimeoutMs: opts.authTimeoutMs });
  }

  static async fromKubeConfig(kc: KubeConfig, opts: KubeClientOptions = {}): Promise<KubeClient> {
    const cluster = kc.getCurrentCluster();
    if (!cluster) throw new Error('the kubeconfig has no current cluster');
    const client = new KubeClient(cluster.server.replace(/\/$/, ''), kc, opts);
    await client.credentials.first();
    return client;
  }

  /** The namespace of the kubeconfig's current context, if it names one. */
  contextNamespace(): string | undefined {
    return this.credentials.contextNamespace();
  }

  /** Closes the kept-alive connections: the client is no longer used. */
  close(): void {
    this.credentials.close();
  }

  /** Whether the API server answers, within `timeoutMs`: resolves, or rejects as request() does. */
  async ping(timeoutMs: number): Promise<void> {
    const auth = await this.credentials.current();
    const { status } = await this.transport.exchange({
      method: 'GET',
      url: new URL(`${this.server}/version`),
      headers: { ...auth.headers, accept: 'application/json' },
      agent: auth.agent,
      timeoutMs,
    });
    if (status >= 400) throw refusal(status, 'Unknown', `GET /version: HTTP ${status}`, auth.cert);
  }

  async request<T>(method: string, path: string, body?: unknown, contentType = 'application/json'): Promise<T> {
    const url = new URL(this.server + path);
    const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
    const extra: Record<string, string> = { accept: 'application/json' };
    if (payload) {
      extra['content-type'] = contentType;
      extra['content-length'] = String(payload.length);
    }
    let auth = await this.credentials.current();
    const exchange = (a: Auth) =>
      this.transport.exchange({ method, url, headers: { ...a.headers, ...extra }, agent: a.agent, payload });
    let { status, text } = await exchange(auth);
    if (status === 401 && this.opts.reload) {
      auth = await this.credentials.reauthenticate(auth);
      ({ status, text } = await exchange(auth));
    }
    // Not taken in (the storage of a CRD just made is still initializing, say): sent again, as client-go does.
    for (let retry = 0; status === 429 && retry < TOO_MANY_RETRIES; retry++) {
      await new Promise((r) => setTimeout(r, retryAfterMs(text)));
      ({ status, text } = await exchange(auth));
    }
    if (status >= 400) throw this.refused(method, path, status, text, auth);
    return (text ? JSON.parse(text) : undefined) as T;
  }

  /** The error of an answer with a failing status. */
  private refused(method: string, path: string, status: number, text: string, auth: Auth): KubeApiError {
    // Errors are usually a JSON Status, but a path that is not served answers in plain text.
    let s: { message?: string; reason?: string; details?: StatusDetails } | undefined;
    try {
      s = JSON.parse(text) as typeof s;
    } catch {
      s = { message: `${method} ${path}: HTTP ${status} ${text.trim().slice(0, 200)}` };
      // The path itself is not served (a CRD went away): forget what discovery said.
      if (status === 404) this.discovery.clear();
    }
    return refusal(
      status,
      s?.reason ?? 'Unknown',
      s?.message ?? `${method} ${path}: HTTP ${status}`,
      auth.cert,
      s?.details,
    );
  }

  private resources(apiVersion: string): Promise<ApiResource[]> {
    let r = this.discovery.get(apiVersion);
    if (!r) {
      const base = apiVersion.includes('/') ? `/apis/${apiVersion}` : `/api/${apiVersion}`;
      r = this.request<{ resources: ApiResource[] }>('GET', base).then(
        (l) => l.resources.filter((x) => !x.name.includes('/')),
        (err: unknown) => {
          // Its failures say they were discovery's (a 403 there: the server lets the identity do nothing).
          throw err instanceof KubeApiError
            ? new KubeApiError(err.status, err.reason, err.message, err.details, true, err.clientCertificate)
            : err;
        },
      );
      // A failed lookup (for example a CRD not served yet) is not cached.
      r.catch(() => this.discovery.delete(apiVersion));
      this.discovery.set(apiVersion, r);
    }
    return r;
  }

  /** Whether a kind is namespaced, per discovery. */
  async isNamespaced(apiVersion: string, kind: string): Promise<boolean> {
    const p = await this.path(apiVersion, kind, 'x');
    return p.includes('/namespaces/x/');
  }

  /** The REST path of a kind (collection), or of one object when `name` is given. */
  async path(apiVersion: string, kind: string, namespace?: string, name?: string): Promise<string> {
    let resource = (await this.resources(apiVersion)).find((x) => x.kind === kind);
    if (!resource) {
      this.discovery.delete(apiVersion);
      resource = (await this.resources(apiVersion)).find((x) => x.kind === kind);
    }
    if (!resource)
      throw new KubeApiError(404, 'NotFound', `the API server does not serve kind ${kind} in ${apiVersion}`);
    const base = apiVersion.includes('/') ? `/apis/${apiVersion}` : `/api/${apiVersion}`;
    const ns = resource.namespaced ? `/namespaces/${encodeURIComponent(namespace ?? 'default')}` : '';
    return `${base}${ns}/${resource.name}${name ? `/${encodeURIComponent(name)}` : ''}`;
  }

  /** Server-side apply with force under this project's field manager. */
  async apply<T extends KubeObject>(obj: T, subresource = ''): Promise<T> {
    const p = await this.path(obj.apiVersion, obj.kind, obj.metadata.namespace, obj.metadata.name);
    const q = `?fieldManager=${this.fieldManager}&force=true`;
    return await this.request<T>(
      'PATCH',
      `${p}${subresource ? `/${subresource}` : ''}${q}`,
      obj,
      'application/apply-patch+yaml',
    );
  }

  /**
   * One page of a list. `resourceVersion` with `resourceVersionMatch: 'NotOlderThan'` (or '0')
   * lets the API server answer from its watch cache instead of a read from etcd; `limit` and
   * `continue` page through it.
   */
  async listPage<T extends KubeObject>(
    apiVersion: string,
    kind: string,
    opts: ListOptions = {},
  ): Promise<{ items: T[]; resourceVersion: string; continue?: string }> {
    const p = opts.namespace
      ? await this.path(apiVersion, kind, opts.namespace)
      : await this.clusterWidePath(apiVersion, kind);
    const params = new URLSearchParams();
    if (opts.labelSelector) params.set('labelSelector', opts.labelSelector);
    if (opts.fieldSelector) params.set('fieldSelector', opts.fieldSelector);
    if (opts.continue) params.set('continue', opts.continue);
    else if (opts.resourceVersion !== undefined) {
      params.set('resourceVersion', opts.resourceVersion);
      if (opts.resourceVersionMatch) params.set('resourceVersionMatch', opts.resourceVersionMatch);
    }
    if (opts.limit) params.set('limit', String(opts.limit));
    const q = params.size ? `?${params.toString()}` : '';
    const l = await this.request<{ items: T[]; metadata: { resourceVersion: string; continue?: string } }>(
      'GET',
      p + q,
    );
    for (const item of l.items) {
      item.apiVersion = apiVersion;
      item.kind = kind;
    }
    return {
      items: l.items,
      resourceVersion: l.metadata.resourceVersion,
      ...(l.metadata.continue ? { continue: l.metadata.continue } : {}),
    };
  }

  /** Every object of a kind (a consistent read), page by page when `limit` is given. */
  async list<T extends KubeObject>(
    apiVersion: string,
    kind: string,
    opts: ListOptions = {},
  ): Promise<{ items: T[]; resourceVersion: string }> {
    const items: T[] = [];
    let page = await this.listPage<T>(apiVersion, kind, opts);
    items.push(...page.items);
    while (page.continue) {
      page = await this.listPage<T>(apiVersion, kind, { ...opts, continue: page.continue });
      items.push(...page.items);
    }
    return { items, resourceVersion: page.resourceVersion };
  }

  /** The path listing a kind across all namespaces. */
  async clusterWidePath(apiVersion: string, kind: string): Promise<string> {
    const p = await this.path(apiVersion, kind, '');
    return p.replace(/\/namespaces\/\//, '/');
  }

  async create<T extends KubeObject>(obj: T): Promise<T> {
    return await this.request<T>(
      'POST',
      `${await this.path(obj.apiVersion, obj.kind, obj.metadata.namespace)}?fieldManager=${this.fieldManager}`,
      obj,
    );
  }

  async delete(
    apiVersion: string,
    kind: string,
    name: string,
    namespace?: string,
    propagationPolicy = 'Background',
  ): Promise<boolean> {
    try {
      await this.request('DELETE', await this.path(apiVersion, kind, namespace, name), {
        kind: 'DeleteOptions',
        apiVersion: 'v1',
        propagationPolicy,
      });
      return true;
    } catch (err) {
      if (isNotFound(err)) return false;
      throw err;
    }
  }

  /** Merge-patches an object (or its status with subresource 'status'). */
  async mergePatch<T extends KubeObject>(
    apiVersion: string,
    kind: string,
    name: string,
    namespace: string | undefined,
    patch: unknown,
    subresource = '',
  ): Promise<T> {
    const p = await this.path(apiVersion, kind, namespace, name);
    return await this.request<T>(
      'PATCH',
      `${p}${subresource ? `/${subresource}` : ''}?fieldManager=${this.fieldManager}`,
      patch,
      'application/merge-patch+json',
    );
  }

  /**
   * Opens a watch stream at `path` (through the transport: counted, retried on a stale
   * connection) and calls `onEvent` per event until the server closes it (resolves) or it fails
   * (rejects). `signal` ends it early.
   */
  async watch(
    path: string,
    query: Record<string, string>,
    onEvent: (e: WatchEvent) => void,
    signal: AbortSignal,
  ): Promise<void> {
    const url = new URL(this.server + path);
    for (const [k, v] of Object.entries({ ...query, watch: '1', allowWatchBookmarks: 'true' }))
      url.searchParams.set(k, v);
    const auth = await this.credentials.current();
    let res: http.IncomingMessage;
    try {
      const headers = { ...auth.headers, accept: 'application/json' };
      res = await this.transport.open({ url, headers, agent: auth.agent, signal });
    } catch (err) {
      if (signal.aborted) return;
      throw err;
    }
    const status = res.statusCode ?? 0;
    if (status >= 400) {
      let text: string;
      try {
        text = await readBody(res);
      } catch (err) {
        if (signal.aborted) return;
        throw new ClusterUnreachableError(this.server, describeNetworkError(err));
      }
      // A refused credential: the next list reloads the kubeconfig.
      if (status === 401 && this.opts.reload) void this.credentials.reauthenticate(auth).catch(() => undefined);
      throw refusal(status, 'WatchFailed', text.slice(0, 500), auth.cert);
    }
    await readEvents(res, this.server, onEvent, signal);
  }

  async get<T extends KubeObject>(
    apiVersion: string,
    kind: string,
    name: string,
    namespace?: string,
  ): Promise<T | undefined> {
    try {
      return await this.request<T>('GET', await this.path(apiVersion, kind, namespace, name));
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }
}
