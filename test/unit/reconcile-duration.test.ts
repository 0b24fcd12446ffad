// Upstream's reconcile_duration_seconds, here a Manifest's module install that took a minute or more.
import { describe, expect, it } from 'vitest';
import { reconcileDurationOf, SLOW_RECONCILE_SECONDS } from '../../src/workers/reconcile-duration';

const kyma = { namespace: 'kcp', name: 'k1' };

describe('reconcile_duration_seconds', () => {
  it("shows an install's seconds on its Manifest while it takes a minute or more, else removes the series", () => {
    expect(reconcileDurationOf('installModule', [{ kyma, module: { name: 'greeter' } }], 75)).toEqual({
      namespace: 'kcp',
      name: 'k1-greeter',
      seconds: 75,
    });
    expect(
      reconcileDurationOf('installModule', [{ kyma, module: { name: 'greeter' } }], SLOW_RECONCILE_SECONDS),
    ).toEqual({ namespace: 'kcp', name: 'k1-greeter', seconds: 60 });
    expect(reconcileDurationOf('installModule', [{ kyma, module: { name: 'greeter' } }], 59.9)).toEqual({
      namespace: 'kcp',
      name: 'k1-greeter',
    });
  });

  it("removes a Manifest's series when its module's objects are deleted or released, however long that took", () => {
    expect(reconcileDurationOf('deleteModuleObjects', [{ kyma, module: 'greeter' }], 120)).toEqual({
      namespace: 'kcp',
      name: 'k1-greeter',
    });
    expect(reconcileDurationOf('releaseModuleObjects', [{ kyma, module: 'greeter' }], 1)).toEqual({
      namespace: 'kcp',
      name: 'k1-greeter',
    });
  });

  it('ignores other activities, and inputs that name no Kyma or module', () => {
    expect(reconcileDurationOf('checkReadiness', [{ kyma, module: 'greeter' }], 120)).toBeUndefined();
    expect(reconcileDurationOf('installModule', [{ module: { name: 'greeter' } }], 120)).toBeUndefined();
    expect(reconcileDurationOf('installModule', [{ kyma }], 120)).toBeUndefined();
    expect(reconcileDurationOf('installModule', [], 120)).toBeUndefined();
  });
});
