// The runtime side's decisions without Temporal or clusters: how the runtime Kyma's spec takes
// the control plane's changes, which catalog a runtime may see, and the Kyma workflow's steps
// for a Kyma with a runtime (sync, catalog, status mirror, clean-up).
import { describe, expect, it } from 'vitest';
import type { ModuleReleaseMeta } from '../../../src/api/modulereleasemeta';
import type { ModuleTemplate } from '../../../src/api/moduletemplate';
import { effectiveKymaSpec, RUNTIME_SPEC_ANNOTATION, SYNC_DIGEST_ANNOTATION } from '../../../src/api/runtime';
import type { KubeObject } from '../../../src/api/shared';
import type { KymaSnapshot, SpecModule } from '../../../src/contract/kyma';
import type { Resolution } from '../../../src/contract/module';
import type { RuntimeSpec } from '../../../src/contract/runtime';
import { KymaState, type KymaStep } from '../../../src/decisions/kyma-state';
import { catalogKey, runtimeCatalog } from '../../../src/decisions/runtime-catalog';
import { mergeControlPlaneChange, runtimeStatus, specModules } from '../../../src/decisions/runtime-kyma';
import { mod, SETTINGS, snapshot as loaded } from './fixtures';

const spec = (name: string, over: Partial<SpecModule> = {}): SpecModule => ({
  name,
  customResourcePolicy: 'CreateAndDelete',
  managed: true,
  ...over,
});
const rspec = (channel: string, ...names: string[]): RuntimeSpec => ({ channel, modules: names.map((n) => spec(n)) });

describe("the runtime Kyma takes the control plane's changes, and keeps its users'", () => {
  it("adds a module the operator added, removes one the operator removed, and leaves the users' own entries as written", () => {
    const runtime = {
      channel: 'regular',
      modules: [{ name: 'greeter' }, { name: 'counter', channel: 'fast', controller: 'theirs' }],
    };
    const merged = mergeControlPlaneChange(runtime, rspec('regular', 'greeter'), rspec('regular', 'keda'));
    expect(merged.modules).toEqual([{ name: 'counter', channel: 'fast', controller: 'theirs' }, { name: 'keda' }]);
    expect(merged.channel).toBe('regular');
  });

  it('changes nothing when the control plane did not change, whatever the runtime holds', () => {
    const runtime = { channel: 'fast', modules: [{ name: 'counter', customResourcePolicy: 'Ignore' as const }] };
    expect(mergeControlPlaneChange(runtime, rspec('regular', 'greeter'), rspec('regular', 'greeter'))).toEqual(runtime);
  });

  it('moves the runtime to a channel the operator set, and sets a module the operator changed', () => {
    const merged = mergeControlPlaneChange(
      { channel: 'regular', modules: [{ name: 'greeter' }] },
      rspec('regular', 'greeter'),
      { channel: 'fast', modules: [spec('greeter', { channel: 'experimental', managed: false })] },
    );
    expect(merged).toEqual({
      channel: 'fast',
      modules: [{ name: 'greeter', channel: 'experimental', managed: false }],
    });
  });

  it('counts a module listed twice once', () => {
    expect(specModules([{ name: 'a' }, { name: 'a', channel: 'fast' }]).map((m) => m.name)).toEqual(['a']);
  });

  it("names the runtime's copy of each template in the status its users read", () => {
    const shown = runtimeStatus(
      {
        state: 'Ready',
        modules: [
          {
            name: 'a',
            state: 'Ready',
            template: { kind: 'ModuleTemplate', metadata: { name: 'a-1.0.0', namespace: 'kcp-system' } },
          },
        ],
      },
      'kyma-system',
    );
    expect(shown.modules?.[0]?.template?.metadata?.namespace).toBe('kyma-system');
  });

  it("lets routing and plans follow the runtime's spec through the control-plane Kyma's annotation", () => {
    const kyma = {
      metadata: {
        annotations: { [RUNTIME_SPEC_ANNOTATION]: JSON.stringify({ channel: 'fast', modules: [{ name: 'keda' }] }) },
      },
      spec: { channel: 'regular', modules: [{ name: 'greeter' }] },
    };
    expect(effectiveKymaSpec(kyma)).toEqual({ channel: 'fast', modules: [{ name: 'keda' }] });
    expect(
      effectiveKymaSpec({ metadata: { annotations: { [RUNTIME_SPEC_ANNOTATION]: '{not json' } }, spec: kyma.spec }),
    ).toEqual(kyma.spec);
  });
});

