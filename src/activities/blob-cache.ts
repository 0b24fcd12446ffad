// A content-addressed cache on the worker's disk: files named by their sha256. Entries are
// written to a temp file and renamed, so a crash never leaves a half-written blob behind, and
// reading one back re-checks nothing: only verified content is ever put in.
import { createHash } from 'node:crypto';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { Registries } from '../oci/registries';

export class BlobCache {
  /** `registries`: where a missing layer is fetched from (trust, credentials), see `ensureLayer`. */
  constructor(readonly dir: string, readonly registries: Registries = Registries.default()) {}

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
