// A KubeClient's credentials, from client-node's KubeConfig: exec plugins and auth providers
// are asked per request (they cache until their credential expires), a 401 reloads the
// kubeconfig once (token files are read again, caches dropped); TLS server name, proxy URL and
// basic auth are honoured. Its TLS material is checked before a connection takes it: a field
// that cannot be used raises TlsMaterialError, which names the field, not the material.
import http from 'node:http';
import https from 'node:https';
import tls from 'node:tls';
import { KubeConfig, type User } from '@kubernetes/client-node';
import { pluginTlsProblem, tlsMaterialProblem } from './kubeconfig';
import { CredentialError, TlsMaterialError } from './request-errors';

/** How requests authenticate: headers and the agent that carries TLS material (and a proxy). */
export interface Auth {
  headers: Record<string, string>;
  agent: http.Agent;
  /** Client certificate and key as applied, to notice a plugin that hands out new ones. */
  tls: string;
  /** The client certificate applied, if any: a refusal of it says when it was valid. */
  cert?: Buffer | string;
}

export interface CredentialOptions {
  /** A fresh KubeConfig of the same source, for a reload after a 401. */
  reload?: () => KubeConfig;
  /** How long a credential plugin or provider may take, 30 s by default. */
  authTimeoutMs?: number;
}

/**
 * Up to 256 connections at once per API server; once the burst is over, at most 4 kept open. An
 * idle TLS connection costs both ends memory: a worker at rest kept 12 per target cluster (265
 * sockets at 20 clusters), which a fleet of thousands pays per runtime.
 */
const AGENT = { keepAlive: true, maxSockets: 256, maxFreeSockets: 4 };
/** How long a replaced agent keeps serving the requests already on it. */
const GRACE_MS = 60_000;

/** What gives the user's credential, in words for a failure: its plugin, its provider, or the kubeconfig itself. */
function credentialSource(user: User | null): string {
  const command = (user?.exec as { command?: unknown } | undefined)?.command;
  if (user?.exec) return `its exec credential plugin${typeof command === 'string' ? ` "${command}"` : ''}`;
  return user?.authProvider ? 'its auth provider' : 'its credentials';
}

/** The headers that carry the applied credential: client-node's, and basic auth. */
function authHeaders(o: https.RequestOptions): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(o.headers ?? {})) if (typeof v === 'string') headers[k] = v;
  if (o.auth) headers.Authorization = `Basic ${Buffer.from(o.auth).toString('base64')}`;
  return headers;
}

/**
 * client-node's proxy agent for the TLS material applied in `o`. client-node (2.x) keeps one agent
 * per cluster and user name in a KubeConfig, made with the material of its first use: a client
 * certificate a plugin hands out anew would never reach it. A KubeConfig of the cluster alone and
 * a user of just that material (no plugin: nothing runs again) makes a fresh one.
 */
async function proxyAgent(kc: KubeConfig, o: https.RequestOptions): Promise<http.Agent> {
  const data = (pem: unknown) => (pem ? Buffer.from(pem as Buffer | string).toString('base64') : undefined);
  const one = new KubeConfig();
  one.loadFromClusterAndUser(kc.getCurrentCluster()!, {
    name: 'applied',
    certData: data(o.cert),
    keyData: data(o.key),
  });
  const applied: https.RequestOptions = {};
  await one.applyToHTTPSOptions(applied);
  return applied.agent as http.Agent;
}

export class Credentials {
  private auth: Promise<Auth>;
  private refreshing?: Promise<Auth>;
  /** The KubeConfig whose TLS material was checked. */
  private checked?: KubeConfig;

  constructor(
    private readonly server: string,
    private kc: KubeConfig,
    private readonly opts: CredentialOptions,
  ) {
    this.auth = this.authenticate();
    this.auth.catch(() => undefined);
  }

  /** The credentials as first applied: rejects when they cannot be had. */
  first(): Promise<Auth> {
    return this.auth;
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

  /** Checks the TLS material once per KubeConfig, before an agent takes it: a broken key would fail every request in OpenSSL's words, which name no field. */
  private checkTlsMaterial(): void {
    if (this.checked === this.kc) return;
    const problem = tlsMaterialProblem(this.kc);
    if (problem) throw new TlsMaterialError(this.server, problem);
    this.checked = this.kc;
  }

  /**
   * client-node's application of the kubeconfig to `o`, within the time limit (client-node runs a
   * plugin without one: one that hangs must not hold every request).
   */
  private async applyWithinLimit(o: https.RequestOptions, what: string): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const limit = this.opts.authTimeoutMs ?? 30_000;
    try {
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
  }

  /**
   * The agent for TLS material newly applied: through a proxy, client-node's (it knows HTTP,
   * HTTPS and SOCKS proxies); else our own, which keeps connections alive.
   */
  private async agentFor(o: https.RequestOptions): Promise<http.Agent> {
    if (this.kc.getCurrentCluster()?.proxyUrl) return await proxyAgent(this.kc, o);
    if (this.server.startsWith('http:')) return new http.Agent(AGENT);
    const material = { ca: o.ca, cert: o.cert, key: o.key };
    return new https.Agent({
      ...AGENT,
      ...material,
      // One TLS context for all the agent's connections: without it, each new connection parses
      // the CA bundle, certificate and key again (measured: 4 % of a worker's CPU at 20 clusters).
      secureContext: tls.createSecureContext(material),
      servername: o.servername,
      rejectUnauthorized: o.rejectUnauthorized,
    });
  }

  /** Applies the kubeconfig: TLS material, proxy, server name, token or basic auth. */
  private async authenticate(previous?: Auth): Promise<Auth> {
    const o: https.RequestOptions = {};
    const user = this.kc.getCurrentUser();
    this.checkTlsMaterial();
    await this.applyWithinLimit(o, credentialSource(user));
    const headers = authHeaders(o);
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
    return { headers, agent: await this.agentFor(o), tls, cert };
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
  async current(): Promise<Auth> {
    if (!this.dynamic()) return await this.auth;
    return await this.refresh(false);
  }

  /** After a 401: read the kubeconfig again (token files, plugin caches) and apply it anew, once for all requests refused together. */
  async reauthenticate(failed: Auth): Promise<Auth> {
    if (this.refreshing) return await this.refreshing;
    const current = await this.auth.catch(() => undefined);
    if (current && current !== failed && current.headers.Authorization !== failed.headers.Authorization) return current;
    return await this.refresh(true);
  }

  /** Closes the kept-alive connections: the credentials are no longer used. */
  close(): void {
    void this.auth.then(
      (a) => a.agent.destroy(),
      () => undefined,
    );
  }
}
