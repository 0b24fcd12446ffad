// What a registry client asks of the process's transport (`Registries`, src/oci/registries.ts):
// where a registry is, a request to it, and the answer. The client speaks the Distribution API
// over it; scheme, trust and authentication are the transport's.
import type { IncomingMessage } from 'node:http';

/** Where a registry is: its host (host:port), an explicit scheme if one was given, a path prefix. */
export interface Endpoint {
  host: string;
  scheme?: 'http' | 'https';
  basePath: string;
}

export function parseEndpoint(registry: string): Endpoint {
  if (/^https?:\/\//i.test(registry)) {
    const u = new URL(registry);
    return {
      host: u.host.toLowerCase(),
      scheme: u.protocol === 'http:' ? 'http' : 'https',
      basePath: u.pathname.replace(/\/+$/, ''),
    };
  }
  return { host: registry.replace(/\/+$/, '').toLowerCase(), basePath: '' };
}

export interface HttpResponse {
  status: number;
  header(name: string): string | undefined;
  /** The body as a stream (read it, or call `drain`). */
  body: IncomingMessage;
  text(): Promise<string>;
  buffer(): Promise<Buffer>;
  drain(): Promise<void>;
  /** The URL that answered (after redirects). */
  url: string;
}

export interface RegistryRequest {
  method?: string;
  /** A path under the endpoint (`/v2/…`) or an absolute URL the registry gave (an upload location). */
  path: string;
  headers?: Record<string, string>;
  body?: Uint8Array;
  repository: string;
  /** Whether the request needs push access (else pull). */
  push?: boolean;
  /** For messages: what we were doing. */
  what: string;
}

/** Sends requests to registries: scheme, trust and authentication are its own. */
export interface RegistryTransport {
  /** The base URL of an endpoint (`https://host/prefix`), as far as the scheme is known. */
  baseUrl(endpoint: Endpoint): string;
  /** Sends a request; 401/403 after authenticating, 429 and 5xx fail as OciErrors, every other status is the caller's. */
  send(endpoint: Endpoint, req: RegistryRequest): Promise<HttpResponse>;
}
