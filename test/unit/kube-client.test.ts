// KubeClient against small local HTTP servers: deadlines, unreachable servers, credentials
// applied per request and renewed after a 401, and failures that quote no credential (nor a
// client key an exec plugin hands out).
import { mkdtemp, writeFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { kubeConfigFromString } from '../../src/k8s/kubeconfig';
import { ClusterUnreachableError, CredentialError, KubeApiError, TlsMaterialError } from '../../src/k8s/request-errors';
import { KubeClient, type WatchEvent } from '../../src/k8s/rest-client';
import { observeRequests, type RequestRecord } from '../../src/k8s/transport';
import { execPlugin } from '../support/exec-plugin';

const servers: http.Server[] = [];

afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise((r) => s.close(r))));
});

async function serve(handler: http.RequestListener): Promise<string> {
  const server = http.createServer(handler);
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

function kubeconfig(server: string, user: Record<string, unknown>): string {
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'c', cluster: { server, 'insecure-skip-tls-verify': true } }],
    users: [{ name: 'u', user }],
    contexts: [{ name: 'c', context: { cluster: 'c', user: 'u' } }],
    'current-context': 'c',
  });
}

async function client(
  server: string,
  user: Record<string, unknown>,
  opts: { requestTimeoutMs?: number; authTimeoutMs?: number; reload?: () => string } = {},
): Promise<KubeClient> {
  const text = kubeconfig(server, user);
  return await KubeClient.fromKubeConfig(kubeConfigFromString(text), {
    ...(opts.requestTimeoutMs ? { requestTimeoutMs: opts.requestTimeoutMs } : {}),
    ...(opts.authTimeoutMs ? { authTimeoutMs: opts.authTimeoutMs } : {}),
    reload: () => kubeConfigFromString(opts.reload?.() ?? text),
  });
}

async function failure(p: Promise<unknown>): Promise<Error> {
  try {
    await p;
  } catch (err) {
    return err as Error;
  }
  throw new Error('expected a failure');
}

