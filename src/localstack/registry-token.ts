// A small token service for the local registry, as the distribution token spec describes
// (docs/spec/auth/token.md and jwt.md of distribution v2.8): HTTPS on loopback, GET /token?
// service=…&scope=repository:<name>:<actions>. Basic credentials are checked against one
// configured user: the user gets every action asked for (pull, push); a wrong password gets 401;
// anonymous callers get pull-only tokens with `anonymous: 'pull'`, and tokens granting nothing
// otherwise (the default), so that the registry refuses them.
//
// Tokens are JWTs signed ES256 (ECDSA P-256, the signature as r||s: `dsaEncoding: 'ieee-p1363'`)
// with an `x5c` header holding the signing certificate, which the registry verifies against its
// `rootcertbundle`; claims iss, sub, aud (the service), exp, nbf, iat, jti and access.
import { randomBytes, sign, timingSafeEqual, X509Certificate } from 'node:crypto';
import { mkdir, readFile } from 'node:fs/promises';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { generateCa, issueCert } from './pki';
import { startRegistry, type Registry } from './registry';

export interface TokenServiceOptions {
  /** TLS of the service itself (PEM files). */
  tls: { cert: string; key: string };
  /** The token signing certificate and key (PEM files); the certificate must chain to the registry's rootcertbundle. */
  signing: { cert: string; key: string };
  issuer: string;
  service: string;
  user: { username: string; password: string };
  /** What anonymous callers get: pull-only tokens, or tokens that grant nothing. */
  anonymous?: 'pull' | 'none';
  /** Lifetime of tokens in seconds (`expires_in`). */
  expiresIn?: number;
}

export interface TokenService {
  /** The realm to configure in the registry: https://127.0.0.1:<port>/token */
  realm: string;
  /** How many tokens were asked for, by outcome. */
  readonly counts: { issued: number; refused: number };
  close(): Promise<void>;
}

const b64url = (b: Buffer | string) => Buffer.from(b).toString('base64url');

interface Access {
  type: string;
  name: string;
  actions: string[];
}

/** The scopes of a request: `repository:name:pull,push` (a name may hold ':' only before a tag, never here). */
function parseScopes(values: string[]): Access[] {
  const out: Access[] = [];
  for (const v of values) {
    for (const scope of v.split(' ')) {
      const first = scope.indexOf(':');
      const last = scope.lastIndexOf(':');
      if (first < 0 || last === first) continue;
      out.push({
        type: scope.slice(0, first),
        name: scope.slice(first + 1, last),
        actions: scope
          .slice(last + 1)
          .split(',')
          .filter(Boolean),
      });
    }
  }
  return out;
}

