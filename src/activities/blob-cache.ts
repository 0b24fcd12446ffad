// A content-addressed cache on the worker's disk: files named by their sha256. Entries are
// written to a temp file and renamed, so a crash never leaves a half-written blob behind, and
// reading one back re-checks nothing: only verified content is ever put in.
import { createHash } from 'node:crypto';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { Registries } from '../oci/registries';

/** A pull in flight, and who wants to hear of its progress (each waiting activity heartbeats). */
interface Pull {
  blob: Promise<Buffer>;
  listeners: Set<() => void>;
}

export class BlobCache {
  /** Pulls in flight by digest: concurrent installs of one new version share one download. */
  private readonly pulls = new Map<string, Pull>();

  /**
   * `registries`: how a missing layer is fetched (trust, insecure hosts, credentials), see
   * `ensureLayer`; required, so that a worker without its registry configuration fails loudly.
   */
  constructor(
    readonly dir: string,
    readonly registries: Registries,
  ) {
    if (!(registries instanceof Registries))
      throw new Error("BlobCache needs the worker's Registries (trust, insecure hosts, credentials)");
  }

  /**
   * The blob of `digest`: from disk, else from `pull` (which must verify the digest), kept once
   * `accept` (if given) has not thrown. One pull per digest at a time: concurrent callers wait
   * for the same download (and its failure); `onChunk` hears of its progress meanwhile.
   */
  async obtain(
    digest: string,
    pull: (onChunk: () => void) => Promise<Buffer>,
    opts: { accept?: (blob: Buffer) => void; onChunk?: () => void } = {},
  ): Promise<Buffer> {
    const pending = this.pulls.get(digest) ?? (await this.get(digest)) ?? this.pulls.get(digest);
    if (Buffer.isBuffer(pending)) return pending;
    let current = pending;
    if (!current) {
      const listeners = new Set<() => void>();
      const blob = (async () => {
        const data = await pull(() => listeners.forEach((l) => l()));
        opts.accept?.(data);
        await this.put(data);
        return data;
      })().finally(() => this.pulls.delete(digest));
      current = { blob, listeners };
      this.pulls.set(digest, current);
    }
    const { onChunk } = opts;
    if (onChunk) current.listeners.add(onChunk);
    try {
      return await current.blob;
    } finally {
      if (onChunk) current.listeners.delete(onChunk);
    }
  }

  private file(digest: string): string {
    const hex = digest.replace(/^sha256:/, '');
    if (!/^[a-f0-9]{64}$/.test(hex)) throw new Error(`not a sha256 digest: ${digest}`);
    return path.join(this.dir, hex.slice(0, 2), hex);
  }

  async get(digest: string): Promise<Buffer | undefined> {
    try {
      return await readFile(this.file(digest));
    } catch {
      return undefined;
    }
  }

  /** Stores verified content under its digest; returns the digest. */
  async put(data: Buffer): Promise<string> {
    const digest = `sha256:${createHash('sha256').update(data).digest('hex')}`;
    const file = this.file(digest);
    await mkdir(path.dirname(file), { recursive: true });
    const tmp = `${file}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
    await writeFile(tmp, data);
    await rename(tmp, file);
    return digest;
  }
}
