// The runtime side of a Kyma, driven directly: the runtime sync and the spec the modules follow,
// the catalog, the status mirror, the clean-up and the condition `Runtime`.
import { describe, expect, it } from 'vitest';
import type { KymaSnapshot, SpecModule } from '../../../src/contract/kyma';
import type { RuntimeSpec } from '../../../src/contract/runtime';
import { KymaRuntimeSide } from '../../../src/decisions/kyma-runtime-side';
import { snapshot as loaded } from './fixtures';

const spec = (name: string, over: Partial<SpecModule> = {}): SpecModule => ({
  name,
  customResourcePolicy: 'CreateAndDelete',
  managed: true,
  ...over,
});
const rspec = (channel: string, ...names: string[]): RuntimeSpec => ({ channel, modules: names.map((n) => spec(n)) });
/** A Kyma as loaded, whose runtime side is on (`remote`). */
const snapshot = (modules: SpecModule[], over: Partial<KymaSnapshot> = {}) =>
  loaded(modules, { remote: true, ...over });
const down = { reason: 'TargetClusterUnreachable' as const, message: 'the cluster does not answer' };

/** A runtime side synced once with a runtime Kyma that lists `modules`. */
function synced(...modules: string[]): KymaRuntimeSide {
  const rt = new KymaRuntimeSide();
  const s = snapshot([spec('greeter')]);
  rt.sync(s);
  rt.synced({ kind: 'synced', spec: rspec('fast', ...modules), created: false }, s);
  // The Kyma syncs the catalog after the resolution.
  if (rt.catalogDue) rt.syncCatalog(s.visibility);
  return rt;
}