const template = (
  name: string,
  labels: Record<string, string> = {},
  over: Partial<ModuleTemplate['spec']> = {},
): ModuleTemplate & KubeObject => ({
  apiVersion: 'operator.kyma-project.io/v1beta2',
  kind: 'ModuleTemplate',
  metadata: { name, namespace: 'kcp-system', labels },
  spec: { moduleName: name.replace(/-\d.*$/, ''), version: name.replace(/^.*?-(\d)/, '$1'), descriptor: {}, ...over },
});
const meta = (module: string): ModuleReleaseMeta & KubeObject => ({
  apiVersion: 'operator.kyma-project.io/v1beta2',
  kind: 'ModuleReleaseMeta',
  metadata: { name: module, namespace: 'kcp-system' },
  spec: { moduleName: module, channels: [{ channel: 'regular', version: '1.0.0' }] },
});

describe('the catalog a runtime may see', () => {
  const templates = [
    template('greeter-1.0.0'),
    template('preview-1.0.0', { 'operator.kyma-project.io/beta': 'true' }),
    template('secret-1.0.0', { 'operator.kyma-project.io/internal': 'true' }),
    template('base-1.0.0', {}, { mandatory: true }),
  ];
  const metas = [meta('greeter'), meta('preview'), meta('secret'), meta('base')];

  it('holds default templates and their release metas; beta and internal ones only for Kymas labelled so; never mandatory ones', () => {
    const keys = (v: { beta: boolean; internal: boolean }) =>
      runtimeCatalog(templates, metas, v, 'kyma-system').map(catalogKey);
    expect(keys({ beta: false, internal: false })).toEqual([
      'ModuleReleaseMeta/greeter',
      'ModuleTemplate/greeter-1.0.0',
    ]);
    expect(keys({ beta: true, internal: false })).toEqual([
      'ModuleReleaseMeta/greeter',
      'ModuleReleaseMeta/preview',
      'ModuleTemplate/greeter-1.0.0',
      'ModuleTemplate/preview-1.0.0',
    ]);
    expect(keys({ beta: true, internal: true })).toHaveLength(6);
  });

  it('copies into the runtime namespace, labelled ours, with a digest that changes with the content only', () => {
    const [a] = runtimeCatalog([template('greeter-1.0.0')], [], { beta: false, internal: false }, 'kyma-system');
    const [b] = runtimeCatalog(
      [
        {
          ...template('greeter-1.0.0'),
          metadata: { name: 'greeter-1.0.0', namespace: 'kcp-system', resourceVersion: '99' },
        },
      ],
      [],
      { beta: false, internal: false },
      'kyma-system',
    );
    const [c] = runtimeCatalog(
      [template('greeter-1.0.0', {}, { requiresDowntime: true })],
      [],
      { beta: false, internal: false },
      'kyma-system',
    );
    expect(a?.metadata).toMatchObject({
      namespace: 'kyma-system',
      labels: { 'operator.kyma-project.io/managed-by': 'klm-temporal' },
    });
    expect(a?.metadata.annotations?.[SYNC_DIGEST_ANNOTATION]).toBe(b?.metadata.annotations?.[SYNC_DIGEST_ANNOTATION]);
    expect(a?.metadata.annotations?.[SYNC_DIGEST_ANNOTATION]).not.toBe(
      c?.metadata.annotations?.[SYNC_DIGEST_ANNOTATION],
    );
  });
});

