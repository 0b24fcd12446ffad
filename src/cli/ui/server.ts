// klm ui: a web view served on loopback, acting with the user's own kubeconfig as `kubectl proxy`
// does. The page holds no credential: it asks this server, which answers with what the command
// line would print. Every API call carries the token of the URL klm printed (a page of another
// origin cannot guess it), and the Host header must name this server (no DNS rebinding). Live
// updates are watches on the cluster, one set per open page, pushed as server-sent events.
import { randomBytes, timingSafeEqual } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { answer } from './calls';
import type { UiContext } from './api';
import { HttpError, send, statusOf } from './http';
import { LiveStreams } from './live';
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

export async function startUi(o: UiOptions): Promise<UiServer> {
  const page = await loadPage();
  const token = randomBytes(24).toString('hex');
  const tokenBuf = Buffer.from(token);
  const live = new LiveStreams();
  let port = o.port;
  const loopbackOnly = LOOPBACK.has(o.address) || o.address === '::1';

  const authorized = (presented: string | null | undefined) => {
    const p = Buffer.from(presented ?? '');
    return p.length === tokenBuf.length && timingSafeEqual(p, tokenBuf);
  };

  const api = async (req: http.IncomingMessage, res: http.ServerResponse, url: URL): Promise<void> => {
    if (!authorized((req.headers['x-klm-token'] as string | undefined) ?? url.searchParams.get('token')))
      throw new HttpError(403, 'no or a wrong token: open the address klm ui printed');
    await answer(o.context, req, res, url, live);
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
      send(
        res,
        statusOf(err),
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
      live.endAll();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
