// A small Kubernetes REST client for objects of any kind, sent and received as plain JSON.
// client-node's generic object API re-serialises known kinds through its typed models,
// which drops keys such as `x-kubernetes-validations`; this client never rewrites a body.
// Paths are found through API discovery (cached per group/version); connections are kept
// alive and shared.
import https from 'node:https';
import type { KubeConfig } from '@kubernetes/client-node';
import { FIELD_MANAGER } from '../api/identity';
import type { KubeObject } from '../api/shared';

export interface WatchEvent {
  type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';
  object: KubeObject & { code?: number };
}

interface ApiResource {
  name: string;
  kind: string;
  namespaced: boolean;
}

export class KubeApiError extends Error {
  constructor(readonly status: number, readonly reason: string, message: string) {
    super(message);
    this.name = 'KubeApiError';
  }
}

export function isNotFound(err: unknown): boolean {
  return err instanceof KubeApiError && err.status === 404;
}

export class KubeClient {
  private readonly discovery = new Map<string, Promise<ApiResource[]>>();

  private constructor(
    readonly server: string,
    private readonly options: https.RequestOptions,
    private readonly agent: https.Agent,
  ) {}

  static async fromKubeConfig(kc: KubeConfig): Promise<KubeClient> {
    const cluster = kc.getCurrentCluster();
    if (!cluster) throw new Error('the kubeconfig has no current cluster');
    const options: https.RequestOptions = {};
    await kc.applyToHTTPSOptions(options);
    const agent = new https.Agent({ keepAlive: true, maxSockets: 256, ca: options.ca, cert: options.cert, key: options.key, rejectUnauthorized: options.rejectUnauthorized });
    return new KubeClient(cluster.server.replace(/\/$/, ''), options, agent);
  }

