// Which loaded Kymas this product reconciles, and so which get our finalizer at their load.
import { describe, expect, it } from 'vitest';
import type { SpecModule } from '../../../src/contract/kyma';
import { finalizerDue, moduleLimited } from '../../../src/decisions/kyma-reconciled';
import { kymaNameProblem } from '../../../src/decisions/names';
import { snapshot } from './fixtures';

const modules = (n: number): SpecModule[] =>
  Array.from({ length: n }, (_, i) => ({ name: `m${i}`, customResourcePolicy: 'CreateAndDelete', managed: true }));

describe('finalizerDue: the load adds our finalizer', () => {
  it('to a Kyma this product reconciles that lacks it', () => {
    expect(finalizerDue(snapshot(modules(2), { finalized: false }), 10)).toBe(true);
  });

  it('not again, nor to a Kyma being deleted', () => {
    expect(finalizerDue(snapshot(modules(2), { finalized: true }), 10)).toBe(false);
    expect(finalizerDue(snapshot(modules(2), { finalized: false, deleting: true }), 10)).toBe(false);
  });

  it('not to a Kyma it does not reconcile: paused, an invalid name, more modules than one may have', () => {
    expect(finalizerDue(snapshot(modules(2), { finalized: false, paused: true }), 10)).toBe(false);
    const invalid = kymaNameProblem('k'.repeat(64))!;
    expect(finalizerDue(snapshot(modules(2), { finalized: false, invalid }), 10)).toBe(false);
    expect(finalizerDue(snapshot(modules(11), { finalized: false }), 10)).toBe(false);
  });
});

describe('moduleLimited', () => {
  it('makes a Kyma with more modules than one may have invalid, with what to do', () => {
    expect(moduleLimited(snapshot(modules(3)), 2).invalid).toMatchObject({
      reason: 'ModuleLimitExceeded',
      message: expect.stringContaining('remove modules from its spec') as string,
    });
    expect(moduleLimited(snapshot(modules(2)), 2).invalid).toBeUndefined();
    expect(moduleLimited(snapshot(modules(3), { deleting: true }), 2).invalid).toBeUndefined();
  });
});
