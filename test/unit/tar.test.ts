// The layer reader: plain YAML, or a (gzipped) tar with exactly one YAML file; nothing else.
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { LayerFormatError, readLayer, tarOneFile } from '../../src/oci/tar';

const YAML = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n';

function twoFiles(): Buffer {
  const a = tarOneFile('a.yaml', Buffer.from(YAML));
  const b = tarOneFile('b.yaml', Buffer.from(YAML));
  // Drop the first archive's end-of-archive blocks so that both entries form one archive.
  return Buffer.concat([a.subarray(0, a.length - 1024), b]);
}

describe('readLayer', () => {
  it('reads plain YAML', () => {
    expect(readLayer(Buffer.from(YAML), 'layer')).toEqual({ text: YAML, format: 'yaml' });
  });

  it('reads the one YAML file of a tar, gzipped or not', () => {
    const tar = tarOneFile('raw-manifest.yaml', Buffer.from(YAML));
    expect(readLayer(tar, 'layer')).toEqual({ text: YAML, format: 'tar' });
    expect(readLayer(gzipSync(tar), 'layer')).toEqual({ text: YAML, format: 'tar' });
  });

  it.each([
    ['several files', twoFiles(), 'the archive must hold exactly one YAML file, it holds: a.yaml, b.yaml'],
    ['a file that is no YAML', tarOneFile('manifest.json', Buffer.from('{}')), 'it holds: manifest.json'],
    ['a path that climbs out', tarOneFile('../evil.yaml', Buffer.from(YAML)), 'escapes the archive'],
    ['binary content', Buffer.from([0xff, 0x00, 0xfe, 0x01]), 'the layer is neither YAML text nor a tar archive'],
  ])('refuses %s', (_what, blob, message) => {
    expect(() => readLayer(blob, 'layer')).toThrow(LayerFormatError);
    expect(() => readLayer(blob, 'layer')).toThrow(message);
  });
});