/** A Kyma as loaded, whose runtime side is on (`remote`). */
const snapshot = (modules: SpecModule[], over: Partial<KymaSnapshot> = {}) =>
  loaded(modules, { remote: true, ...over });
const ok = (name: string): Resolution => ({
  name,
  module: mod('1.0.0', { name, template: { name: `${name}-1.0.0`, namespace: 'kcp', generation: 1 } }),
});

type Answers = { runtime?: Parameters<KymaState['runtimeSynced']>[0]; catalogFails?: boolean; cleanFails?: boolean };

function untilWait(st: KymaState, load: KymaSnapshot, a: Answers = {}): KymaStep[] {
  const trace: KymaStep[] = [];
  for (let i = 0; i < 50; i++) {
    const step = st.next();
    trace.push(step);
    if (step.kind === 'load') st.loaded(load);
    else if (step.kind === 'syncRuntime')
      st.runtimeSynced(a.runtime ?? { kind: 'synced', spec: step.known ?? step.controlPlane, created: !step.known });
    else if (step.kind === 'syncCatalog')
      st.catalogSynced(
        a.catalogFails
          ? { failure: { reason: 'TargetClusterUnreachable', message: 'down' } }
          : { applied: 1, deleted: 0, foreign: 0 },
        step.visibility,
      );
    else if (step.kind === 'cleanRuntime')
      st.runtimeCleaned(a.cleanFails ? { reason: 'TargetClusterUnreachable', message: 'down' } : undefined);
    else if (step.kind === 'resolve')
      st.resolved(
        step.snapshot.modules.map((m) => ok(m.name)),
        0,
      );
    else if (step.kind === 'wait' || step.kind === 'end') return trace;
  }
  throw new Error(`no wait within 50 steps: ${trace.map((s) => s.kind).join(', ')}`);
}
const kinds = (t: KymaStep[]) => t.map((s) => (s.kind === 'event' ? `event:${s.event.reason}` : s.kind));
const find = <K extends KymaStep['kind']>(t: KymaStep[], kind: K) =>
  t.find((s): s is Extract<KymaStep, { kind: K }> => s.kind === kind);

