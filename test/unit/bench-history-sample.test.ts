import { describe, expect, it } from 'vitest';
import { historySample } from '../../bench/history-breakdown';

describe("the bench's sample of Kyma histories", () => {
  it('takes every Kyma of a small fleet, and of a large one a sample spread evenly over it', () => {
    const names = (n: number) => Array.from({ length: n }, (_, i) => `k${i}`);
    expect(historySample(names(20), 100)).toEqual(names(20));
    // Not the first hundred, which were created first and so own their clusters' runtime Kymas more often than the rest.
    const sample = historySample(names(1000), 100);
    expect(sample).toHaveLength(100);
    expect(sample.slice(0, 3)).toEqual(['k0', 'k10', 'k20']);
    expect(new Set(sample).size).toBe(100);
  });
});
