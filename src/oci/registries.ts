// How this process reaches OCI registries: which scheme (HTTPS unless a host may speak plain
// HTTP), which CAs it trusts (Node's roots, the system store, a configured bundle), and how it
// authenticates (the distribution token flow, or Basic) with credentials from a source such as
// a dockerconfigjson Secret. One `Registries` per process: it keeps the scheme each host speaks,
// the tokens per (registry, scope, credentials), and one client per registry.
//
// Built on node:http/https rather than fetch: an https.Agent takes the CA list directly, and the
// response body streams as a Node stream, with no extra dependency.
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import http, { type IncomingMessage } from 'node:http';
import https from 'node:https';
import { isIP } from 'node:net';
import tls from 'node:tls';
import { parseChallenges, parseRetryAfter, TokenCache, type Challenge, type Credentials } from './auth';
import { OciError } from './errors';
import { OciRegistryClient } from './registry-client';
import type { Endpoint, HttpResponse, RegistryRequest, RegistryTransport } from './registry-transport';

/** Credentials by registry host, and a name for where they come from (never their content). */
export interface CredentialSource {
  /** `Secret <namespace>/<name>` or the like: what a person should look at when they are refused. */
  readonly describe: string;
  credentialsFor(host: string): Promise<Credentials | undefined>;
}

export interface RegistriesOptions {
  /** A PEM bundle of extra CAs (e.g. a private registry's CA). */
  caFile?: string;
  /** Hosts (`host` or `host:port`) that may be reached over plain HTTP when they do not speak TLS. */
  insecureHosts?: string[];
  credentials?: CredentialSource;
  /** The system trust store; `null`: none. Default: Debian's bundle when it exists. */
  systemCaFile?: string | null;
  /** Environment names for messages (the settings a person can change). */
  caSetting?: string;
  /**
   * How long a registry may send nothing (no answer, no body bytes) before the request fails as
   * RegistryUnavailable. Reset by every chunk, so a big blob still streams. Default 30 s.
   */
  idleTimeoutMs?: number;
}

export const DEFAULT_IDLE_TIMEOUT_MS = 30_000;

export const SYSTEM_CA_FILE = '/etc/ssl/certs/ca-certificates.crt';

/** The host name of `host:port`, `[v6]:port` or a bare name. */
export function hostnameOf(host: string): string {
  if (host.startsWith('[')) return host.slice(1, host.indexOf(']'));
  const colons = host.split(':').length - 1;
  return colons === 1 ? host.slice(0, host.indexOf(':')) : host;
}

export function isLoopback(host: string): boolean {
  const name = hostnameOf(host).toLowerCase();
  // `*.localhost` resolves to loopback (RFC 6761), e.g. k3d's `k3d-registry.localhost`.
  if (name === 'localhost' || name.endsWith('.localhost') || name === '::1') return true;
  return isIP(name) === 4 && name.startsWith('127.');
}

/** TLS handshake errors that mean the other side speaks plain HTTP, not TLS. */
const NOT_TLS =
  /wrong version number|packet length too long|http request|unknown protocol|disconnected before secure TLS connection/i;

const CERT_ERRORS = new Set([
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'ERR_TLS_CERT_ALTNAME_INVALID',
  'CERT_SIGNATURE_FAILURE',
  'CERT_UNTRUSTED',
]);

function response(res: IncomingMessage, url: string): HttpResponse {
  const buffer = async () => {
    const chunks: Buffer[] = [];
    for await (const c of res) chunks.push(c as Buffer);
    return Buffer.concat(chunks);
  };
  return {
    status: res.statusCode ?? 0,
    header: (name) => {
      const v = res.headers[name.toLowerCase()];
      return Array.isArray(v) ? v.join(', ') : v;
    },
    body: res,
    buffer,
    text: async () => (await buffer()).toString('utf8'),
    drain: async () => {
      res.resume();
      if (!res.complete)
        await new Promise<void>((resolve) => {
          res.on('end', resolve);
          res.on('error', () => resolve());
          res.on('close', resolve);
        });
    },
    url,
  };
}

