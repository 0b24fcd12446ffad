// The bridge's look for workflows the server ended: whose Kyma they belong to, and how often a
// workflow that ends again and again is told.
import { describe, expect, it } from 'vitest';
import { boundedText } from '../../src/decisions/conditions';
import { parseKymaKey } from '../../src/api/names';
import { retellDelayMs } from '../../src/starter/ended-workflows';

describe('ended workflows', () => {
  it('finds the Kyma (and module) of a Kyma or module id, and nothing for others', () => {
    expect(parseKymaKey('kyma/kcp-system/k1')).toEqual({ namespace: 'kcp-system', name: 'k1' });
    expect(parseKymaKey('kyma/kcp-system/k1/module/greeter')).toEqual({
      namespace: 'kcp-system',
      name: 'k1',
      module: 'greeter',
    });
    expect(parseKymaKey('rollout/kcp-system/greeter/regular')).toBeUndefined();
    expect(parseKymaKey('plan/kcp-system/greeter/regular/1.0.0')).toBeUndefined();
  });

  it('tells a workflow that keeps ending again after a doubling delay, at most hourly', () => {
    expect([1, 2, 3, 4].map((n) => retellDelayMs(n, 30_000))).toEqual([30_000, 60_000, 120_000, 240_000]);
    expect(retellDelayMs(50, 30_000)).toBe(3_600_000);
  });
});

describe('condition messages', () => {
  it('are cut to the CRD limit in UTF-8 bytes, marked where cut', () => {
    expect(boundedText('short', 100)).toBe('short');
    const cut = boundedText('ä'.repeat(100), 21);
    expect(cut).toBe(`${'ä'.repeat(9)}…`);
    expect(Buffer.byteLength(cut)).toBeLessThanOrEqual(21);
  });
});
