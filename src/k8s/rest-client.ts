// A small Kubernetes REST client for objects of any kind, sent and received as plain JSON.
// client-node's generic object API re-serialises known kinds through its typed models,
// which drops keys such as `x-kubernetes-validations`; this client never rewrites a body.
// Paths are found through API discovery (cached per group/version); connections are kept
// alive and shared. Authentication comes from client-node's KubeConfig: exec plugins and
// auth providers are asked per request (they cache until their credential expires), a 401
// reloads the kubeconfig once (token files are read again, caches dropped); TLS server name,
// proxy URL and basic auth are honoured. Its TLS material is checked before a connection takes
// it: a field that cannot be used raises TlsMaterialError, which names the field, not the material. A request fails when the server sends nothing for a
// while (30 s by default); a server that cannot be reached, does not answer or fails TLS raises
// ClusterUnreachableError.
import http from 'node:http';
import https from 'node:https';
import type { KubeConfig } from '@kubernetes/client-node';
import { FIELD_MANAGER } from '../api/identity';
import type { KubeObject } from '../api/shared';
import {
  certificateTimeProblem,
  describeTlsProblem,
  pluginTlsProblem,
  tlsMaterialProblem,
  type TlsProblem,
} from './kubeconfig';

export interface WatchEvent {
  type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';
  object: KubeObject & { code?: number };
}

interface ApiResource {
  name: string;
  kind: string;
  namespaced: boolean;
}

/** What a Status names of the object an error is about (for 403: `kind` is the resource, e.g. `deployments`). */
export interface StatusDetails {
  group?: string;
  kind?: string;
  name?: string;
}

export class KubeApiError extends Error {
  /**
   * `discovery`: the request was the API discovery of a group version, which every
   * authenticated user may read: a 403 there means the server lets the identity do nothing.
   */
  constructor(
    readonly status: number,
    readonly reason: string,
    message: string,
    readonly details: StatusDetails = {},
    readonly discovery = false,
    /** For a 401: why the client certificate presented was not valid then ("expired at …"), if that was it. */
    readonly clientCertificate?: string,
  ) {
    super(message);
    this.name = 'KubeApiError';
  }
}

/** The API server could not be reached, did not answer in time, or failed TLS. */
export class ClusterUnreachableError extends Error {
  /** The request went out on a kept-alive connection the server had closed: safe to send again. */
  staleConnection = false;

  constructor(
    readonly server: string,
    readonly detail: string,
  ) {
    super(`${server} ${detail}`);
    this.name = 'ClusterUnreachableError';
  }
}

/** The kubeconfig's credential plugin or auth provider could not give a credential. */
export class CredentialError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CredentialError';
  }
}

/** The kubeconfig's TLS material (CA, client certificate or key) cannot be used: which field, why, and what to do. */
export class TlsMaterialError extends CredentialError {
  constructor(
    server: string,
    readonly problem: TlsProblem,
  ) {
    super(`the kubeconfig for ${server} could not be used: its ${describeTlsProblem(problem)}`);
    this.name = 'TlsMaterialError';
  }
}

/** The API server's refusal; a 401 of a client certificate no longer (or not yet) valid says so, and when. */
function refusal(
  status: number,
  reason: string,
  message: string,
  auth: Auth,
  details: StatusDetails = {},
): KubeApiError {
  const problem = status === 401 ? certificateTimeProblem(auth.cert) : undefined;
  return new KubeApiError(
    status,
    reason,
    problem ? `${message} (the client certificate ${problem})` : message,
    details,
    false,
    problem,
  );
}

export function isNotFound(err: unknown): boolean {
  return err instanceof KubeApiError && err.status === 404;
}

/** What a socket-level failure means, in words that quote nothing but the error's code. */
export function describeNetworkError(err: unknown): string {
  const code = (err as { code?: string }).code ?? '';
  if (code === 'ECONNREFUSED') return 'refused the connection';
  if (code === 'ECONNRESET' || code === 'EPIPE') return 'closed the connection';
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return 'has a host name that does not resolve';
  if (code === 'EHOSTUNREACH' || code === 'ENETUNREACH') return 'is not reachable on the network';
  if (code === 'ETIMEDOUT' || code === 'KLM_TIMEOUT') return 'did not answer in time';
  if (/CERT|SELF_SIGNED|UNABLE_TO_VERIFY|ERR_TLS|EPROTO|ALTNAME/i.test(code))
    return `failed TLS verification (${code})`;
  return `could not be reached${code ? ` (${code})` : ''}`;
}