describe('KubeClient', () => {
  it('gives up on a server that accepts the request but never answers, after its deadline', async () => {
    const url = await serve(() => undefined);
    const c = await client(url, { token: 't' }, { requestTimeoutMs: 300 });
    const started = Date.now();
    const err = await failure(c.request('GET', '/version'));
    expect(err).toBeInstanceOf(ClusterUnreachableError);
    expect(err.message).toBe(`${url} did not answer in time`);
    expect(Date.now() - started).toBeLessThan(3000);
    c.close();
  });

  it('says a server refused the connection', async () => {
    const url = await serve(() => undefined);
    await new Promise((r) => servers.pop()!.close(r));
    const c = await client(url, { token: 't' });
    const err = await failure(c.request('GET', '/version'));
    expect(err).toBeInstanceOf(ClusterUnreachableError);
    expect(err.message).toBe(`${url} refused the connection`);
  });

  it('sends basic auth from username and password', async () => {
    let seen = '';
    const url = await serve((req, res) => {
      seen = req.headers.authorization ?? '';
      res.end('{}');
    });
    const c = await client(url, { username: 'ann', password: 'pw' });
    await c.request('GET', '/version');
    expect(seen).toBe(`Basic ${Buffer.from('ann:pw').toString('base64')}`);
    c.close();
  });

  it("sends a request again after a 429 (a new CRD's storage still initializing, say), as client-go does, and gives up after a few", async () => {
    const tooMany = JSON.stringify({
      kind: 'Status',
      status: 'Failure',
      reason: 'TooManyRequests',
      message: 'storage is (re)initializing',
      code: 429,
      details: { retryAfterSeconds: 1 },
    });
    let refusals = 1;
    const seen: string[] = [];
    const url = await serve((req, res) => {
      seen.push(`${req.method} ${req.url}`);
      if (refusals-- > 0) {
        res.statusCode = 429;
        res.end(tooMany);
      } else res.end('{"items":[]}');
    });
    const c = await client(url, { token: 't' });
    expect(await c.request('POST', '/apis/x/v1/things', { a: 1 })).toEqual({ items: [] });
    expect(seen).toEqual(['POST /apis/x/v1/things', 'POST /apis/x/v1/things']);
    refusals = Infinity;
    seen.length = 0;
    const err = await failure(c.request('GET', '/apis/x/v1/things'));
    expect(err).toBeInstanceOf(KubeApiError);
    expect((err as KubeApiError).status).toBe(429);
    expect(seen).toHaveLength(3);
    c.close();
  });

  it('reads the kubeconfig again after a 401 and retries once with the renewed token file', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'klm-token-'));
    const file = path.join(dir, 'token');
    await writeFile(file, 'old');
    const seen: string[] = [];
    const url = await serve((req, res) => {
      seen.push(req.headers.authorization ?? '');
      res.statusCode = req.headers.authorization === 'Bearer new' ? 200 : 401;
      res.end(
        res.statusCode === 200 ? '{"ok":true}' : '{"kind":"Status","reason":"Unauthorized","message":"Unauthorized"}',
      );
    });
    const c = await client(url, { 'token-file': file });
    await writeFile(file, 'new');
    expect(await c.request('GET', '/version')).toEqual({ ok: true });
    expect(seen).toEqual(['Bearer old', 'Bearer new']);
    expect(await c.request('GET', '/version')).toEqual({ ok: true });
    expect(seen).toHaveLength(3);
    c.close();
  });

  it('asks an exec plugin before requests, and names neither its output nor its error', async () => {
    // Tokens that expire at once: every request asks the plugin again.
    const plugin = await execPlugin(
      "{ token: 'tok' + n, expirationTimestamp: new Date(Date.now() + 1).toISOString() }",
    );
    const seen: string[] = [];
    const url = await serve((req, res) => {
      seen.push(req.headers.authorization ?? '');
      res.end('{}');
    });
    const c = await client(url, plugin.user());
    await new Promise((r) => setTimeout(r, 5));
    await c.request('GET', '/a');
    await new Promise((r) => setTimeout(r, 5));
    await c.request('GET', '/b');
    expect(seen).toEqual(['Bearer tok2', 'Bearer tok3']);
    c.close();
    const err = await failure(client(url, plugin.user([{ name: 'FAIL', value: '1' }])));
    expect(err).toBeInstanceOf(CredentialError);
    expect(err.message).toContain('its exec credential plugin');
    expect(err.message).not.toContain('SECRET-MARKER');
  });

  it('refuses a client certificate and key an exec plugin hands out that cannot be used, naming the plugin, never its output', async () => {
    const plugin = path.join(await mkdtemp(path.join(tmpdir(), 'klm-plugin-')), 'plugin.mjs');
    const broken = '-----BEGIN PRIVATE KEY-----\\nSECRET-MARKER-in-key\\n-----END PRIVATE KEY-----\\n';
    await writeFile(
      plugin,
      `process.stdout.write(JSON.stringify({ apiVersion: 'client.authentication.k8s.io/v1', kind: ` +
        `'ExecCredential', status: { clientCertificateData: "${broken}", clientKeyData: "${broken}" ` +
        `} }));\n`,
    );
    // The server need not answer: the material is refused before any request.
    const err = await failure(
      client('https://127.0.0.1:1', {
        exec: {
          apiVersion: 'client.authentication.k8s.io/v1',
          command: process.execPath,
          args: [plugin],
          interactiveMode: 'Never',
        },
      }),
    );
    expect(err).toBeInstanceOf(TlsMaterialError);
    expect(err.message).toBe(
      'the kubeconfig for https://127.0.0.1:1 could not be used: its user "u" has an exec ' +
        'credential plugin that hands out a client certificate and key that cannot be used ' +
        '(damaged, or not of one key pair); fix the plugin or the credentials it hands out ' +
        '(clientCertificateData, clientKeyData)',
    );
    expect(err.message).not.toContain('SECRET-MARKER');
  });

  /** An exec plugin whose n-th run issues `tok<n>`, valid for `validMs`. */
  const tokenPlugin = (validMs: number) =>
    execPlugin(`{ token: 'tok' + n, expirationTimestamp: new Date(Date.now() + ${validMs}).toISOString() }`);

  it('renews a refused plugin credential once for all the requests refused together', async () => {
    const plugin = await tokenPlugin(3_600_000);
    const url = await serve((req, res) => {
      res.statusCode = req.headers.authorization === 'Bearer tok1' ? 401 : 200;
      res.end(res.statusCode === 200 ? '{}' : '{"kind":"Status","reason":"Unauthorized"}');
    });
    const c = await client(url, plugin.user());
    await Promise.all(Array.from({ length: 5 }, () => c.request('GET', '/version')));
    expect(await plugin.runs()).toBe(2);
    c.close();
  });

  it('gives up on a credential plugin that never answers, saying so', async () => {
    const plugin = await tokenPlugin(1);
    const url = await serve((_req, res) => res.end('{}'));
    const err = await failure(client(url, plugin.user([{ name: 'HANG', value: '1' }]), { authTimeoutMs: 500 }));
    expect(err).toBeInstanceOf(CredentialError);
    expect(err.message).toContain('gave no credential within 0.5 s');
  });
});