export class Registries implements RegistryTransport {
  private readonly httpsAgent: https.Agent;
  private readonly httpAgent = new http.Agent({ keepAlive: true });
  private readonly insecure: Set<string>;
  /** The scheme each host answered on. */
  private readonly schemes = new Map<string, 'http' | 'https'>();
  /** Hosts that asked for Basic auth. */
  private readonly basicHosts = new Set<string>();
  private readonly clients = new Map<string, OciRegistryClient>();
  readonly tokens = new TokenCache();
  readonly credentials?: CredentialSource;
  private readonly caSetting: string;
  private readonly idleTimeoutMs: number;

  constructor(readonly options: RegistriesOptions = {}) {
    const ca = [...tls.rootCertificates];
    const system = options.systemCaFile === undefined ? SYSTEM_CA_FILE : options.systemCaFile;
    if (system && existsSync(system)) ca.push(readFileSync(system, 'utf8'));
    if (options.caFile) {
      try {
        ca.push(readFileSync(options.caFile, 'utf8'));
      } catch (err) {
        const why = (err as Error).message;
        throw new Error(`the registry CA bundle ${options.caFile} cannot be read: ${why}`, { cause: err });
      }
    }
    this.httpsAgent = new https.Agent({ keepAlive: true, ca });
    this.insecure = new Set((options.insecureHosts ?? []).map((h) => h.trim().toLowerCase()).filter(Boolean));
    this.credentials = options.credentials;
    this.caSetting = options.caSetting ?? 'KLM_REGISTRY_CA_FILE';
    this.idleTimeoutMs = options.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS;
  }

  /**
   * A shared instance with no configuration (system trust, no credentials, no insecure hosts
   * besides loopback): for tests and for publishing to a local registry only. The worker builds
   * its own from its configuration (`registriesFromConfig`) and passes it on explicitly.
   */
  static unconfigured(): Registries {
    return (unconfiguredRegistries ??= new Registries());
  }

  /** One client per registry (host:port or URL). */
  client(registry: string): OciRegistryClient {
    let c = this.clients.get(registry);
    if (!c) {
      c = new OciRegistryClient(registry, this);
      this.clients.set(registry, c);
    }
    return c;
  }

  /** Whether plain HTTP may be used for a host (loopback, or listed as insecure). */
  mayUseHttp(host: string): boolean {
    return isLoopback(host) || this.insecure.has(host) || this.insecure.has(hostnameOf(host));
  }

  /** The scheme a host speaks, as far as known. */
  schemeOf(endpoint: Endpoint): 'http' | 'https' | undefined {
    return endpoint.scheme ?? this.schemes.get(endpoint.host);
  }

  /** The base URL of an endpoint (`https://host/prefix`), as far as the scheme is known. */
  baseUrl(endpoint: Endpoint): string {
    return `${this.schemeOf(endpoint) ?? 'https'}://${endpoint.host}${endpoint.basePath}`;
  }