/** How requests authenticate: headers and the agent that carries TLS material (and a proxy). */
interface Auth {
  headers: Record<string, string>;
  agent: http.Agent;
  /** Client certificate and key as applied, to notice a plugin that hands out new ones. */
  tls: string;
  /** The client certificate applied, if any: a refusal of it says when it was valid. */
  cert?: Buffer | string;
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

/** One request a KubeClient made (watches excepted): `code` 0 when no answer came. */
export interface RequestRecord {
  cluster: string;
  method: string;
  code: number;
  seconds: number;
}

let requestObserver: ((r: RequestRecord) => void) | undefined;

/** Hears of every request of every KubeClient of the process (its metrics count them). */
export function observeRequests(observer: ((r: RequestRecord) => void) | undefined): void {
  requestObserver = observer;
}

const AGENT = { keepAlive: true, maxSockets: 256 };
/** How long a replaced agent keeps serving the requests already on it. */
const GRACE_MS = 60_000;

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

/** One HTTP exchange with the API server: `timeoutMs` bounds a silence (the client's own by default). */
interface Exchange {
  method: string;
  url: URL;
  headers: Record<string, string>;
  agent: http.Agent;
  payload?: Buffer;
  timeoutMs?: number;
}

/** The API server's answer: its status code and body. */
interface Answer {
  status: number;
  text: string;
}

export class KubeClient {
  private readonly discovery = new Map<string, Promise<ApiResource[]>>();
  private auth: Promise<Auth>;
  private refreshing?: Promise<Auth>;
  /** The KubeConfig whose TLS material was checked. */
  private checked?: KubeConfig;
  private readonly timeoutMs: number;
  private readonly fieldManager: string;

  private constructor(
    readonly server: string,
    private kc: KubeConfig,
    private readonly opts: KubeClientOptions,
  ) {
    this.timeoutMs = opts.requestTimeoutMs ?? 30_000;
    this.fieldManager = encodeURIComponent(opts.fieldManager ?? FIELD_MANAGER);
    this.auth = this.authenticate();
    this.auth.catch(() => undefined);
  }

  static async fromKubeConfig(kc: KubeConfig, opts: KubeClientOptions = {}): Promise<KubeClient> {
    const cluster = kc.getCurrentCluster();
    if (!cluster) throw new Error('the kubeconfig has no current cluster');
    const client = new KubeClient(cluster.server.replace(/\/$/, ''), kc, opts);
    await client.auth;
    return client;
  }

  /** The namespace of the kubeconfig's current context, if it names one. */
  contextNamespace(): string | undefined {
    return this.kc.getContextObject(this.kc.getCurrentContext())?.namespace || undefined;
  }

  /** Whether credentials can change while the client lives (exec plugins, auth providers). */
  private dynamic(): boolean {
    const user = this.kc.getCurrentUser();
    return Boolean(user?.exec || user?.authProvider);
  }