describe('KymaState with a runtime', () => {
  it("syncs the runtime Kyma, resolves the runtime's modules, syncs its catalog while they install, and mirrors the status into the runtime", () => {
    const st = new KymaState({ settings: SETTINGS });
    const t = untilWait(st, snapshot([spec('greeter')]), {
      runtime: { kind: 'synced', spec: rspec('regular', 'counter'), created: true },
    });
    expect(kinds(t)).toEqual(['load', 'syncRuntime', 'resolve', 'dispatch', 'syncCatalog', 'writeStatus', 'wait']);
    expect(find(t, 'resolve')?.snapshot.modules.map((m) => m.name)).toEqual(['counter']);
    expect(find(t, 'syncCatalog')).toMatchObject({ full: true });
    expect(find(t, 'writeStatus')?.status.conditions).toContainEqual(
      expect.objectContaining({ type: 'Runtime', status: 'True', reason: 'Synced' }),
    );
    // The runtime's users read it too: written with it.
    expect(find(t, 'writeStatus')).toMatchObject({ mirror: true });
  });

  it("sends the control-plane spec of the last sync, so that only the operator's changes since reach the runtime", () => {
    const st = new KymaState({ settings: SETTINGS });
    untilWait(st, snapshot([spec('greeter')]));
    st.changed();
    const t = untilWait(st, snapshot([spec('greeter'), spec('keda')]), {
      runtime: { kind: 'synced', spec: rspec('regular', 'counter'), created: false },
    });
    expect(find(t, 'syncRuntime')).toMatchObject({
      before: rspec('regular', 'greeter'),
      known: rspec('regular', 'greeter'),
      controlPlane: rspec('regular', 'greeter', 'keda'),
    });
    expect(kinds(t)).not.toContain('syncCatalog');
  });

  it("keeps the mandatory modules of the control plane beside the runtime's", () => {
    const st = new KymaState({ settings: SETTINGS });
    const t = untilWait(st, snapshot([spec('greeter'), spec('base', { channel: 'mandatory', mandatory: true })]), {
      runtime: { kind: 'synced', spec: rspec('regular', 'counter'), created: false },
    });
    expect(find(t, 'syncRuntime')?.controlPlane.modules.map((m) => m.name)).toEqual(['greeter']);
    expect(find(t, 'resolve')?.snapshot.modules.map((m) => m.name)).toEqual(['counter', 'base']);
  });

  it("goes on with the runtime's last spec when the runtime cannot be reached, and says so in a condition", () => {
    const st = new KymaState({ settings: SETTINGS });
    untilWait(st, snapshot([spec('greeter')]), {
      runtime: { kind: 'synced', spec: rspec('regular', 'counter'), created: false },
    });
    st.changed();
    const t = untilWait(st, snapshot([spec('greeter')]), {
      runtime: { failure: { reason: 'TargetClusterUnreachable', message: 'the cluster does not answer' } },
    });
    expect(find(t, 'resolve')?.snapshot.modules.map((m) => m.name)).toEqual(['counter']);
    expect(find(t, 'writeStatus')?.status.conditions).toContainEqual(
      expect.objectContaining({ type: 'Runtime', status: 'False', reason: 'TargetClusterUnreachable' }),
    );
  });

  it("turns the Kyma's state with its Runtime condition when the cluster stops answering, with the reason in its message, and back once it answers", () => {
    const st = new KymaState({ settings: SETTINGS });
    untilWait(st, snapshot([spec('greeter')]), {
      runtime: { kind: 'synced', spec: rspec('regular', 'greeter'), created: false },
    });
    st.reported({ reason: 'Ready', status: { name: 'greeter', version: '1.0.0', state: 'Ready' } });
    untilWait(st, snapshot([spec('greeter')]), {
      runtime: { kind: 'synced', spec: rspec('regular', 'greeter'), created: false },
    });
    expect(st.status().state).toBe('Ready');
    st.changed();
    const down = untilWait(st, snapshot([spec('greeter')]), {
      runtime: { failure: { reason: 'TargetClusterUnreachable', message: 'its API server did not answer within 20s' } },
    });
    expect(find(down, 'writeStatus')?.status).toMatchObject({
      state: 'Error',
      lastOperation: {
        operation: 'the runtime Kyma kyma-system/default could not be synced: its API server did not answer within 20s',
      },
    });
    // Its module's entry does not go on saying Ready: it tells the outage, then what it last reported.
    expect(find(down, 'writeStatus')?.status.modules).toEqual([
      expect.objectContaining({
        name: 'greeter',
        version: '1.0.0',
        state: 'Error',
        message: 'its API server did not answer within 20s (last reported: Ready)',
      }),
    ]);
    st.changed();
    const back = untilWait(st, snapshot([spec('greeter')]), {
      runtime: { kind: 'synced', spec: rspec('regular', 'greeter'), created: false },
    });
    expect(find(back, 'writeStatus')?.status.state).toBe('Ready');
  });

  it("stops writing the runtime's status when it cannot be written, until a sync gets through, which writes it again", () => {
    const st = new KymaState({ settings: SETTINGS });
    untilWait(st, snapshot([spec('greeter')]));
    st.runtimeStatusFailed({ reason: 'TargetClusterUnreachable', message: 'the cluster does not answer' });
    st.reported({ reason: 'Ready', status: { name: 'greeter', version: '1.0.0', state: 'Ready' } });
    const quiet = untilWait(st, snapshot([spec('greeter')]));
    expect(kinds(quiet)).toEqual(['writeStatus', 'wait']);
    expect(find(quiet, 'writeStatus')).not.toHaveProperty('mirror');
    expect(find(quiet, 'writeStatus')?.status.conditions).toContainEqual(
      expect.objectContaining({ type: 'Runtime', status: 'False', reason: 'TargetClusterUnreachable' }),
    );
    st.changed();
    const back = untilWait(st, snapshot([spec('greeter')]));
    expect(find(back, 'writeStatus')).toMatchObject({ mirror: true, status: { state: 'Ready' } });
  });

  it("keeps following the runtime's last spec when the kubeconfig Secret goes, without trying to reach it", () => {
    const st = new KymaState({ settings: SETTINGS });
    untilWait(st, snapshot([spec('greeter')]), {
      runtime: { kind: 'synced', spec: rspec('regular', 'counter'), created: false },
    });
    st.changed();
    const t = untilWait(st, snapshot([spec('greeter')], { remote: false }));
    expect(kinds(t)).not.toContain('syncRuntime');
    expect(find(t, 'resolve')?.snapshot.modules.map((m) => m.name)).toEqual(['counter']);
    expect(find(t, 'writeStatus')?.status.conditions).toContainEqual(
      expect.objectContaining({ type: 'Runtime', reason: 'InvalidKubeconfig' }),
    );
  });

  it('tries a runtime that could not be synced again after the install backoff, and arms no timer once it answers', () => {
    const st = new KymaState({ settings: SETTINGS });
    const failed = untilWait(st, snapshot([spec('greeter')]), {
      runtime: { failure: { reason: 'Failed', message: 'storage is (re)initializing' } },
    });
    expect(failed[failed.length - 1]).toMatchObject({ kind: 'wait', wakeAt: SETTINGS.installRetryMs });
    st.woke({ drift: true });
    const back = untilWait(st, snapshot([spec('greeter')]));
    expect(back[back.length - 1]).toEqual({ kind: 'wait', driftMs: SETTINGS.driftIntervalMs });
  });

  it('keeps to its own spec, with a Warning once, when the runtime Kyma belongs to another Kyma', () => {
    const st = new KymaState({ settings: SETTINGS });
    const t = untilWait(st, snapshot([spec('greeter')]), { runtime: { kind: 'taken', owner: 'kcp/other' } });
    expect(kinds(t)).toEqual([
      'load',
      'syncRuntime',
      'event:RuntimeKymaTaken',
      'resolve',
      'dispatch',
      'writeStatus',
      'wait',
    ]);
    expect(find(t, 'resolve')?.snapshot.modules.map((m) => m.name)).toEqual(['greeter']);
    st.changed();
    expect(
      kinds(untilWait(st, snapshot([spec('greeter')]), { runtime: { kind: 'taken', owner: 'kcp/other' } })),
    ).not.toContain('event:RuntimeKymaTaken');
  });

  it('syncs the catalog on a catalog signal without loading, and reads what the runtime holds on the drift timer', () => {
    const st = new KymaState({ settings: SETTINGS });
    untilWait(st, snapshot([]));
    st.catalogChanged();
    expect(st.awake()).toBe(true);
    expect(kinds(untilWait(st, snapshot([])))).toEqual(['syncCatalog', 'wait']);
    st.woke({ drift: true });
    const t = untilWait(st, snapshot([]));
    expect(find(t, 'syncCatalog')).toMatchObject({ full: true });
  });

  it('shows a catalog that could not be synced in the Runtime condition, and syncs it again on the drift timer', () => {
    const st = new KymaState({ settings: SETTINGS });
    const t = untilWait(st, snapshot([]), { catalogFails: true });
    expect(find(t, 'writeStatus')?.status.conditions).toContainEqual(
      expect.objectContaining({ type: 'Runtime', status: 'False', reason: 'TargetClusterUnreachable' }),
    );
    st.woke({ drift: true });
    expect(find(untilWait(st, snapshot([])), 'syncCatalog')).toMatchObject({ full: true });
  });

  it('never wakes for the catalog while the Kyma is being deleted (its catalog goes with the clean-up)', () => {
    const st = new KymaState({ settings: SETTINGS });
    untilWait(st, snapshot([spec('greeter')]));
    st.changed();
    untilWait(st, snapshot([spec('greeter')], { deleting: true }));
    st.woke({ drift: true });
    st.catalogChanged();
    const t = untilWait(st, snapshot([spec('greeter')], { deleting: true }));
    expect(kinds(t)).not.toContain('syncCatalog');
    expect(st.awake()).toBe(false);
  });

  it('syncs the catalog in full on the next load after a failed sync, and counts the syncs that went through', () => {
    const st = new KymaState({ settings: SETTINGS });
    expect(find(untilWait(st, snapshot([])), 'syncCatalog')).toMatchObject({ full: true, after: 0 });
    st.catalogChanged();
    untilWait(st, snapshot([]), { catalogFails: true });
    st.changed();
    expect(find(untilWait(st, snapshot([])), 'syncCatalog')).toMatchObject({ full: true, after: 1 });
  });

  it("keeps a mandatory module the control-plane Kyma lists when the runtime's users do not list it", () => {
    const st = new KymaState({ settings: SETTINGS });
    const base = spec('base', { channel: 'mandatory', mandatory: true });
    const t = untilWait(st, snapshot([spec('base')], { mandatoryModules: [base] }), {
      runtime: { kind: 'synced', spec: rspec('regular', 'counter'), created: false },
    });
    expect(find(t, 'resolve')?.snapshot.modules).toEqual([spec('counter'), base]);
  });

  it("syncs the catalog again when the Kyma's beta or internal label changes", () => {
    const st = new KymaState({ settings: SETTINGS });
    untilWait(st, snapshot([]));
    st.changed();
    expect(
      find(untilWait(st, snapshot([], { visibility: { beta: true, internal: false } })), 'syncCatalog'),
    ).toMatchObject({ visibility: { beta: true, internal: false }, full: false });
  });

  it('removes the runtime side after the modules when the Kyma is deleted, and waits (showing why) when that fails', () => {
    const st = new KymaState({ settings: SETTINGS });
    untilWait(st, snapshot([]));
    st.changed();
    const failed = untilWait(st, snapshot([], { deleting: true }), { cleanFails: true });
    expect(kinds(failed)).toContain('cleanRuntime');
    expect(kinds(failed)).not.toContain('removeFinalizer');
    expect(failed[failed.length - 1]).toMatchObject({ kind: 'wait', driftMs: SETTINGS.driftIntervalMs });
    st.woke({ drift: true });
    const t = untilWait(st, snapshot([], { deleting: true }));
    expect(kinds(t)).toEqual(['load', 'cleanRuntime', 'writeStatus', 'event:Deleted', 'removeFinalizer', 'end']);
  });

  it('has no runtime side for a Kyma without a kubeconfig Secret', () => {
    const local = untilWait(new KymaState({ settings: SETTINGS }), snapshot([spec('greeter')], { remote: false }));
    expect(kinds(local)).not.toContain('syncRuntime');
    expect(find(local, 'writeStatus')?.status.conditions).toHaveLength(1);
  });

  it('carries the runtime side across continue-as-new', () => {
    const st = new KymaState({ settings: SETTINGS });
    untilWait(st, snapshot([spec('greeter')]), {
      runtime: { kind: 'synced', spec: rspec('regular', 'counter'), created: false },
    });
    const next = new KymaState({ settings: SETTINGS, carried: st.carry() });
    const t = untilWait(next, snapshot([spec('greeter')]));
    expect(find(t, 'syncRuntime')).toMatchObject({
      known: rspec('regular', 'counter'),
      before: rspec('regular', 'greeter'),
    });
  });
});
