// Registry access without a real registry: challenge and Retry-After parsing, docker config,
// the token cache, and the token flow, Basic auth, 429 and the HTTP fallback against a small
// loopback HTTP stub.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { createServer as createNetServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ApplicationFailure } from '@temporalio/common';
import { afterEach, describe, expect, it } from 'vitest';
import { BlobCache } from '../../src/activities/blob-cache';
import { artifactFailure, ensureLayer } from '../../src/activities/install/fetch';
import { parseSecretRef } from '../../src/activities/registry-secret';
import { configFromEnv } from '../../src/infra/config';
import { parseChallenges, parseDockerConfig, parseRetryAfter, TokenCache } from '../../src/oci/auth';
import { OciError, sha256Digest } from '../../src/oci/errors';
import { isLoopback, Registries } from '../../src/oci/registries';
import { parseEndpoint } from '../../src/oci/registry-transport';
import { OciRegistryClient } from '../../src/oci/registry-client';

describe('WWW-Authenticate', () => {
  it('parses a Bearer challenge with a scope that holds commas', () => {
    expect(
      parseChallenges(
        'Bearer realm="https://auth.example.com/token",service="registry.example.com",scope="repository:a/b:pull,push"',
      ),
    ).toEqual([
      {
        scheme: 'bearer',
        params: {
          realm: 'https://auth.example.com/token',
          service: 'registry.example.com',
          scope: 'repository:a/b:pull,push',
        },
      },
    ]);
  });

  it('parses Basic, unquoted values, and several challenges in one header', () => {
    expect(parseChallenges('Basic realm="Registry Realm"')).toEqual([
      { scheme: 'basic', params: { realm: 'Registry Realm' } },
    ]);
    expect(parseChallenges('Bearer realm=https://a/token, Basic realm="x"')).toEqual([
      { scheme: 'bearer', params: { realm: 'https://a/token' } },
      { scheme: 'basic', params: { realm: 'x' } },
    ]);
    expect(parseChallenges(undefined)).toEqual([]);
  });
});

describe('Retry-After', () => {
  it('takes seconds or an HTTP date', () => {
    const now = Date.parse('2026-01-01T00:00:00Z');
    expect(parseRetryAfter('7', now)).toBe(7000);
    expect(parseRetryAfter('Thu, 01 Jan 2026 00:00:30 GMT', now)).toBe(30_000);
    expect(parseRetryAfter('Wed, 31 Dec 2025 23:00:00 GMT', now)).toBe(0);
    expect(parseRetryAfter('soon', now)).toBeUndefined();
    expect(parseRetryAfter(undefined, now)).toBeUndefined();
  });

  it('makes a retryable activity failure with nextRetryDelay', () => {
    const failure = artifactFailure(new OciError('RegistryError', 'HTTP 429', 7000), 'fetching');
    expect(failure).toBeInstanceOf(ApplicationFailure);
    const f = failure as ApplicationFailure;
    expect(f.nonRetryable).toBe(false);
    expect(f.type).toBe('RegistryError');
    expect(f.nextRetryDelay).toBe(7000);
    // A day's Retry-After is capped at the install's longest wait between attempts, 30 s: its Kyma's other installs wait through it.
    const day = artifactFailure(
      new OciError('RegistryError', 'HTTP 503', 86_400_000),
      'fetching',
    ) as ApplicationFailure;
    expect(day.nextRetryDelay).toBe(30_000);
    const refused = artifactFailure(
      new OciError('RegistryCredentialsRefused', 'refused'),
      'fetching',
    ) as ApplicationFailure;
    expect(refused.nonRetryable).toBe(true);
    expect(refused.type).toBe('RegistryCredentialsRefused');
  });
});