describe('the runtime side of a Kyma', () => {
  it(
    "makes the runtime Kyma's spec the modules the Kyma follows, keeping the control plane's " +
      "mandatory ones, and syncs a new runtime's catalog in full",
    () => {
      const rt = new KymaRuntimeSide();
      const s = snapshot([spec('greeter'), spec('base', { mandatory: true })]);
      expect(rt.sync(s)).toEqual({ kind: 'syncRuntime', controlPlane: rspec('regular', 'greeter') });
      const out = rt.synced({ kind: 'synced', spec: rspec('fast', 'counter'), created: true }, s);
      expect(out.snapshot).toMatchObject({
        channel: 'fast',
        modules: [spec('counter'), spec('base', { mandatory: true })],
      });
      // The catalog is synced after the resolution (the modules need not wait for it), in full.
      expect(out.steps).toEqual([]);
      expect(rt.catalogDue).toBe(true);
      expect(rt.syncCatalog(s.visibility)).toEqual({
        kind: 'syncCatalog',
        visibility: s.visibility,
        full: true,
        after: 0,
      });
      expect(out.rewrite).toBe(true);
      expect(rt.condition({ remote: true })).toMatchObject({ type: 'Runtime', status: 'True', reason: 'Synced' });
    },
  );

  it("sends the control-plane spec of the last sync and the runtime's as last read, so that only the operator's changes reach the runtime", () => {
    const rt = synced('counter');
    const next = rt.sync(snapshot([spec('greeter'), spec('keda')]));
    expect(next).toEqual({
      kind: 'syncRuntime',
      controlPlane: rspec('regular', 'greeter', 'keda'),
      before: rspec('regular', 'greeter'),
      known: rspec('fast', 'counter'),
    });
  });

  it("goes on with the runtime's last spec when it cannot be reached, shows why, stops mirroring the status, and is tried again after the backoff", () => {
    const rt = synced('counter');
    expect(rt.mirrors).toBe(true);
    const s = snapshot([spec('greeter')]);
    rt.sync(s);
    const out = rt.synced({ failure: down }, s);
    expect(out.snapshot.modules.map((m) => m.name)).toEqual(['counter']);
    expect(out.steps).toEqual([]);
    expect(rt.condition({ remote: true })).toMatchObject({
      type: 'Runtime',
      status: 'False',
      reason: 'TargetClusterUnreachable',
      message: 'the runtime Kyma kyma-system/default could not be synced: the cluster does not answer',
    });
    expect(rt.mirrors).toBe(false);
    rt.resolved(1_000, { deleting: false, backoffMs: 30_000 });
    expect(rt.retryAt).toBe(31_000);
    // It answers again: the status is written again, and no retry is armed.
    expect(rt.synced({ kind: 'synced', spec: rspec('fast', 'counter'), created: false }, s).rewrite).toBe(true);
    rt.resolved(2_000, { deleting: false, backoffMs: 30_000 });
    expect(rt.retryAt).toBeUndefined();
  });

  it("tells of a runtime Kyma that belongs to another Kyma once, and leaves the control plane's spec to the modules", () => {
    const rt = new KymaRuntimeSide();
    const s = snapshot([spec('greeter')]);
    const taken = { kind: 'taken' as const, owner: 'kcp/other' };
    const first = rt.synced(taken, s);
    expect(first.snapshot).toBe(s);
    expect(first.steps).toMatchObject([{ kind: 'event', event: { type: 'Warning', reason: 'RuntimeKymaTaken' } }]);
    expect(rt.synced(taken, s).steps).toEqual([]);
    expect(rt.condition({ remote: true })).toMatchObject({
      status: 'False',
      reason: 'RuntimeKymaTaken',
      message: expect.stringContaining('belongs to Kyma kcp/other') as unknown,
    });
  });

  it('syncs the catalog on a change, again in full after a failure or the drift timer, and counts the syncs that went through', () => {
    const rt = synced('counter');
    const visibility = { beta: false, internal: false };
    expect(rt.catalogDue).toBe(false);
    rt.catalogChanged();
    expect(rt.catalogDue).toBe(true);
    expect(rt.syncCatalog(visibility)).toEqual({ kind: 'syncCatalog', visibility, full: false, after: 0 });
    expect(rt.catalogSynced({ applied: 1, deleted: 0, foreign: 0 }, visibility)).toBe(false);
    rt.catalogChanged();
    rt.syncCatalog(visibility);
    expect(rt.catalogSynced({ failure: down }, visibility)).toBe(true);
    // The next sync that gets through asks for the catalog in full.
    const s = snapshot([spec('greeter')]);
    rt.sync(s);
    rt.synced({ kind: 'synced', spec: rspec('fast', 'counter'), created: false }, s);
    expect(rt.syncCatalog(visibility)).toEqual({ kind: 'syncCatalog', visibility, full: true, after: 1 });
    rt.drifted();
    expect(rt.syncCatalog(visibility)).toMatchObject({ full: true });
  });

  it("syncs the catalog again when the Kyma's beta or internal label changes", () => {
    const rt = synced('counter');
    const s = snapshot([spec('greeter')], { visibility: { beta: true, internal: false } });
    rt.sync(s);
    rt.synced({ kind: 'synced', spec: rspec('fast', 'counter'), created: false }, s);
    expect(rt.catalogDue).toBe(true);
    expect(rt.syncCatalog(s.visibility)).toEqual({
      kind: 'syncCatalog',
      visibility: s.visibility,
      full: false,
      after: 0,
    });
  });

  it('cleans up once the modules are gone, waits on the drift timer after a failure (showing why), and tries again on it', () => {
    const rt = synced('counter');
    expect(rt.cleanup(600_000)).toEqual({ kind: 'cleanRuntime' });
    rt.cleaned(down);
    expect(rt.cleanup(600_000)).toEqual({ kind: 'wait', driftMs: 600_000 });
    expect(rt.condition({ remote: true })).toMatchObject({ status: 'False', reason: 'TargetClusterUnreachable' });
    rt.drifted();
    expect(rt.cleanup(600_000)).toEqual({ kind: 'cleanRuntime' });
    rt.cleaned();
    expect(rt.cleanup(600_000)).toBeUndefined();
    expect(rt.mirrors).toBe(false);
  });

  it('has no condition for a Kyma that never had a runtime', () => {
    expect(new KymaRuntimeSide().condition({ remote: false })).toBeUndefined();
  });

  it('takes what a continue-as-new carried, syncing the catalog when the carried state says nothing of it', () => {
    expect(new KymaRuntimeSide({ mode: 'synced', known: rspec('fast') }).state).toEqual({
      mode: 'synced',
      known: rspec('fast'),
      catalog: 'changed',
    });
    expect(new KymaRuntimeSide().state).toEqual({ catalog: 'full' });
  });
});
