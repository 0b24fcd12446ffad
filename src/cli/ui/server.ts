// klm ui: a web view served on loopback, acting with the user's own kubeconfig as `kubectl proxy`
// does. The page holds no credential: it asks this server, which answers with what the command
// line would print. Every API call carries the token of the URL klm printed (a page of another
// origin cannot guess it), and the Host header must name this server (no DNS rebinding). Live
// updates are watches on the cluster, one set per open page, pushed as server-sent events.
import { randomBytes, timingSafeEqual } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Kyma } from '../../api/kyma';
import { CLI_MANAGED_BY } from '../../api/identity';
import { API_VERSION, LABELS, type KubeObject } from '../../api/shared';
import { Informer } from '../../k8s/informer';
import { kymaRefOf } from '../cluster';
import { recordOf } from '../direct-record';
import { installTargetOf, type KymaRef } from '../kyma-modules';
import { Refused, UsageError } from '../output';
import { addFrom, blockersOf, catalogOf, deleteFrom, modulesOf, whyOf, type UiContext } from './api';
import { fleetOf, rolloutsOf, steer } from './fleet';
import { loadPage } from './page';

export interface UiOptions {
  context: UiContext;
  address: string;
  port: number;
  /** The Kyma the page opens with. */
  kyma: string;
}

export interface UiServer {
  /** The page's address with its token: the one thing to open. */
  url: string;
  close(): Promise<void>;
}

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]']);

class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

function send(res: http.ServerResponse, status: number, type: string, body: string): void {
  res.writeHead(status, {
    'Content-Type': type,
    'Cache-Control': 'no-store',
    'X-Content-Type-Options': 'nosniff',
    'Referrer-Policy': 'no-referrer',
    'Content-Security-Policy': "default-src 'self'; img-src 'self' https: data:; frame-ancestors 'none'",
  });
  res.end(body);
}

async function bodyOf(req: http.IncomingMessage): Promise<Record<string, unknown>> {
  let text = '';
  for await (const chunk of req) {
    text += (chunk as Buffer).toString();
    if (text.length > 65_536) throw new HttpError(413, 'request too large');
  }
  try {
    return text ? (JSON.parse(text) as Record<string, unknown>) : {};
  } catch {
    throw new HttpError(400, 'the request is not JSON');
  }
}

function text(v: unknown, what: string): string {
  if (typeof v !== 'string' || !v) throw new HttpError(400, `${what} is missing`);
  return v;
}

/**
 * One page's watches: the Kyma, klm's direct-install records, and what decides a direct install's
 * state (its manager workloads and its default CRs, whose kinds the records name: a new record's
 * kind is watched from then on). Any change is pushed as `changed`.
 */
async function watchFor(c: UiContext, ref: KymaRef, onChange: () => void): Promise<{ stop(): void }> {
  const kyma = await c.kube.get<Kyma & KubeObject>(API_VERSION, 'Kyma', ref.name, ref.namespace);
  const target = await installTargetOf(c.kube, ref, kyma).catch(() => c.kube);
  const own = `${LABELS.managedBy}=${CLI_MANAGED_BY}`;
  const informers: Informer[] = [];
  const watched = new Set<string>();
  const watch = (
    client: typeof target,
    apiVersion: string,
    kind: string,
    o: { namespace?: string; labelSelector?: string; fieldSelector?: string },
  ) => {
    const key = `${apiVersion}/${kind}/${o.namespace ?? ''}`;
    if (watched.has(key)) return;
    watched.add(key);
    const i = new Informer(client, { apiVersion, kind, ...o, onEvent: onChange, onError: () => undefined });
    informers.push(i);
    void i.start().catch(() => undefined);
  };
  watch(c.kube, API_VERSION, 'Kyma', { namespace: ref.namespace, fieldSelector: `metadata.name=${ref.name}` });
  watch(target, 'apps/v1', 'Deployment', { namespace: c.directNamespace, labelSelector: own });
  const records = new Informer(target, {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    namespace: c.directNamespace,
    labelSelector: own,
    onEvent: (_type, cm) => {
      const cr = recordOf(cm)?.defaultCr;
      if (cr)
        watch(target, cr.apiVersion, cr.kind, {
          ...(cr.namespace ? { namespace: cr.namespace } : {}),
          labelSelector: own,
        });
      onChange();
    },
    onError: () => undefined,
  });
  informers.push(records);
  void records.start().catch(() => undefined);
  return { stop: () => informers.forEach((i) => i.stop()) };
}

/** The fleet page's watches: the namespace's Kymas and ModuleReleaseMetas (promotions). */
function fleetWatch(c: UiContext, namespace: string, onChange: () => void): Promise<{ stop(): void }> {
  const informers = ['Kyma', 'ModuleReleaseMeta'].map(
    (kind) =>
      new Informer(c.kube, { apiVersion: API_VERSION, kind, namespace, onEvent: onChange, onError: () => undefined }),
  );
  for (const i of informers) void i.start().catch(() => undefined);
  return Promise.resolve({ stop: () => informers.forEach((i) => i.stop()) });
}