  async request<T>(method: string, path: string, body?: unknown, contentType = 'application/json'): Promise<T> {
    const url = new URL(this.server + path);
    const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
    const headers: Record<string, string> = { ...(this.options.headers as Record<string, string> | undefined), accept: 'application/json' };
    if (payload) {
      headers['content-type'] = contentType;
      headers['content-length'] = String(payload.length);
    }
    const { status, text } = await new Promise<{ status: number; text: string }>((resolve, reject) => {
      const req = https.request(url, { method, headers, agent: this.agent, timeout: 30_000 }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      });
      req.on('timeout', () => req.destroy(new Error(`${method} ${path}: timed out`)));
      req.on('error', reject);
      req.end(payload);
    });
    if (status >= 400) {
      // Errors are usually a JSON Status, but a path that is not served answers in plain text.
      let s: { message?: string; reason?: string } | undefined;
      try {
        s = JSON.parse(text) as typeof s;
      } catch {
        s = { message: `${method} ${path}: HTTP ${status} ${text.trim().slice(0, 200)}` };
        // The path itself is not served (a CRD went away): forget what discovery said.
        if (status === 404) this.discovery.clear();
      }
      throw new KubeApiError(status, s?.reason ?? 'Unknown', s?.message ?? `${method} ${path}: HTTP ${status}`);
    }
    return (text ? JSON.parse(text) : undefined) as T;
  }

  private resources(apiVersion: string): Promise<ApiResource[]> {
    let r = this.discovery.get(apiVersion);
    if (!r) {
      const base = apiVersion.includes('/') ? `/apis/${apiVersion}` : `/api/${apiVersion}`;
      r = this.request<{ resources: ApiResource[] }>('GET', base).then((l) => l.resources.filter((x) => !x.name.includes('/')));
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
    if (!resource) throw new KubeApiError(404, 'NotFound', `the API server does not serve kind ${kind} in ${apiVersion}`);
    const base = apiVersion.includes('/') ? `/apis/${apiVersion}` : `/api/${apiVersion}`;
    const ns = resource.namespaced ? `/namespaces/${encodeURIComponent(namespace ?? 'default')}` : '';
    return `${base}${ns}/${resource.name}${name ? `/${encodeURIComponent(name)}` : ''}`;
  }

  /** Server-side apply with force under this project's field manager. */
  async apply<T extends KubeObject>(obj: T, subresource = ''): Promise<T> {
    const p = await this.path(obj.apiVersion, obj.kind, obj.metadata.namespace, obj.metadata.name);
    const q = `?fieldManager=${FIELD_MANAGER}&force=true`;
    return await this.request<T>('PATCH', `${p}${subresource ? `/${subresource}` : ''}${q}`, obj, 'application/apply-patch+yaml');
  }

  async list<T extends KubeObject>(apiVersion: string, kind: string, opts: { namespace?: string; labelSelector?: string; fieldSelector?: string } = {}): Promise<{ items: T[]; resourceVersion: string }> {
    const p = opts.namespace ? await this.path(apiVersion, kind, opts.namespace) : await this.clusterWidePath(apiVersion, kind);
    const params = new URLSearchParams();
    if (opts.labelSelector) params.set('labelSelector', opts.labelSelector);
    if (opts.fieldSelector) params.set('fieldSelector', opts.fieldSelector);
    const q = params.size ? `?${params.toString()}` : '';
    const l = await this.request<{ items: T[]; metadata: { resourceVersion: string } }>('GET', p + q);
    for (const item of l.items) {
      item.apiVersion = apiVersion;
      item.kind = kind;
    }
    return { items: l.items, resourceVersion: l.metadata.resourceVersion };
  }

  /** The path listing a kind across all namespaces. */
  async clusterWidePath(apiVersion: string, kind: string): Promise<string> {
    const p = await this.path(apiVersion, kind, '');
    return p.replace(/\/namespaces\/\//, '/');
  }

  async create<T extends KubeObject>(obj: T): Promise<T> {
    return await this.request<T>('POST', `${await this.path(obj.apiVersion, obj.kind, obj.metadata.namespace)}?fieldManager=${FIELD_MANAGER}`, obj);
  }

  async delete(apiVersion: string, kind: string, name: string, namespace?: string, propagationPolicy = 'Background'): Promise<boolean> {
    try {
      await this.request('DELETE', await this.path(apiVersion, kind, namespace, name), { kind: 'DeleteOptions', apiVersion: 'v1', propagationPolicy });
      return true;
    } catch (err) {
      if (isNotFound(err)) return false;
      throw err;
    }
  }

  /** Merge-patches an object (or its status with subresource 'status'). */
  async mergePatch<T extends KubeObject>(apiVersion: string, kind: string, name: string, namespace: string | undefined, patch: unknown, subresource = ''): Promise<T> {
    const p = await this.path(apiVersion, kind, namespace, name);
    return await this.request<T>('PATCH', `${p}${subresource ? `/${subresource}` : ''}?fieldManager=${FIELD_MANAGER}`, patch, 'application/merge-patch+json');
  }

  /**
   * Opens a watch stream at `path` and calls `onEvent` per event until the server closes it
   * (resolves) or it fails (rejects). `abort` ends it early.
   */
  watch(path: string, query: Record<string, string>, onEvent: (e: WatchEvent) => void, signal: AbortSignal): Promise<void> {
    const url = new URL(this.server + path);
    for (const [k, v] of Object.entries({ ...query, watch: '1', allowWatchBookmarks: 'true' })) url.searchParams.set(k, v);
    const headers = { ...(this.options.headers as Record<string, string> | undefined), accept: 'application/json' };
    return new Promise<void>((resolve, reject) => {
      const req = https.request(url, { method: 'GET', headers, agent: this.agent, signal }, (res) => {
        if ((res.statusCode ?? 0) >= 400) {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => reject(new KubeApiError(res.statusCode ?? 0, 'WatchFailed', Buffer.concat(chunks).toString('utf8').slice(0, 500))));
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
        res.on('error', reject);
      });
      req.on('error', (err) => (signal.aborted ? resolve() : reject(err)));
      req.end();
    });
  }

  async get<T extends KubeObject>(apiVersion: string, kind: string, name: string, namespace?: string): Promise<T | undefined> {
    try {
      return await this.request<T>('GET', await this.path(apiVersion, kind, namespace, name));
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }
}