function same(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/**
 * Who a request is by, from its Authorization header: '' for an anonymous caller, the user's
 * name for the user's Basic credentials, undefined for any other (refused).
 */
function subjectOf(authorization: string | undefined, user: TokenServiceOptions['user']): string | undefined {
  if (!authorization) return '';
  const m = /^Basic\s+(.+)$/i.exec(authorization);
  const plain = m ? Buffer.from(m[1]!, 'base64').toString('utf8') : '';
  const colon = plain.indexOf(':');
  if (colon < 0 || !same(plain.slice(0, colon), user.username) || !same(plain.slice(colon + 1), user.password))
    return undefined;
  return user.username;
}

/** What is granted of the access asked for: the user gets pull and push, an anonymous caller pull (with `anonymous: 'pull'`) or nothing. */
function granted(asked: Access[], subject: string, anonymous: TokenServiceOptions['anonymous']): Access[] {
  return asked.map((a) => ({
    ...a,
    actions: subject
      ? a.actions.filter((x) => x === 'pull' || x === 'push')
      : anonymous === 'pull'
        ? a.actions.filter((x) => x === 'pull')
        : [],
  }));
}

/** A JWT of the claims, signed ES256 by the signing key, its certificate in the `x5c` header. */
function signedToken(
  { x5c, signingKey }: { x5c: string[]; signingKey: string },
  c: { iss: string; sub: string; aud: string; now: number; expiresIn: number; access: Access[] },
): string {
  const header = { typ: 'JWT', alg: 'ES256', x5c };
  const claims = {
    iss: c.iss,
    sub: c.sub,
    aud: c.aud,
    exp: c.now + c.expiresIn,
    nbf: c.now - 5,
    iat: c.now,
    jti: randomBytes(16).toString('hex'),
    access: c.access,
  };
  const signingInput = `${b64url(JSON.stringify(header))}.${b64url(JSON.stringify(claims))}`;
  const signature = sign('sha256', Buffer.from(signingInput), { key: signingKey, dsaEncoding: 'ieee-p1363' });
  return `${signingInput}.${b64url(signature)}`;
}

export async function startTokenService(o: TokenServiceOptions): Promise<TokenService> {
  const [tlsCert, tlsKey, signingCertPem, signingKey] = await Promise.all([
    readFile(o.tls.cert, 'utf8'),
    readFile(o.tls.key, 'utf8'),
    readFile(o.signing.cert, 'utf8'),
    readFile(o.signing.key, 'utf8'),
  ]);
  const x5c = [new X509Certificate(signingCertPem).raw.toString('base64')];
  const expiresIn = o.expiresIn ?? 300;
  const counts = { issued: 0, refused: 0 };

  const server = https.createServer({ cert: tlsCert, key: tlsKey }, (req, res) => {
    const url = new URL(req.url ?? '/', 'https://localhost');
    if (req.method !== 'GET' || url.pathname !== '/token') {
      res.writeHead(404).end();
      return;
    }
    const subject = subjectOf(req.headers.authorization, o.user);
    if (subject === undefined) {
      counts.refused++;
      res.writeHead(401, {
        'content-type': 'application/json',
        'www-authenticate': 'Basic realm="klm-registry-token"',
      });
      res.end(JSON.stringify({ errors: [{ code: 'UNAUTHORIZED', message: 'authentication required' }] }));
      return;
    }
    if (url.searchParams.get('service') && url.searchParams.get('service') !== o.service) {
      res
        .writeHead(400, { 'content-type': 'application/json' })
        .end(JSON.stringify({ errors: [{ code: 'DENIED', message: 'unknown service' }] }));
      return;
    }
    const access = granted(parseScopes(url.searchParams.getAll('scope')), subject, o.anonymous);
    const now = Math.floor(Date.now() / 1000);
    const token = signedToken(
      { x5c, signingKey },
      { iss: o.issuer, sub: subject, aud: o.service, now, expiresIn, access },
    );
    counts.issued++;
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(
      JSON.stringify({
        token,
        access_token: token,
        expires_in: expiresIn,
        issued_at: new Date(now * 1000).toISOString(),
      }),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const { port } = server.address() as AddressInfo;
  return {
    realm: `https://127.0.0.1:${port}/token`,
    counts,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export interface AuthRegistry {
  registry: Registry;
  tokens: TokenService;
  /** The CA (PEM file) that signs the registry's and the token service's certificates. */
  caCert: string;
  stop(): Promise<void>;
}

/**
 * A registry as users have them: HTTPS with a certificate from a CA of its own (in `dir`), token
 * auth through a token service that knows one user.
 */
export async function startAuthRegistry(
  binary: string,
  dir: string,
  o: { user: { username: string; password: string }; anonymous?: 'pull' | 'none'; expiresIn?: number },
): Promise<AuthRegistry> {
  const pkiDir = path.join(dir, 'registry-pki');
  await mkdir(pkiDir, { recursive: true });
  const { caCert } = await generateCa(pkiDir, 'klm-registry-ca');
  const serving = await issueCert(pkiDir, 'registry', 'klm-registry', {
    serverAuth: true,
    sans: ['IP:127.0.0.1', 'DNS:localhost'],
  });
  const signing = await issueCert(pkiDir, 'token-signing', 'klm-registry-token-signing');
  const service = 'klm-registry';
  const issuer = 'klm-registry-token';
  const tokens = await startTokenService({
    tls: serving,
    signing,
    issuer,
    service,
    user: o.user,
    ...(o.anonymous ? { anonymous: o.anonymous } : {}),
    ...(o.expiresIn ? { expiresIn: o.expiresIn } : {}),
  });
  try {
    const registry = await startRegistry(binary, dir, {
      name: 'auth-registry',
      tls: { ...serving, ca: caCert },
      tokenAuth: { realm: tokens.realm, service, issuer, rootCertBundle: caCert },
    });
    return {
      registry,
      tokens,
      caCert,
      async stop() {
        await registry.process.stop();
        await tokens.close();
      },
    };
  } catch (err) {
    await tokens.close();
    throw err;
  }
}