  /**
   * Sends a request to a registry: HTTPS (or HTTP where allowed and the host speaks no TLS),
   * authenticated as the registry's challenge asks. 401/403 after authenticating, 429 and 5xx
   * become OciErrors; every other status is the caller's.
   */
  async send(endpoint: Endpoint, req: RegistryRequest): Promise<HttpResponse> {
    const scope = `repository:${req.repository}:${req.push ? 'pull,push' : 'pull'}`;
    // Credentials that cannot be read (a missing Secret, say) matter only to a registry that asks.
    let credsProblem: OciError | undefined;
    const creds = await this.lookupCredentials(endpoint.host, req.what).catch((err: OciError) => {
      credsProblem = err;
      return undefined;
    });
    const key = tokenKey(endpoint.host, scope, creds);
    let auth = this.tokens.get(key);
    let authorization = auth
      ? `Bearer ${auth}`
      : creds && this.basicHosts.has(endpoint.host)
        ? basic(creds)
        : undefined;
    let res = await this.exchange(endpoint, req, authorization);
    if (res.status === 401) {
      const challenges = parseChallenges(res.header('www-authenticate'));
      await res.drain();
      if (credsProblem) throw credsProblem;
      const bearer = challenges.find((c) => c.scheme === 'bearer');
      const basicChallenge = challenges.find((c) => c.scheme === 'basic');
      if (bearer) {
        if (auth) this.tokens.delete(key);
        auth = await this.tokens.obtain(key, () => this.fetchToken(endpoint, bearer, scope, creds, req.what));
        authorization = `Bearer ${auth}`;
      } else if (basicChallenge) {
        if (!creds) throw this.refused(endpoint, req, 401, undefined);
        this.basicHosts.add(endpoint.host);
        authorization = basic(creds);
      } else {
        throw new OciError(
          'RegistryError',
          `registry ${endpoint.host} answered 401 without a challenge we know while ${req.what}`,
        );
      }
      res = await this.exchange(endpoint, req, authorization);
    }
    if (res.status === 401 || res.status === 403) {
      await res.drain();
      if (credsProblem) throw credsProblem;
      if (auth) this.tokens.delete(key);
      throw this.refused(endpoint, req, res.status, creds);
    }
    if (res.status === 429 || res.status >= 500) {
      const body = (await res.text()).trim().slice(0, 200);
      const retryAfterMs = parseRetryAfter(res.header('retry-after'));
      const wait = retryAfterMs !== undefined ? `; it asks to retry after ${Math.ceil(retryAfterMs / 1000)} s` : '';
      throw new OciError(
        'RegistryError',
        `registry ${endpoint.host} answered HTTP ${res.status} while ${req.what}${wait}${body ? `: ${body}` : ''}`,
        retryAfterMs,
      );
    }
    return res;
  }

  private async lookupCredentials(host: string, what: string): Promise<Credentials | undefined> {
    if (!this.credentials) return undefined;
    try {
      return await this.credentials.credentialsFor(host);
    } catch (err) {
      throw new OciError(
        'RegistryCredentialsRefused',
        `registry credentials for ${host} (${this.credentials.describe}) cannot be used while ${what}: ${(err as Error).message}`,
      );
    }
  }

  private refused(endpoint: Endpoint, req: RegistryRequest, status: number, creds: Credentials | undefined): OciError {
    const access = req.push ? 'push to' : 'pull from';
    if (creds) {
      return new OciError(
        'RegistryCredentialsRefused',
        `registry ${endpoint.host} refused the credentials from ` +
          `${this.credentials?.describe ?? 'the configuration'} (HTTP ${status}) to ${access} ` +
          `${req.repository} while ${req.what}`,
      );
    }
    const where = this.credentials
      ? `${this.credentials.describe} has no entry for ${endpoint.host}`
      : 'no registry credentials are configured (KLM_OCI_REGISTRY_CRED_SECRET)';
    return new OciError(
      'RegistryCredentialsRefused',
      `registry ${endpoint.host} refused anonymous access (HTTP ${status}) to ${access} ${req.repository} while ${req.what}: ${where}`,
    );
  }

