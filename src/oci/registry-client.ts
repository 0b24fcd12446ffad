// A small OCI Distribution API client: blobs in and out, every blob verified against its
// sha256 digest while it streams in. Content that does not match its digest is never returned.
import { createHash } from 'node:crypto';

export type OciErrorReason = 'DigestMismatch' | 'BlobNotFound' | 'RegistryUnavailable' | 'RegistryError' | 'InvalidDigest';

export class OciError extends Error {
  constructor(readonly reason: OciErrorReason, message: string) {
    super(message);
    this.name = 'OciError';
  }
}

const DIGEST = /^sha256:[a-f0-9]{64}$/;

export function sha256Digest(data: Uint8Array): string {
  return `sha256:${createHash('sha256').update(data).digest('hex')}`;
}

export class OciRegistryClient {
  private readonly base: string;

  /** `registry` is host:port (plain HTTP on loopback) or a full http(s):// URL. */
  constructor(registry: string) {
    this.base = /^https?:\/\//.test(registry) ? registry.replace(/\/$/, '') : `http://${registry}`;
  }

  private async request(url: string, init: RequestInit, what: string): Promise<Response> {
    try {
      return await fetch(url, init);
    } catch (err) {
      throw new OciError('RegistryUnavailable', `registry ${this.base} unreachable while ${what}: ${(err as Error).message}`);
    }
  }

  /** Uploads a blob (monolithic upload) and returns its digest. The registry checks the digest too. */
  async pushBlob(repository: string, data: Uint8Array, digest = sha256Digest(data)): Promise<string> {
    if (!DIGEST.test(digest)) throw new OciError('InvalidDigest', `not a sha256 digest: ${digest}`);
    const start = await this.request(`${this.base}/v2/${repository}/blobs/uploads/`, { method: 'POST' }, `starting an upload to ${repository}`);
    await start.arrayBuffer();
    const location = start.headers.get('location');
    if (start.status !== 202 || !location) throw new OciError('RegistryError', `upload to ${repository} refused: HTTP ${start.status}`);
    const url = new URL(location, this.base);
    url.searchParams.set('digest', digest);
    const put = await this.request(url.toString(), {
      method: 'PUT',
      headers: { 'content-type': 'application/octet-stream', 'content-length': String(data.byteLength) },
      body: data,
    }, `uploading ${digest} to ${repository}`);
    const body = await put.text();
    if (put.status !== 201) {
      const reason = body.includes('DIGEST_INVALID') ? 'DigestMismatch' : 'RegistryError';
      throw new OciError(reason, `registry refused blob ${digest} for ${repository}: HTTP ${put.status} ${body.trim().slice(0, 300)}`);
    }
    return digest;
  }

  /** Uploads an image manifest under a tag; returns its digest. */
  async pushManifest(repository: string, reference: string, manifest: unknown, mediaType = 'application/vnd.oci.image.manifest.v1+json'): Promise<string> {
    const body = Buffer.from(JSON.stringify(manifest));
    const res = await this.request(`${this.base}/v2/${repository}/manifests/${reference}`, { method: 'PUT', headers: { 'content-type': mediaType }, body }, `uploading manifest ${repository}:${reference}`);
    const text = await res.text();
    if (res.status !== 201) throw new OciError('RegistryError', `registry refused manifest ${repository}:${reference}: HTTP ${res.status} ${text.slice(0, 300)}`);
    return sha256Digest(body);
  }

  /** Downloads an image manifest by tag or digest (a digest is verified). */
  async getManifest<T>(repository: string, reference: string): Promise<T> {
    const accept = 'application/vnd.oci.image.manifest.v1+json, application/vnd.docker.distribution.manifest.v2+json';
    const res = await this.request(`${this.base}/v2/${repository}/manifests/${reference}`, { headers: { accept } }, `fetching manifest ${repository}:${reference}`);
    const body = Buffer.from(await res.arrayBuffer());
    if (res.status === 404) throw new OciError('BlobNotFound', `manifest ${repository}:${reference} not found in ${this.base}`);
    if (!res.ok) throw new OciError('RegistryError', `fetching manifest ${repository}:${reference}: HTTP ${res.status}`);
    if (DIGEST.test(reference) && sha256Digest(body) !== reference) {
      throw new OciError('DigestMismatch', `manifest ${repository}@${reference} hashes to ${sha256Digest(body)}; refusing it`);
    }
    return JSON.parse(body.toString('utf8')) as T;
  }

  /** Downloads a blob and verifies its sha256 while it streams; throws DigestMismatch otherwise. */
  async pullBlob(repository: string, digest: string, onChunk?: () => void): Promise<Buffer> {
    if (!DIGEST.test(digest)) throw new OciError('InvalidDigest', `not a sha256 digest: ${digest}`);
    const res = await this.request(`${this.base}/v2/${repository}/blobs/${digest}`, {}, `fetching ${digest} from ${repository}`);
    if (res.status === 404) {
      await res.arrayBuffer();
      throw new OciError('BlobNotFound', `blob ${digest} not found in ${this.base}/${repository}`);
    }
    if (!res.ok || !res.body) throw new OciError('RegistryError', `fetching blob ${digest} from ${repository}: HTTP ${res.status}`);
    const hash = createHash('sha256');
    const chunks: Buffer[] = [];
    for await (const chunk of res.body as AsyncIterable<Uint8Array>) {
      hash.update(chunk);
      chunks.push(Buffer.from(chunk));
      onChunk?.();
    }
    const actual = `sha256:${hash.digest('hex')}`;
    if (actual !== digest) {
      throw new OciError('DigestMismatch', `blob from ${repository} should have digest ${digest} but its content hashes to ${actual}; refusing it`);
    }
    return Buffer.concat(chunks);
  }
}
