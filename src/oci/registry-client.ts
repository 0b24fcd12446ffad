// A small OCI Distribution API client: blobs in and out, every blob verified against its
// sha256 digest while it streams in. Content that does not match its digest is never returned.
// Transport, trust and authentication are the `Registries`' (src/oci/registries.ts), which makes
// one client per registry and hands itself over as the client's `RegistryTransport`.
import { createHash } from 'node:crypto';
import { OciError, sha256Digest } from './errors';
import { parseEndpoint, type Endpoint, type RegistryRequest, type RegistryTransport } from './registry-transport';

export { OciError, sha256Digest, type OciErrorReason } from './errors';

const DIGEST = /^sha256:[a-f0-9]{64}$/;
/** How often a manifest whose blobs the registry calls unknown is sent (waits 0.1, 0.2, 0.4, 0.8 s between). */
const MANIFEST_BLOB_UNKNOWN_TRIES = 5;

export class OciRegistryClient {
  private readonly endpoint: Endpoint;

  /**
   * `registry` is host:port (HTTPS; plain HTTP only for loopback or insecure hosts that speak no
   * TLS) or a full http(s):// URL; `registries` (the process's `Registries`) carries trust,
   * insecure hosts and credentials (required, so that missing wiring cannot go unnoticed; made by
   * `registries.client(registry)`).
   */
  constructor(
    registry: string,
    private readonly registries: RegistryTransport,
  ) {
    if (typeof registries?.send !== 'function')
      throw new Error(`OciRegistryClient for ${registry} needs the process's Registries (trust, credentials)`);
    this.endpoint = parseEndpoint(registry);
  }

  /** The registry's base URL as far as its scheme is known (for messages). */
  get base(): string {
    return this.registries.baseUrl(this.endpoint);
  }

  private request(req: RegistryRequest) {
    return this.registries.send(this.endpoint, req);
  }

  /** Uploads a blob (monolithic upload) and returns its digest. The registry checks the digest too. */
  async pushBlob(repository: string, data: Uint8Array, digest = sha256Digest(data)): Promise<string> {
    if (!DIGEST.test(digest)) throw new OciError('InvalidDigest', `not a sha256 digest: ${digest}`);
    const start = await this.request({
      method: 'POST',
      path: `/v2/${repository}/blobs/uploads/`,
      repository,
      push: true,
      what: `starting an upload to ${repository}`,
    });
    await start.drain();
    const location = start.header('location');
    if (start.status !== 202 || !location)
      throw new OciError('RegistryError', `upload to ${repository} refused: HTTP ${start.status}`);
    const url = new URL(location, `${this.base}/`);
    url.searchParams.set('digest', digest);
    const put = await this.request({
      method: 'PUT',
      path: url.toString(),
      headers: { 'content-type': 'application/octet-stream' },
      body: data,
      repository,
      push: true,
      what: `uploading ${digest} to ${repository}`,
    });
    const body = await put.text();
    if (put.status !== 201) {
      const reason = body.includes('DIGEST_INVALID') ? 'DigestMismatch' : 'RegistryError';
      throw new OciError(
        reason,
        `registry refused blob ${digest} for ${repository}: HTTP ${put.status} ${body.trim().slice(0, 300)}`,
      );
    }
    return digest;
  }

  /**
   * Uploads an image manifest under a tag; returns its digest. Its blobs are uploaded first; a
   * registry that calls one of them unknown is asked again a few times (MANIFEST_BLOB_UNKNOWN_TRIES):
   * while another push of the same content rewrites the repository's link to a blob, the
   * distribution registry reads that link empty (its filesystem storage truncates, then writes).
   */
  async pushManifest(
    repository: string,
    reference: string,
    manifest: unknown,
    mediaType = 'application/vnd.oci.image.manifest.v1+json',
  ): Promise<string> {
    const body = Buffer.from(JSON.stringify(manifest));
    for (let attempt = 1; ; attempt++) {
      const res = await this.request({
        method: 'PUT',
        path: `/v2/${repository}/manifests/${reference}`,
        headers: { 'content-type': mediaType },
        body,
        repository,
        push: true,
        what: `uploading manifest ${repository}:${reference}`,
      });
      const text = await res.text();
      if (res.status === 201) return sha256Digest(body);
      if (!text.includes('MANIFEST_BLOB_UNKNOWN') || attempt === MANIFEST_BLOB_UNKNOWN_TRIES)
        throw new OciError(
          'RegistryError',
          `registry refused manifest ${repository}:${reference}: HTTP ${res.status} ${text.slice(0, 300)}`,
        );
      await new Promise((resolve) => setTimeout(resolve, 50 * 2 ** attempt));
    }
  }

  /** Downloads an image manifest by tag or digest (a digest is verified). */
  async getManifest<T>(repository: string, reference: string): Promise<T> {
    const accept = 'application/vnd.oci.image.manifest.v1+json, application/vnd.docker.distribution.manifest.v2+json';
    const res = await this.request({
      path: `/v2/${repository}/manifests/${reference}`,
      headers: { accept },
      repository,
      what: `fetching manifest ${repository}:${reference}`,
    });
    const body = await res.buffer();
    if (res.status === 404)
      throw new OciError('BlobNotFound', `manifest ${repository}:${reference} not found in ${this.base}`);
    if (res.status < 200 || res.status > 299)
      throw new OciError('RegistryError', `fetching manifest ${repository}:${reference}: HTTP ${res.status}`);
    if (DIGEST.test(reference) && sha256Digest(body) !== reference) {
      throw new OciError(
        'DigestMismatch',
        `manifest ${repository}@${reference} hashes to ${sha256Digest(body)}; refusing it`,
      );
    }
    return JSON.parse(body.toString('utf8')) as T;
  }

  /** Downloads a blob and verifies its sha256 while it streams; throws DigestMismatch otherwise. */
  async pullBlob(repository: string, digest: string, onChunk?: () => void): Promise<Buffer> {
    if (!DIGEST.test(digest)) throw new OciError('InvalidDigest', `not a sha256 digest: ${digest}`);
    const res = await this.request({
      path: `/v2/${repository}/blobs/${digest}`,
      repository,
      what: `fetching ${digest} from ${repository}`,
    });
    if (res.status === 404) {
      await res.drain();
      throw new OciError('BlobNotFound', `blob ${digest} not found in ${this.base}/${repository}`);
    }
    if (res.status < 200 || res.status > 299) {
      await res.drain();
      throw new OciError('RegistryError', `fetching blob ${digest} from ${repository}: HTTP ${res.status}`);
    }
    const hash = createHash('sha256');
    const chunks: Buffer[] = [];
    try {
      for await (const chunk of res.body as AsyncIterable<Buffer>) {
        hash.update(chunk);
        chunks.push(chunk);
        onChunk?.();
      }
    } catch (err) {
      throw new OciError(
        'RegistryUnavailable',
        `registry ${this.base} broke off while sending ${digest} from ${repository}: ${(err as Error).message}`,
      );
    }
    const actual = `sha256:${hash.digest('hex')}`;
    if (actual !== digest) {
      throw new OciError(
        'DigestMismatch',
        `blob from ${repository} should have digest ${digest} but its content hashes to ${actual}; refusing it`,
      );
    }
    return Buffer.concat(chunks);
  }
}