  /** Gets a token from the challenge's realm (RFC 6750 / distribution token spec). */
  private async fetchToken(
    endpoint: Endpoint,
    challenge: Challenge,
    scope: string,
    creds: Credentials | undefined,
    what: string,
  ): Promise<{ token: string; expiresIn?: number }> {
    const realm = challenge.params.realm;
    if (!realm || !/^https?:\/\//i.test(realm))
      throw new OciError('RegistryError', `registry ${endpoint.host} named no usable token realm while ${what}`);
    const url = new URL(realm);
    // The realm gets the Basic credentials: over plain HTTP only where the registry rule allows it.
    if (url.protocol === 'http:' && !this.mayUseHttp(url.host.toLowerCase())) {
      throw new OciError(
        'RegistryError',
        `registry ${endpoint.host} names a plain-HTTP token realm on ${url.host} while ${what}; ` +
          `credentials go over plain HTTP only to loopback hosts or hosts listed in ` +
          `KLM_INSECURE_REGISTRIES`,
      );
    }
    if (challenge.params.service) url.searchParams.set('service', challenge.params.service);
    url.searchParams.set('scope', scope);
    const headers: Record<string, string> = { accept: 'application/json' };
    if (creds) headers.authorization = basic(creds);
    let res: HttpResponse;
    try {
      res = await this.raw(url, { method: 'GET', headers }, url.host.toLowerCase());
    } catch (err) {
      throw this.unreachable(url.host, `getting a token for ${endpoint.host} while ${what}`, err);
    }
    if (res.status === 401 || res.status === 403) {
      await res.drain();
      throw this.refused(
        endpoint,
        {
          path: '',
          repository: scope.split(':')[1] ?? '',
          push: scope.endsWith('push'),
          what: `${what} (token service ${url.host})`,
        },
        res.status,
        creds,
      );
    }
    if (res.status === 429 || res.status >= 500) {
      await res.drain();
      const retryAfterMs = parseRetryAfter(res.header('retry-after'));
      throw new OciError(
        'RegistryError',
        `token service ${url.host} of registry ${endpoint.host} answered HTTP ${res.status} while ${what}`,
        retryAfterMs,
      );
    }
    const text = await res.text();
    if (res.status !== 200)
      throw new OciError(
        'RegistryError',
        `token service ${url.host} of registry ${endpoint.host} answered HTTP ${res.status} while ${what}`,
      );
    let body: { token?: unknown; access_token?: unknown; expires_in?: unknown };
    try {
      body = JSON.parse(text) as typeof body;
    } catch {
      throw new OciError(
        'RegistryError',
        `token service ${url.host} of registry ${endpoint.host} answered no JSON while ${what}`,
      );
    }
    const token =
      typeof body.token === 'string'
        ? body.token
        : typeof body.access_token === 'string'
          ? body.access_token
          : undefined;
    if (!token)
      throw new OciError(
        'RegistryError',
        `token service ${url.host} of registry ${endpoint.host} answered no token while ${what}`,
      );
    return { token, ...(typeof body.expires_in === 'number' ? { expiresIn: body.expires_in } : {}) };
  }

  /** One request on the endpoint's scheme; a host that may use HTTP and speaks no TLS is asked over HTTP. */
  private async exchange(
    endpoint: Endpoint,
    req: RegistryRequest,
    authorization: string | undefined,
  ): Promise<HttpResponse> {
    const headers = { ...(req.headers ?? {}), ...(authorization ? { authorization } : {}) };
    const init = { method: req.method ?? 'GET', headers, body: req.body };
    const known = this.schemeOf(endpoint);
    const target = (scheme: string) =>
      /^https?:\/\//i.test(req.path)
        ? new URL(req.path)
        : new URL(`${scheme}://${endpoint.host}${endpoint.basePath}${req.path}`);
    try {
      if (known || !this.mayUseHttp(endpoint.host))
        return await this.raw(target(known ?? 'https'), init, endpoint.host);
      try {
        const res = await this.raw(target('https'), init, endpoint.host);
        this.schemes.set(endpoint.host, 'https');
        return res;
      } catch (err) {
        if (!NOT_TLS.test((err as Error).message ?? '')) throw err;
        const res = await this.raw(target('http'), init, endpoint.host);
        this.schemes.set(endpoint.host, 'http');
        return res;
      }
    } catch (err) {
      if (err instanceof OciError) throw err;
      throw this.unreachable(endpoint.host, req.what, err);
    }
  }

  private unreachable(host: string, what: string, err: unknown): OciError {
    const e = err as NodeJS.ErrnoException;
    if (e.code && CERT_ERRORS.has(e.code)) {
      return new OciError(
        'RegistryUnavailable',
        `registry ${host} unreachable while ${what}: its TLS certificate is not trusted (${e.code}: ` +
          `${e.message}); if a private CA signs it, set ${this.caSetting} to that CA's PEM bundle`,
      );
    }
    if (NOT_TLS.test(e.message ?? '') || e.code === 'EPROTO' || e.code?.startsWith('ERR_SSL')) {
      const hint = this.mayUseHttp(host) ? '' : `; if it serves plain HTTP, list it in KLM_INSECURE_REGISTRIES`;
      return new OciError(
        'RegistryUnavailable',
        `registry ${host} unreachable while ${what}: TLS handshake failed (${e.message.split('\n')[0]})${hint}`,
      );
    }
    return new OciError('RegistryUnavailable', `registry ${host} unreachable while ${what}: ${e.message}`);
  }

  /**
   * A plain HTTP(S) exchange that follows redirects (blob downloads are often sent elsewhere);
   * the Authorization header goes only to `authHost` on the scheme first asked: a redirect to
   * another host or scheme (https to http, say) drops it for good.
   */
  private async raw(
    url: URL,
    init: { method: string; headers: Record<string, string>; body?: Uint8Array },
    authHost: string,
  ): Promise<HttpResponse> {
    let current = url;
    const authScheme = url.protocol;
    let headers = init.headers;
    for (let hop = 0; ; hop++) {
      const res = await new Promise<IncomingMessage>((resolve, reject) => {
        const secure = current.protocol === 'https:';
        const h = { ...headers, ...(init.body ? { 'content-length': String(init.body.byteLength) } : {}) };
        const asked = current;
        let answer: IncomingMessage | undefined;
        const request = (secure ? https : http).request(
          current,
          { method: init.method, headers: h, agent: secure ? this.httpsAgent : this.httpAgent },
          (res) => {
            answer = res;
            resolve(res);
          },
        );
        // Inactivity, not total time: the socket timer restarts with every chunk, before and after the answer.
        request.setTimeout(this.idleTimeoutMs, () => {
          const seconds = Math.round(this.idleTimeoutMs / 100) / 10;
          const err = new OciError(
            'RegistryUnavailable',
            `registry ${asked.host} did not answer in time (nothing received for ${seconds} s)`,
          );
          answer?.destroy(err);
          request.destroy(err);
        });
        request.on('error', reject);
        request.end(init.body ? Buffer.from(init.body.buffer, init.body.byteOffset, init.body.byteLength) : undefined);
      });
      const location = res.headers.location;
      const status = res.statusCode ?? 0;
      if (
        [301, 302, 303, 307, 308].includes(status) &&
        location &&
        hop < 5 &&
        (init.method === 'GET' || init.method === 'HEAD')
      ) {
        res.resume();
        current = new URL(location, current);
        if (current.host.toLowerCase() !== authHost || current.protocol !== authScheme) {
          const { authorization: _dropped, ...rest } = headers;
          headers = rest;
        }
        continue;
      }
      return response(res, current.toString());
    }
  }
}

let unconfiguredRegistries: Registries | undefined;

function basic(c: Credentials): string {
  return `Basic ${Buffer.from(`${c.username}:${c.password}`).toString('base64')}`;
}

/** The token cache key: the credentials only as a hash, so that a changed password gets new tokens. */
function tokenKey(host: string, scope: string, creds: Credentials | undefined): string {
  const who = creds
    ? createHash('sha256').update(`${creds.username}\0${creds.password}`).digest('hex').slice(0, 16)
    : 'anonymous';
  return `${host}|${scope}|${who}`;
}