describe('docker config and Secret references', () => {
  it('reads auths by host, from auth or username/password, whatever the key looks like', () => {
    const json = JSON.stringify({
      auths: {
        'https://index.docker.io/v1/': { auth: Buffer.from('bob:pa:ss').toString('base64') },
        'Registry.Example.com:5000': { username: 'alice', password: 'x' },
        'empty.example.com': {},
      },
    });
    const auths = parseDockerConfig(json);
    expect([...auths.keys()]).toEqual(['index.docker.io', 'registry.example.com:5000']);
    expect(auths.get('index.docker.io')).toEqual({ username: 'bob', password: 'pa:ss' });
    expect(() => parseDockerConfig('{}')).toThrow(/auths/);
  });

  it('names a Secret as upstream does: the name in kcp-system, or namespace/name', () => {
    expect(parseSecretRef('regcred')).toEqual({ namespace: 'kcp-system', name: 'regcred' });
    expect(parseSecretRef('ops/regcred')).toEqual({ namespace: 'ops', name: 'regcred' });
    expect(() => parseSecretRef('a/b/c')).toThrow();
  });
});

describe('token cache', () => {
  it('keeps a token until shortly before it expires (60 s by default) and shares a pending fetch', async () => {
    let now = 0;
    const cache = new TokenCache(() => now);
    let fetched = 0;
    const fetch = () => Promise.resolve({ token: `t${++fetched}` });
    const [a, b] = await Promise.all([cache.obtain('k', fetch), cache.obtain('k', fetch)]);
    expect([a, b, fetched]).toEqual(['t1', 't1', 1]);
    now = 49_000;
    expect(await cache.obtain('k', fetch)).toBe('t1');
    now = 50_000;
    expect(await cache.obtain('k', fetch)).toBe('t2');
    // A short-lived token is kept for half its life at least.
    expect(await cache.obtain('short', () => Promise.resolve({ token: 's', expiresIn: 4 }))).toBe('s');
    now += 1999;
    expect(cache.get('short')).toBe('s');
    now += 1;
    expect(cache.get('short')).toBeUndefined();
  });
});

