// The pieces of registry authentication that are pure: the WWW-Authenticate challenge, the
// Retry-After header, docker config JSON, and a cache of tokens that expire.

export interface Challenge {
  /** Lower case: `bearer`, `basic`, … */
  scheme: string;
  params: Record<string, string>;
}

/**
 * Parses a WWW-Authenticate header (RFC 7235): `Bearer realm="…",service="…",scope="…"` or
 * `Basic realm="…"`. Several challenges in one header are split at a scheme that follows a comma.
 */
export function parseChallenges(header: string | undefined | null): Challenge[] {
  if (!header) return [];
  const out: Challenge[] = [];
  const re = /\s*([A-Za-z][A-Za-z0-9!#$%&'*+.^_`|~-]*)(?:\s+|$)/y;
  const param = /\s*([A-Za-z0-9!#$%&'*+.^_`|~-]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^\s,]*))\s*,?/y;
  let pos = 0;
  while (pos < header.length) {
    re.lastIndex = pos;
    const m = re.exec(header);
    if (!m) break;
    pos = re.lastIndex;
    const params: Record<string, string> = {};
    for (;;) {
      param.lastIndex = pos;
      const p = param.exec(header);
      if (!p) break;
      // A token followed by another token (no '=') starts the next challenge.
      params[p[1]!.toLowerCase()] = p[2] !== undefined ? p[2].replace(/\\(.)/g, '$1') : p[3]!;
      pos = param.lastIndex;
    }
    out.push({ scheme: m[1]!.toLowerCase(), params });
    while (pos < header.length && /[\s,]/.test(header[pos]!)) pos++;
  }
  return out;
}

/** Retry-After (RFC 9110): delay-seconds or an HTTP date; milliseconds from `now`, or undefined. */
export function parseRetryAfter(value: string | undefined | null, now = Date.now()): number | undefined {
  if (!value) return undefined;
  const v = value.trim();
  if (/^\d+$/.test(v)) return Number(v) * 1000;
  const at = Date.parse(v);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, at - now);
}

export interface Credentials {
  username: string;
  password: string;
}

/** The registry part of a docker config key: `https://index.docker.io/v1/` → `index.docker.io`. */
export function registryHostOf(key: string): string {
  return key
    .replace(/^[a-z]+:\/\//i, '')
    .replace(/\/.*$/, '')
    .toLowerCase();
}

/**
 * The `auths` of a `.dockerconfigjson`, by registry host. An entry holds `auth` (base64 of
 * `user:password`) or `username` and `password`; entries with neither are left out.
 */
export function parseDockerConfig(json: string): Map<string, Credentials> {
  const doc = JSON.parse(json) as {
    auths?: Record<string, { auth?: unknown; username?: unknown; password?: unknown }>;
  };
  if (!doc || typeof doc !== 'object' || !doc.auths || typeof doc.auths !== 'object')
    throw new Error('.dockerconfigjson has no "auths" object');
  const out = new Map<string, Credentials>();
  for (const [key, entry] of Object.entries(doc.auths)) {
    if (!entry || typeof entry !== 'object') continue;
    if (typeof entry.auth === 'string' && entry.auth) {
      const plain = Buffer.from(entry.auth, 'base64').toString('utf8');
      const colon = plain.indexOf(':');
      if (colon > 0)
        out.set(registryHostOf(key), { username: plain.slice(0, colon), password: plain.slice(colon + 1) });
    } else if (typeof entry.username === 'string' && typeof entry.password === 'string') {
      out.set(registryHostOf(key), { username: entry.username, password: entry.password });
    }
  }
  return out;
}

/** Token lifetime when the token service names none (the distribution spec's default). */
export const DEFAULT_TOKEN_SECONDS = 60;

/** A token is used until this long before it expires (at most half its lifetime). */
export const TOKEN_MARGIN_MS = 10_000;

/** Bearer tokens by key (registry, scope, credentials), each until shortly before it expires. */
export class TokenCache {
  private readonly tokens = new Map<string, { token: string; until: number }>();
  private readonly pending = new Map<string, Promise<string>>();

  constructor(private readonly now: () => number = Date.now) {}

  get(key: string): string | undefined {
    const hit = this.tokens.get(key);
    if (!hit) return undefined;
    if (this.now() >= hit.until) {
      this.tokens.delete(key);
      return undefined;
    }
    return hit.token;
  }

  /** The cached token, or one from `fetch` (shared by concurrent callers of the same key). */
  async obtain(key: string, fetch: () => Promise<{ token: string; expiresIn?: number }>): Promise<string> {
    const hit = this.get(key);
    if (hit) return hit;
    let p = this.pending.get(key);
    if (!p) {
      const started = this.now();
      p = fetch()
        .then(({ token, expiresIn }) => {
          const lifeMs = (expiresIn && expiresIn > 0 ? expiresIn : DEFAULT_TOKEN_SECONDS) * 1000;
          this.tokens.set(key, { token, until: started + Math.max(lifeMs / 2, lifeMs - TOKEN_MARGIN_MS) });
          return token;
        })
        .finally(() => this.pending.delete(key));
      this.pending.set(key, p);
    }
    return await p;
  }

  delete(key: string): void {
    this.tokens.delete(key);
  }
}
