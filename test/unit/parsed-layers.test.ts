// A layer's raw manifest is parsed once per worker (src/activities/install/parsed-layers.ts):
// each use gets a copy of its own, a few small layers are kept, a large one is not.
import { describe, expect, it, vi } from 'vitest';
import * as parse from '../../src/manifests/parse';
import { ParsedLayers } from '../../src/activities/install/parsed-layers';
import { layerObjects } from '../../src/activities/install/render';

const yaml = (name: string) => `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ${name}}\n`;

describe('a layer parsed once per worker', () => {
  it('parses a layer once; each use gets a copy of its own, which a render may change', () => {
    const spy = vi.spyOn(parse, 'manifestObjects');
    try {
      const layers = new ParsedLayers();
      const first = layers.objects('sha256:a', yaml('a'));
      first[0]!.metadata.namespace = 'kyma-a';
      const second = layers.objects('sha256:a', yaml('a'));
      expect(second).toEqual([{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a' } }]);
      expect(spy).toHaveBeenCalledTimes(1);
    } finally {
      spy.mockRestore();
    }
  });

  it('keeps the 16 used last, and no manifest over 256 KiB', () => {
    const spy = vi.spyOn(parse, 'manifestObjects');
    try {
      const layers = new ParsedLayers();
      for (let i = 0; i < 17; i++) layers.objects(`sha256:${i}`, yaml(`m${i}`));
      layers.objects('sha256:16', yaml('m16'));
      expect(spy).toHaveBeenCalledTimes(17);
      layers.objects('sha256:0', yaml('m0'));
      expect(spy).toHaveBeenCalledTimes(18);
      const large = yaml('big') + `data: {x: "${'x'.repeat(256 * 1024)}"}\n`;
      layers.objects('sha256:big', large);
      layers.objects('sha256:big', large);
      expect(spy).toHaveBeenCalledTimes(20);
    } finally {
      spy.mockRestore();
    }
  });

  it('parses a malformed layer again on each use, failing each time', () => {
    const layers = new ParsedLayers();
    expect(() => layers.objects('sha256:bad', 'a: [')).toThrow(parse.RenderError);
    expect(() => layers.objects('sha256:bad', 'a: [')).toThrow(parse.RenderError);
  });

  it("renders one layer for two Kymas, each its own namespace and labels (a promotion's diff, an install)", () => {
    const params = (kyma: string) => ({
      kymaNamespace: 'kcp',
      kymaName: kyma,
      module: 'm',
      defaultNamespace: `${kyma}-system`,
    });
    const a = layerObjects('sha256:shared', yaml('cm'), params('a'));
    const b = layerObjects('sha256:shared', yaml('cm'), params('b'));
    expect(a[0]!.metadata).toMatchObject({
      namespace: 'a-system',
      labels: { 'operator.kyma-project.io/kyma-name': 'a' },
    });
    expect(b[0]!.metadata).toMatchObject({
      namespace: 'b-system',
      labels: { 'operator.kyma-project.io/kyma-name': 'b' },
    });
  });
});