  /** Applies the kubeconfig: TLS material, proxy, server name, token or basic auth. */
  private async authenticate(previous?: Auth): Promise<Auth> {
    const o: https.RequestOptions = {};
    const user = this.kc.getCurrentUser();
    const command = (user?.exec as { command?: unknown } | undefined)?.command;
    const what = user?.exec
      ? `its exec credential plugin${typeof command === 'string' ? ` "${command}"` : ''}`
      : user?.authProvider
        ? 'its auth provider'
        : 'its credentials';
    if (this.checked !== this.kc) {
      // Checked before an agent takes it: a broken key would fail every request in OpenSSL's words, which name no field.
      const problem = tlsMaterialProblem(this.kc);
      if (problem) throw new TlsMaterialError(this.server, problem);
      this.checked = this.kc;
    }
    let timer: NodeJS.Timeout | undefined;
    const limit = this.opts.authTimeoutMs ?? 30_000;
    try {
      // client-node runs a plugin without a time limit: one that hangs must not hold every request.
      await Promise.race([
        this.kc.applyToHTTPSOptions(o),
        new Promise(
          (_, reject) =>
            (timer = setTimeout(
              () =>
                reject(
                  new CredentialError(
                    `the kubeconfig for ${this.server} could not be used: ${what} gave no credential within ${limit / 1000} s`,
                  ),
                ),
              limit,
            )),
        ),
      ]);
    } catch (err) {
      // A plugin's or provider's message may carry what it was given: say only what failed.
      if (err instanceof CredentialError) throw err;
      throw new CredentialError(`the kubeconfig for ${this.server} could not be used: ${what} failed`);
    } finally {
      clearTimeout(timer);
    }
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(o.headers ?? {})) if (typeof v === 'string') headers[k] = v;
    if (o.auth) headers.Authorization = `Basic ${Buffer.from(o.auth).toString('base64')}`;
    const tls = JSON.stringify([o.cert, o.key]);
    const cert = o.cert as Buffer | string | undefined;
    if (previous && previous.tls === tls) return { headers, agent: previous.agent, tls, cert };
    const handedOut =
      user?.exec && !this.server.startsWith('http:')
        ? pluginTlsProblem(this.kc, o.cert as Buffer | string | undefined, o.key as Buffer | string | undefined)
        : undefined;
    if (handedOut) throw new TlsMaterialError(this.server, handedOut);
    // Requests still under way on the old agent may finish.
    if (previous) setTimeout(() => previous.agent.destroy(), GRACE_MS).unref();
    // Through a proxy, client-node's agent (it knows HTTP, HTTPS and SOCKS proxies); else our
    // own, which keeps connections alive.
    const agent = this.kc.getCurrentCluster()?.proxyUrl
      ? (o.agent as http.Agent)
      : this.server.startsWith('http:')
        ? new http.Agent(AGENT)
        : new https.Agent({
            ...AGENT,
            ca: o.ca,
            cert: o.cert,
            key: o.key,
            servername: o.servername,
            rejectUnauthorized: o.rejectUnauthorized,
          });
    return { headers, agent, tls, cert };
  }

  /** Runs one (re-)authentication at a time; concurrent callers share it. */
  private refresh(reload: boolean): Promise<Auth> {
    this.refreshing ??= (async () => {
      const previous = await this.auth.catch(() => undefined);
      if (reload && this.opts.reload) this.kc = this.opts.reload();
      return await this.authenticate(previous);
    })().finally(() => (this.refreshing = undefined));
    this.auth = this.refreshing;
    this.auth.catch(() => undefined);
    return this.refreshing;
  }

  /** The credentials for the next request: fresh from a plugin, else as applied once. */
  private async currentAuth(): Promise<Auth> {
    if (!this.dynamic()) return await this.auth;
    return await this.refresh(false);
  }

  /** After a 401: read the kubeconfig again (token files, plugin caches) and apply it anew, once for all requests refused together. */
  private async reauthenticate(failed: Auth): Promise<Auth> {
    if (this.refreshing) return await this.refreshing;
    const current = await this.auth.catch(() => undefined);
    if (current && current !== failed && current.headers.Authorization !== failed.headers.Authorization) return current;
    return await this.refresh(true);
  }

  /** Closes the kept-alive connections: the client is no longer used. */
  close(): void {
    void this.auth.then(
      (a) => a.agent.destroy(),
      () => undefined,
    );
  }

  /** Whether the API server answers, within `timeoutMs`: resolves, or rejects as request() does. */
  async ping(timeoutMs: number): Promise<void> {
    const auth = await this.currentAuth();
    const { status } = await this.exchange({
      method: 'GET',
      url: new URL(`${this.server}/version`),
      headers: { ...auth.headers, accept: 'application/json' },
      agent: auth.agent,
      timeoutMs,
    });
    if (status >= 400) throw refusal(status, 'Unknown', `GET /version: HTTP ${status}`, auth);
  }