export async function startUi(o: UiOptions): Promise<UiServer> {
  const page = await loadPage();
  const token = randomBytes(24).toString('hex');
  const tokenBuf = Buffer.from(token);
  const open = new Set<http.ServerResponse>();
  let port = o.port;
  const loopbackOnly = LOOPBACK.has(o.address) || o.address === '::1';

  const authorized = (presented: string | null | undefined) => {
    const p = Buffer.from(presented ?? '');
    return p.length === tokenBuf.length && timingSafeEqual(p, tokenBuf);
  };

  /** Server-sent events: `changed` whenever the watches see a change, many at once made one after `quietMs`. */
  const stream = async (
    req: http.IncomingMessage,
    res: http.ServerResponse,
    watch: (changed: () => void) => Promise<{ stop(): void }>,
    quietMs: number,
  ) => {
    res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-store', Connection: 'keep-alive' });
    res.write('retry: 2000\n\n');
    open.add(res);
    let timer: NodeJS.Timeout | undefined;
    const changed = () => {
      timer ??= setTimeout(() => {
        timer = undefined;
        res.write('event: changed\ndata: {}\n\n');
      }, quietMs);
    };
    const watches = await watch(changed);
    const keepAlive = setInterval(() => res.write(': keep-alive\n\n'), 25_000);
    req.on('close', () => {
      clearInterval(keepAlive);
      clearTimeout(timer);
      watches.stop();
      open.delete(res);
    });
  };

  const api = async (req: http.IncomingMessage, res: http.ServerResponse, url: URL): Promise<void> => {
    if (!authorized((req.headers['x-klm-token'] as string | undefined) ?? url.searchParams.get('token')))
      throw new HttpError(403, 'no or a wrong token: open the address klm ui printed');
    const c = o.context;
    const json = (data: unknown) => send(res, 200, 'application/json', JSON.stringify(data));
    const route = `${req.method} ${url.pathname}`;
    if (route.includes('/api/fleet') || route.includes('/api/rollout')) {
      const namespace = text(url.searchParams.get('namespace'), 'namespace');
      switch (route) {
        case 'GET /api/fleet':
          return json(await fleetOf(c.kube, namespace));
        case 'GET /api/fleet-events':
          return await stream(req, res, (changed) => fleetWatch(c, namespace, changed), 1000);
        case 'GET /api/rollouts':
          return json(await rolloutsOf(c.kube, namespace, c.config));
        case 'POST /api/rollout': {
          const b = await bodyOf(req);
          const action = b.action === 'pause' || b.action === 'resume' || b.action === 'abort' ? b.action : undefined;
          if (!action) throw new HttpError(400, 'action must be pause, resume or abort');
          const reason = typeof b.reason === 'string' ? b.reason.trim() : '';
          if (!reason) throw new HttpError(400, `${action} needs a reason (recorded with the rollout)`);
          return json(
            await steer(
              namespace,
              text(b.module, 'module'),
              text(b.channel, 'channel'),
              action,
              reason,
              c.config,
            ).catch((err: unknown) => {
              throw new Refused((err as Error).message);
            }),
          );
        }
        default:
          throw new HttpError(404, `no such call: ${route}`);
      }
    }
    let ref: KymaRef;
    try {
      ref = kymaRefOf(url.searchParams.get('kyma') ?? '', 'kyma');
    } catch (err) {
      throw new HttpError(400, (err as Error).message);
    }
    switch (route) {
      case 'GET /api/catalog':
        return json(await catalogOf(c, ref));
      case 'GET /api/modules':
        return json(await modulesOf(c, ref));
      case 'GET /api/why':
        return json(await whyOf(c, ref, text(url.searchParams.get('module'), 'module')));
      case 'GET /api/blockers':
        return json(await blockersOf(c, ref, text(url.searchParams.get('module'), 'module')));
      case 'GET /api/events':
        return await stream(req, res, (changed) => watchFor(c, ref, changed), 250);
      case 'POST /api/add': {
        const b = await bodyOf(req);
        return json({
          said: await addFrom(c, ref, {
            module: text(b.module, 'module'),
            ...(typeof b.channel === 'string' && b.channel ? { channel: b.channel } : {}),
            ...(b.direct === true ? { direct: true } : {}),
          }),
        });
      }
      case 'POST /api/delete': {
        const b = await bodyOf(req);
        return json({ said: await deleteFrom(c, ref, text(b.module, 'module'), b.deleteResources === true) });
      }
      default:
        throw new HttpError(404, `no such call: ${route}`);
    }
  };

  const server = http.createServer((req, res) => {
    void (async () => {
      const host = (req.headers.host ?? '').toLowerCase();
      if (loopbackOnly && ![...LOOPBACK].some((h) => host === `${h}:${port}`))
        throw new HttpError(421, 'this server answers only to its loopback address');
      const url = new URL(req.url ?? '/', `http://${host}`);
      if (url.pathname.startsWith('/api/')) return await api(req, res, url);
      if (req.method !== 'GET') throw new HttpError(405, 'only GET here');
      if (url.pathname === '/' || url.pathname === '/index.html')
        return send(res, 200, 'text/html; charset=utf-8', page.html);
      if (url.pathname === '/app.js') return send(res, 200, 'text/javascript; charset=utf-8', page.js);
      if (url.pathname === '/app.css') return send(res, 200, 'text/css; charset=utf-8', page.css);
      throw new HttpError(404, 'not found');
    })().catch((err: unknown) => {
      if (res.headersSent) return res.end();
      const status =
        err instanceof HttpError ? err.status : err instanceof Refused ? 409 : err instanceof UsageError ? 400 : 500;
      send(
        res,
        status,
        'application/json',
        JSON.stringify({ error: err instanceof Error ? err.message : String(err) }),
      );
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(o.port, o.address, resolve);
  });
  port = (server.address() as AddressInfo).port;
  const shownHost = o.address === '::1' ? '[::1]' : o.address === '0.0.0.0' ? '127.0.0.1' : o.address;
  return {
    url: `http://${shownHost}:${port}/?kyma=${encodeURIComponent(o.kyma)}#token=${token}`,
    close: async () => {
      for (const r of open) r.end();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