describe('wiring', () => {
  it("needs the process's Registries: a blob cache or client without them fails at once, not at the first private registry", () => {
    const missing = undefined as unknown as Registries;
    expect(() => new BlobCache(tmpdir(), missing)).toThrow(/needs the worker's Registries/);
    expect(() => new OciRegistryClient('registry.example.com', missing)).toThrow(/needs the process's Registries/);
    const r = new Registries({ systemCaFile: null });
    expect(new BlobCache(tmpdir(), r).registries).toBe(r);
  });
});

describe('schemes', () => {
  it('lets an explicit http:// KLM_OCI_REGISTRY_HOST speak plain HTTP, as documented', () => {
    const config = configFromEnv({
      KLM_OCI_REGISTRY_HOST: 'http://Reg.internal:5000/modules',
      KLM_INSECURE_REGISTRIES: 'other.internal',
    });
    expect(config.registry.insecureHosts).toEqual(['other.internal', 'reg.internal:5000']);
    expect(new Registries(config.registry).mayUseHttp('reg.internal:5000')).toBe(true);
    expect(configFromEnv({ KLM_OCI_REGISTRY_HOST: 'https://reg.internal:5000' }).registry.insecureHosts).toEqual([]);
    expect(configFromEnv({ KLM_OCI_REGISTRY_HOST: 'reg.internal:5000' }).registry.insecureHosts).toEqual([]);
  });

  it('lets loopback and listed hosts use plain HTTP, nothing else', () => {
    expect(isLoopback('127.0.0.1:5000')).toBe(true);
    expect(isLoopback('127.1.2.3')).toBe(true);
    expect(isLoopback('localhost:5000')).toBe(true);
    expect(isLoopback('[::1]:5000')).toBe(true);
    expect(isLoopback('128.0.0.1:5000')).toBe(false);
    // k3d names its registry `k3d-<name>.localhost`.
    expect(isLoopback('k3d-registry.localhost:5000')).toBe(true);
    expect(isLoopback('localhost.example.com')).toBe(false);
    const r = new Registries({ insecureHosts: ['reg.internal:5000', 'other.internal'] });
    expect(r.mayUseHttp('reg.internal:5000')).toBe(true);
    expect(r.mayUseHttp('reg.internal:5001')).toBe(false);
    expect(r.mayUseHttp('other.internal:443')).toBe(true);
    expect(r.mayUseHttp('registry.example.com')).toBe(false);
    expect(parseEndpoint('https://Reg.example.com/prefix/')).toEqual({
      host: 'reg.example.com',
      scheme: 'https',
      basePath: '/prefix',
    });
  });
});

/** A registry stub on loopback plain HTTP. */
async function stub(
  handler: (req: IncomingMessage, res: ServerResponse, base: string) => void,
): Promise<{ server: Server; host: string; tlsAttempts: () => number }> {
  let tls = 0;
  let base = '';
  const server = createServer((req, res) => handler(req, res, base));
  // A TLS ClientHello sent to a plain HTTP server is a malformed request.
  server.on('clientError', (_err, socket) => {
    tls++;
    socket.end('HTTP/1.1 400 Bad Request\r\nconnection: close\r\n\r\n');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const host = `127.0.0.1:${(server.address() as AddressInfo).port}`;
  base = `http://${host}`;
  return { server, host, tlsAttempts: () => tls };
}

const servers: Server[] = [];
const cleanups: (() => void)[] = [];
afterEach(async () => {
  for (const s of servers.splice(0))
    await new Promise((r) => {
      s.closeAllConnections();
      s.close(r);
    });
  for (const c of cleanups.splice(0)) c();
});

/**
 * A stub that speaks TLS and plain HTTP on one loopback port (the first byte tells them apart),
 * with a self-signed certificate for 127.0.0.1; `caFile` trusts it.
 */
async function dualStub(
  handler: (req: IncomingMessage, res: ServerResponse, secure: boolean) => void,
): Promise<{ host: string; caFile: string }> {
  const dir = mkdtempSync(path.join(tmpdir(), 'klm-tls-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  const key = path.join(dir, 'key.pem');
  const cert = path.join(dir, 'cert.pem');
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-subj',
      '/CN=127.0.0.1',
      '-addext',
      'subjectAltName=IP:127.0.0.1',
      '-days',
      '1',
      '-keyout',
      key,
      '-out',
      cert,
    ],
    { stdio: 'ignore' },
  );
  const plain = createServer((req, res) => handler(req, res, false));
  const secure = createHttpsServer({ key: readFileSync(key), cert: readFileSync(cert) }, (req, res) =>
    handler(req, res, true),
  );
  const front = createNetServer({ pauseOnConnect: true }, (socket) => {
    socket.once('readable', () => {
      const first = socket.read(1) as Buffer | null;
      if (!first) return void socket.destroy();
      socket.unshift(first);
      (first[0] === 0x16 ? secure : plain).emit('connection', socket);
    });
  });
  await new Promise<void>((r) => front.listen(0, '127.0.0.1', r));
  servers.push(plain, secure);
  cleanups.push(() => front.close());
  return { host: `127.0.0.1:${(front.address() as AddressInfo).port}`, caFile: cert };
}

const blob = Buffer.from('layer');
const digest = sha256Digest(blob);

describe('registry access against a stub', () => {
  it('falls back to HTTP on loopback once and remembers it; an explicit http:// URL goes straight there', async () => {
    const s = await stub((_req, res) => res.end(blob));
    servers.push(s.server);
    const r = new Registries({ systemCaFile: null });
    expect((await r.client(s.host).pullBlob('m', digest)).equals(blob)).toBe(true);
    expect(s.tlsAttempts()).toBe(1);
    await r.client(s.host).pullBlob('m', digest);
    expect(s.tlsAttempts()).toBe(1);
    await new Registries({ systemCaFile: null }).client(`http://${s.host}`).pullBlob('m', digest);
    expect(s.tlsAttempts()).toBe(1);
  });

  it('gets a token from the realm with the credentials, caches it per scope, and sends it as Bearer', async () => {
    const seen: { tokenAuth?: string; scope: string | null }[] = [];
    const s = await stub((req, res, base) => {
      const url = new URL(req.url!, base);
      if (url.pathname === '/token') {
        seen.push({ tokenAuth: req.headers.authorization, scope: url.searchParams.get('scope') });
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify({ token: 'tok-123', expires_in: 300 }));
        return;
      }
      if (req.headers.authorization !== 'Bearer tok-123') {
        res
          .writeHead(401, {
            'www-authenticate': `Bearer realm="${base}/token",service="stub",scope="repository:m:pull"`,
          })
          .end();
        return;
      }
      res.end(blob);
    });
    servers.push(s.server);
    const r = new Registries({
      systemCaFile: null,
      credentials: {
        describe: 'Secret kcp-system/regcred',
        credentialsFor: () => Promise.resolve({ username: 'u', password: 'p' }),
      },
    });
    await r.client(s.host).pullBlob('m', digest);
    await r.client(s.host).pullBlob('m', digest);
    expect(seen).toEqual([{ tokenAuth: `Basic ${Buffer.from('u:p').toString('base64')}`, scope: 'repository:m:pull' }]);
  });

  it('refuses with a typed error that names the Secret and never the password', async () => {
    const s = await stub((req, res, base) => {
      const url = new URL(req.url!, base);
      if (url.pathname === '/token') {
        res.writeHead(401).end();
        return;
      }
      res.writeHead(401, { 'www-authenticate': `Bearer realm="${base}/token",service="stub"` }).end();
    });
    servers.push(s.server);
    const r = new Registries({
      systemCaFile: null,
      credentials: {
        describe: 'Secret kcp-system/regcred',
        credentialsFor: () => Promise.resolve({ username: 'u', password: 'hunter2' }),
      },
    });
    const err = await r
      .client(s.host)
      .pullBlob('m', digest)
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OciError);
    expect((err as OciError).reason).toBe('RegistryCredentialsRefused');
    expect((err as OciError).message).toContain('refused the credentials from Secret kcp-system/regcred');
    expect((err as OciError).message).not.toContain('hunter2');
  });

  it('answers a Basic challenge with the credentials, and refuses anonymous access clearly', async () => {
    const s = await stub((req, res) => {
      if (req.headers.authorization !== `Basic ${Buffer.from('u:p').toString('base64')}`) {
        res.writeHead(401, { 'www-authenticate': 'Basic realm="stub"' }).end();
        return;
      }
      res.end(blob);
    });
    servers.push(s.server);
    const withCreds = new Registries({
      systemCaFile: null,
      credentials: {
        describe: 'Secret kcp-system/regcred',
        credentialsFor: () => Promise.resolve({ username: 'u', password: 'p' }),
      },
    });
    expect((await withCreds.client(s.host).pullBlob('m', digest)).equals(blob)).toBe(true);
    const anonymous = await new Registries({ systemCaFile: null })
      .client(s.host)
      .pullBlob('m', digest)
      .then(
        () => {
          throw new Error('expected a failure');
        },
        (e: unknown) => e as OciError,
      );
    expect(anonymous.reason).toBe('RegistryCredentialsRefused');
    expect(anonymous.message).toMatch(/refused anonymous access.*KLM_OCI_REGISTRY_CRED_SECRET/);
  });

  it('bothers with unreadable credentials only when the registry asks for them', async () => {
    const s = await stub((req, res) => {
      if (req.url?.includes('private')) res.writeHead(401, { 'www-authenticate': 'Basic realm="stub"' }).end();
      else res.end(blob);
    });
    servers.push(s.server);
    const missing = {
      describe: 'Secret kcp-system/regcred',
      credentialsFor: () => Promise.reject(new Error('Secret kcp-system/regcred does not exist')),
    };
    const c = new Registries({ systemCaFile: null, credentials: missing }).client(s.host);
    expect((await c.pullBlob('public', digest)).equals(blob)).toBe(true);
    const err = await c.pullBlob('private', digest).then(
      () => {
        throw new Error('expected a failure');
      },
      (e: unknown) => e as OciError,
    );
    expect(err.reason).toBe('RegistryCredentialsRefused');
    expect(err.message).toContain('Secret kcp-system/regcred does not exist');
  });

  it('carries Retry-After of a 429 or 503 on the error', async () => {
    let n = 0;
    const s = await stub((_req, res) => {
      n++;
      if (n === 1) res.writeHead(429, { 'retry-after': '3' }).end('slow down');
      else res.writeHead(503, { 'retry-after': new Date(Date.now() + 60_000).toUTCString() }).end();
    });
    servers.push(s.server);
    const c = new Registries({ systemCaFile: null }).client(`http://${s.host}`);
    const first = await c.pullBlob('m', digest).then(
      () => {
        throw new Error('expected a failure');
      },
      (e: unknown) => e as OciError,
    );
    expect([first.reason, first.retryAfterMs]).toEqual(['RegistryError', 3000]);
    const second = await c.pullBlob('m', digest).then(
      () => {
        throw new Error('expected a failure');
      },
      (e: unknown) => e as OciError,
    );
    expect(second.retryAfterMs).toBeGreaterThan(55_000);
    expect(second.retryAfterMs).toBeLessThanOrEqual(60_000);
  });

  it('keeps the Basic credentials of a token request from a host the token service redirects to', async () => {
    const elsewhere: (string | undefined)[] = [];
    const other = await stub((req, res) => {
      elsewhere.push(req.headers.authorization);
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ token: 'tok-1' }));
    });
    servers.push(other.server);
    const s = await stub((req, res, base) => {
      const url = new URL(req.url!, base);
      // The token service sends the client on to another host (another port is another host).
      if (url.pathname === '/token')
        return void res.writeHead(302, { location: `http://${other.host}/token${url.search}` }).end();
      if (req.headers.authorization !== 'Bearer tok-1')
        return void res.writeHead(401, { 'www-authenticate': `Bearer realm="${base}/token",service="stub"` }).end();
      res.end(blob);
    });
    servers.push(s.server);
    const r = new Registries({
      systemCaFile: null,
      credentials: {
        describe: 'Secret kcp-system/regcred',
        credentialsFor: () => Promise.resolve({ username: 'u', password: 'hunter2' }),
      },
    });
    await r
      .client(`http://${s.host}`)
      .pullBlob('m', digest)
      .catch(() => undefined);
    expect(elsewhere).toEqual([undefined]);
  });

  it('drops Authorization when a redirect leaves HTTPS for plain HTTP on the same host', async () => {
    const plainAuth: (string | undefined)[] = [];
    const basicAuth = `Basic ${Buffer.from('u:hunter2').toString('base64')}`;
    const reg = await dualStub((req, res, secure) => {
      if (!secure) {
        plainAuth.push(req.headers.authorization);
        return void res.end(blob);
      }
      if (req.headers.authorization !== basicAuth)
        return void res.writeHead(401, { 'www-authenticate': 'Basic realm="stub"' }).end();
      res.writeHead(307, { location: `http://${req.headers.host}/plain/blob` }).end();
    });
    const r = new Registries({
      systemCaFile: null,
      caFile: reg.caFile,
      credentials: {
        describe: 'Secret kcp-system/regcred',
        credentialsFor: () => Promise.resolve({ username: 'u', password: 'hunter2' }),
      },
    });
    expect((await r.client(`https://${reg.host}`).pullBlob('m', digest)).equals(blob)).toBe(true);
    expect(plainAuth).toEqual([undefined]);
  });

  it('refuses a plain-HTTP token realm on a host that may not use HTTP, naming no secret', async () => {
    const reg = await dualStub(
      (_req, res) =>
        void res
          .writeHead(401, { 'www-authenticate': 'Bearer realm="http://auth.example.invalid/token",service="stub"' })
          .end(),
    );
    const r = new Registries({
      systemCaFile: null,
      caFile: reg.caFile,
      credentials: {
        describe: 'Secret kcp-system/regcred',
        credentialsFor: () => Promise.resolve({ username: 'u', password: 'hunter2' }),
      },
    });
    const err = await r
      .client(`https://${reg.host}`)
      .pullBlob('m', digest)
      .then(
        () => {
          throw new Error('expected a failure');
        },
        (e: unknown) => e as OciError,
      );
    expect(err).toBeInstanceOf(OciError);
    expect(err.message).toMatch(/plain-HTTP token realm on auth\.example\.invalid/);
    expect(err.message).not.toContain('hunter2');
    // Loopback and listed hosts may.
    expect(new Registries({ insecureHosts: ['auth.example.invalid'] }).mayUseHttp('auth.example.invalid')).toBe(true);
  });

  it('fails as RegistryUnavailable when the registry sends nothing for the idle timeout, but lets a slow blob stream', async () => {
    const big = Buffer.alloc(5000, 7);
    const bigDigest = sha256Digest(big);
    const s = await stub((req, res) => {
      if (req.url?.includes('/silent/')) return; // never answers
      if (req.url?.includes('/stalls/')) {
        res.writeHead(200, { 'content-length': String(blob.length + 10) });
        res.write(blob); // then nothing
        return;
      }
      // 5 chunks 120 ms apart: longer than the idle timeout in all, never idle that long.
      res.writeHead(200, { 'content-length': String(big.length) });
      let i = 0;
      const next = () => {
        res.write(big.subarray(i * 1000, (i + 1) * 1000));
        if (++i < 5) setTimeout(next, 120);
        else res.end();
      };
      next();
    });
    servers.push(s.server);
    const c = new Registries({ systemCaFile: null, idleTimeoutMs: 300 }).client(`http://${s.host}`);
    for (const repo of ['silent', 'stalls']) {
      const err = await c.pullBlob(repo, digest).then(
        () => {
          throw new Error('expected a failure');
        },
        (e: unknown) => e as OciError,
      );
      expect(err).toBeInstanceOf(OciError);
      expect(err.reason).toBe('RegistryUnavailable');
      expect(err.message).toMatch(/did not answer in time/);
    }
    expect((await c.pullBlob('slow', bigDigest)).equals(big)).toBe(true);
  });

  it('pulls a digest once however many installs ask for it at the same time', async () => {
    let served = 0;
    const s = await stub((_req, res) => {
      served++;
      // Slow enough that every request arrives while the first is in flight.
      setTimeout(() => res.end(blob), 100);
    });
    servers.push(s.server);
    const dir = mkdtempSync(path.join(tmpdir(), 'klm-blobs-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const cache = new BlobCache(dir, new Registries({ systemCaFile: null }));
    const layer = { registry: `http://${s.host}`, repository: 'm', digest, size: blob.length, format: 'yaml' as const };
    const got = await Promise.all(Array.from({ length: 8 }, () => ensureLayer(cache, layer)));
    expect(got.every((b) => b.equals(blob))).toBe(true);
    expect(served).toBe(1);
    // Kept: later requests are answered from disk.
    await ensureLayer(cache, layer);
    expect(served).toBe(1);
    // A failed pull is shared too, and not kept: the next request tries again.
    const failing = { ...layer, repository: 'x', digest: sha256Digest(Buffer.from('other')) };
    const errors = await Promise.all(
      Array.from({ length: 4 }, () =>
        ensureLayer(cache, failing).then(
          () => undefined,
          (e: unknown) => e as OciError,
        ),
      ),
    );
    expect(errors.every((e) => e?.reason === 'DigestMismatch')).toBe(true);
    expect(served).toBe(2);
  });

  it('lets every caller waiting on a shared pull hear of its chunks (each activity heartbeats)', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'klm-blobs-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const cache = new BlobCache(dir, new Registries({ systemCaFile: null }));
    let pulls = 0;
    const pull = async (onChunk: () => void) => {
      pulls++;
      for (let i = 0; i < 3; i++) {
        await new Promise((r) => setTimeout(r, 20));
        onChunk();
      }
      return blob;
    };
    const heard = [0, 0];
    await Promise.all(heard.map((_, i) => cache.obtain(digest, pull, { onChunk: () => heard[i]!++ })));
    expect(pulls).toBe(1);
    expect(heard).toEqual([3, 3]);
  });
});