  /** One exchange; fails when the server sends nothing for `timeoutMs` (a long answer that streams is fine). */
  private send({ method, url, headers, agent, payload, timeoutMs = this.timeoutMs }: Exchange): Promise<Answer> {
    const transport = url.protocol === 'http:' ? http : https;
    return new Promise((resolve, reject) => {
      const req = transport.request(url, { method, headers, agent }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => {
          idle.refresh();
          chunks.push(c);
        });
        res.on('end', () => {
          clearTimeout(idle);
          resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') });
        });
        res.on('error', (err) => fail(err));
      });
      const fail = (err: unknown) => {
        clearTimeout(idle);
        const e = new ClusterUnreachableError(this.server, describeNetworkError(err));
        // A kept-alive connection the server had closed: the request never reached it.
        e.staleConnection = req.reusedSocket && (err as { code?: string }).code === 'ECONNRESET';
        reject(e);
      };
      const idle = setTimeout(
        () => req.destroy(Object.assign(new Error('timed out'), { code: 'KLM_TIMEOUT' })),
        timeoutMs,
      );
      req.on('error', fail);
      req.end(payload);
    });
  }

  /** resend(), told to the request observer. */
  private async exchange(x: Exchange): Promise<Answer> {
    if (!requestObserver) return await this.resend(x);
    const start = performance.now();
    let code = 0;
    try {
      const answer = await this.resend(x);
      code = answer.status;
      return answer;
    } finally {
      requestObserver?.({
        cluster: this.opts.cluster ?? 'target',
        method: x.method,
        code,
        seconds: (performance.now() - start) / 1000,
      });
    }
  }

  /** send(), once more on a fresh connection when a kept-alive one turned out closed (not for creates, which are not idempotent). */
  private async resend(x: Exchange): Promise<Answer> {
    try {
      return await this.send(x);
    } catch (err) {
      if (!(err instanceof ClusterUnreachableError && err.staleConnection && x.method !== 'POST')) throw err;
      return await this.send(x);
    }
  }

  async request<T>(method: string, path: string, body?: unknown, contentType = 'application/json'): Promise<T> {
    const url = new URL(this.server + path);
    const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
    const extra: Record<string, string> = { accept: 'application/json' };
    if (payload) {
      extra['content-type'] = contentType;
      extra['content-length'] = String(payload.length);
    }
    let auth = await this.currentAuth();
    const exchange = (a: Auth) =>
      this.exchange({ method, url, headers: { ...a.headers, ...extra }, agent: a.agent, payload });
    let { status, text } = await exchange(auth);
    if (status === 401 && this.opts.reload) {
      auth = await this.reauthenticate(auth);
      ({ status, text } = await exchange(auth));
    }
    if (status >= 400) {
      // Errors are usually a JSON Status, but a path that is not served answers in plain text.
      let s: { message?: string; reason?: string; details?: StatusDetails } | undefined;
      try {
        s = JSON.parse(text) as typeof s;
      } catch {
        s = { message: `${method} ${path}: HTTP ${status} ${text.trim().slice(0, 200)}` };
        // The path itself is not served (a CRD went away): forget what discovery said.
        if (status === 404) this.discovery.clear();
      }
      throw refusal(
        status,
        s?.reason ?? 'Unknown',
        s?.message ?? `${method} ${path}: HTTP ${status}`,
        auth,
        s?.details,
      );
    }
    return (text ? JSON.parse(text) : undefined) as T;
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
   * Opens a watch stream at `path` and calls `onEvent` per event until the server closes it
   * (resolves) or it fails (rejects). `abort` ends it early.
   */
  watch(
    path: string,
    query: Record<string, string>,
    onEvent: (e: WatchEvent) => void,
    signal: AbortSignal,
  ): Promise<void> {
    const url = new URL(this.server + path);
    for (const [k, v] of Object.entries({ ...query, watch: '1', allowWatchBookmarks: 'true' }))
      url.searchParams.set(k, v);
    const transport = url.protocol === 'http:' ? http : https;
    return this.currentAuth().then(
      (auth) =>
        new Promise<void>((resolve, reject) => {
          const headers = { ...auth.headers, accept: 'application/json' };
          const req = transport.request(url, { method: 'GET', headers, agent: auth.agent, signal }, (res) => {
            if ((res.statusCode ?? 0) >= 400) {
              const chunks: Buffer[] = [];
              res.on('data', (c: Buffer) => chunks.push(c));
              res.on('end', () => {
                // A refused credential: the next list reloads the kubeconfig.
                if (res.statusCode === 401 && this.opts.reload) void this.reauthenticate(auth).catch(() => undefined);
                reject(
                  refusal(
                    res.statusCode ?? 0,
                    'WatchFailed',
                    Buffer.concat(chunks).toString('utf8').slice(0, 500),
                    auth,
                  ),
                );
              });
              return;
            }
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
              signal.aborted ? resolve() : reject(new ClusterUnreachableError(this.server, describeNetworkError(err))),
            );
          });
          req.on('error', (err) =>
            signal.aborted ? resolve() : reject(new ClusterUnreachableError(this.server, describeNetworkError(err))),
          );
          req.end();
        }),
    );
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