describe('KubeClient connections', () => {
  it('keeps at most four idle connections to a server once a burst of requests is over', async () => {
    const BURST = 12;
    const held: http.ServerResponse[] = [];
    const url = await serve((req, res) => {
      if (req.url === '/api/v1') {
        res.end(JSON.stringify({ resources: [{ name: 'namespaces', kind: 'Namespace', namespaced: false }] }));
        return;
      }
      // Every request of the burst waits for the others: each needs a connection of its own.
      held.push(res);
      if (held.length === BURST)
        for (const r of held.splice(0))
          r.end(JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'x' } }));
    });
    const c = await client(url, { token: 't' });
    await Promise.all(Array.from({ length: BURST }, (_, i) => c.get('v1', 'Namespace', `n${i}`)));
    await new Promise((r) => setTimeout(r, 100));
    const open = await new Promise<number>((resolve, reject) =>
      servers.at(-1)!.getConnections((err, n) => (err ? reject(err) : resolve(n))),
    );
    expect(open).toBeLessThanOrEqual(4);
  });
});

describe('KubeClient watch', () => {
  const event = { type: 'ADDED', object: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a' } } };

  /** Answers /version, and a watch with one event; a watch that comes on a kept-alive connection is cut (`cut` times). */
  async function server(cut: number): Promise<{ url: string; watches: () => number }> {
    let watches = 0;
    const used = new WeakSet<object>();
    const url = await serve((req, res) => {
      const reused = used.has(req.socket);
      used.add(req.socket);
      if (!req.url?.includes('watch=1')) return void res.end('{}');
      watches++;
      if (reused && cut-- > 0) return void req.socket.destroy();
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(`${JSON.stringify(event)}\n`);
    });
    return { url, watches: () => watches };
  }

  it('is counted in the request metrics like any request, as WATCH with the status of its answer', async () => {
    const records: RequestRecord[] = [];
    observeRequests((r) => records.push(r));
    try {
      const { url } = await server(0);
      const c = await client(url, { token: 't' });
      const events: WatchEvent[] = [];
      await c.watch('/api/v1/configmaps', {}, (e) => events.push(e), new AbortController().signal);
      expect(events).toEqual([event]);
      expect(records).toEqual([expect.objectContaining({ cluster: 'target', method: 'WATCH', code: 200 })]);
      c.close();
    } finally {
      observeRequests(undefined);
    }
  });

  it('opens again on a fresh connection when the kept-alive one it went out on had been closed', async () => {
    const { url, watches } = await server(1);
    const c = await client(url, { token: 't' });
    await c.request('GET', '/version');
    const events: WatchEvent[] = [];
    await c.watch('/api/v1/configmaps', {}, (e) => events.push(e), new AbortController().signal);
    expect(events).toEqual([event]);
    expect(watches()).toBe(2);
    c.close();
  });

  it('ends without an error when aborted while its stream is open', async () => {
    const url = await serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write(`${JSON.stringify(event)}\n`);
    });
    const c = await client(url, { token: 't' });
    const abort = new AbortController();
    await c.watch('/api/v1/configmaps', {}, () => abort.abort(), abort.signal);
    c.close();
  });

  it('fails as WatchFailed with the status a refused watch got, counted with it', async () => {
    const records: RequestRecord[] = [];
    observeRequests((r) => records.push(r));
    try {
      const url = await serve((_req, res) => {
        res.statusCode = 403;
        res.end('forbidden');
      });
      const c = await client(url, { token: 't' });
      const err = await failure(c.watch('/api/v1/configmaps', {}, () => undefined, new AbortController().signal));
      expect(err).toBeInstanceOf(KubeApiError);
      expect(err).toMatchObject({ status: 403, reason: 'WatchFailed', message: 'forbidden' });
      expect(records).toEqual([expect.objectContaining({ method: 'WATCH', code: 403 })]);
      c.close();
    } finally {
      observeRequests(undefined);
    }
  });
});
