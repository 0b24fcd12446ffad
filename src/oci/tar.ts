// A module layer is either a plain YAML blob or, as modulectl writes it now, a tar archive
// (optionally gzipped) holding exactly one YAML file. Anything else is refused: links,
// devices, several files, absolute paths or paths that climb out with "..".
import { gunzipSync } from 'node:zlib';

export class LayerFormatError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'LayerFormatError';
  }
}

const BLOCK = 512;

function isTar(buf: Buffer): boolean {
  return buf.length >= BLOCK && buf.toString('latin1', 257, 262) === 'ustar';
}

function field(h: Buffer, start: number, len: number): string {
  const raw = h.subarray(start, start + len);
  const end = raw.indexOf(0);
  return raw.toString('utf8', 0, end < 0 ? len : end);
}

function octal(h: Buffer, start: number, len: number): number {
  const s = field(h, start, len).trim();
  return s ? parseInt(s, 8) : 0;
}

function paxPath(data: Buffer): string | undefined {
  // Records: "<len> key=value\n".
  for (const rec of data.toString('utf8').split('\n')) {
    const m = /^\d+ path=(.*)$/.exec(rec);
    if (m) return m[1];
  }
  return undefined;
}

function checkPath(p: string, where: string): void {
  const parts = p.split('/');
  if (p.startsWith('/') || parts.includes('..'))
    throw new LayerFormatError(`${where}: archive entry "${p}" escapes the archive; refusing the layer`);
}

interface Entry {
  path: string;
  data: Buffer;
}

function regularFiles(tar: Buffer, where: string): Entry[] {
  const files: Entry[] = [];
  let off = 0;
  let nextPath: string | undefined;
  while (off + BLOCK <= tar.length) {
    const h = tar.subarray(off, off + BLOCK);
    if (h.every((b) => b === 0)) break;
    const size = octal(h, 124, 12);
    const type = String.fromCharCode(h[156] ?? 0);
    const prefix = field(h, 345, 155);
    const name = nextPath ?? (prefix ? `${prefix}/${field(h, 0, 100)}` : field(h, 0, 100));
    const data = tar.subarray(off + BLOCK, off + BLOCK + size);
    if (data.length < size) throw new LayerFormatError(`${where}: truncated archive`);
    off += BLOCK + Math.ceil(size / BLOCK) * BLOCK;
    nextPath = undefined;
    switch (type) {
      case 'x':
        nextPath = paxPath(data);
        break;
      case 'L':
        nextPath = data.toString('utf8').replace(/\0+$/, '');
        break;
      case 'g':
        break;
      case '5':
        checkPath(name, where);
        break;
      case '0':
      case '\0':
        checkPath(name, where);
        files.push({ path: name.replace(/^\.\//, ''), data: Buffer.from(data) });
        break;
      default:
        throw new LayerFormatError(
          `${where}: archive entry "${name}" is not a regular file (type ${JSON.stringify(type)}); refusing the layer`,
        );
    }
  }
  return files;
}

/**
 * The YAML text of a layer, and its shape: the blob itself ('yaml'), or the one YAML file in
 * its (gzipped) tar ('tar'). `pattern` further restricts the file name inside an archive.
 */
export function readLayer(blob: Buffer, where: string, pattern = /\.ya?ml$/): { text: string; format: 'yaml' | 'tar' } {
  const buf = blob.length > 2 && blob[0] === 0x1f && blob[1] === 0x8b ? gunzipSync(blob) : blob;
  if (!isTar(buf)) {
    const text = buf.toString('utf8');
    if (text.includes('\uFFFD') || text.includes('\0'))
      throw new LayerFormatError(`${where}: the layer is neither YAML text nor a tar archive`);
    return { text, format: 'yaml' };
  }
  const files = regularFiles(buf, where);
  if (files.length !== 1 || !pattern.test(files[0]!.path)) {
    const names = files.map((f) => f.path).join(', ') || 'none';
    throw new LayerFormatError(`${where}: the archive must hold exactly one YAML file, it holds: ${names}`);
  }
  return { text: files[0]!.data.toString('utf8'), format: 'tar' };
}

export function extractSingleYaml(blob: Buffer, where: string, pattern?: RegExp): string {
  return readLayer(blob, where, pattern).text;
}

/** Builds a one-file ustar archive (for publishing sample modules and for tests). */
export function tarOneFile(name: string, content: Buffer): Buffer {
  const h = Buffer.alloc(BLOCK);
  h.write(name, 0, 100, 'utf8');
  h.write('0000644\0', 100, 'latin1');
  h.write('0000000\0', 108, 'latin1');
  h.write('0000000\0', 116, 'latin1');
  h.write(content.length.toString(8).padStart(11, '0') + '\0', 124, 'latin1');
  h.write('00000000000\0', 136, 'latin1');
  h.write('        ', 148, 'latin1');
  h.write('0', 156, 'latin1');
  h.write('ustar\0', 257, 'latin1');
  h.write('00', 263, 'latin1');
  let sum = 0;
  for (const b of h) sum += b;
  h.write(sum.toString(8).padStart(6, '0') + '\0 ', 148, 'latin1');
  const pad = Buffer.alloc((BLOCK - (content.length % BLOCK)) % BLOCK);
  return Buffer.concat([h, content, pad, Buffer.alloc(BLOCK * 2)]);
}
