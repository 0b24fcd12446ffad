// The pure parts of klm module catalog, promote and kyma status: what a Kyma is offered (the
// worker's visibility and resolution), a channel without a template marked, a promotion refused
// when its rollout policy cannot be used, a Kyma whose workflow is gone said so.
import { describe, expect, it } from 'vitest';
import type { Kyma } from '../../src/api/kyma';
import type { ModuleReleaseMeta } from '../../src/api/modulereleasemeta';
import type { ModuleTemplate } from '../../src/api/moduletemplate';
import type { KubeObject } from '../../src/api/shared';
import type { RolloutPlanView } from '../../src/contract/rollout';
import { notRunning, kymaStatusText, type KymaStatusView } from '../../src/cli/kyma-status';
import { catalogEntries, catalogTable, type CatalogObjects } from '../../src/cli/module-catalog';
import { policyRefusal } from '../../src/cli/promote';
import { planTable } from '../../src/cli/rollout';
import { DEFAULT_ROLLOUT_POLICY } from '../../src/decisions/rollout-policy';

const BETA = 'operator.kyma-project.io/beta';

function template(module: string, version: string, labels?: Record<string, string>): ModuleTemplate & KubeObject {
  return { apiVersion: 'operator.kyma-project.io/v1beta2', kind: 'ModuleTemplate', metadata: { name: `${module}-${version}`, namespace: 'kcp', ...(labels ? { labels } : {}) }, spec: { moduleName: module, version, descriptor: {} } };
}

function meta(module: string, channels: Record<string, string>): ModuleReleaseMeta & KubeObject {
  return { apiVersion: 'operator.kyma-project.io/v1beta2', kind: 'ModuleReleaseMeta', metadata: { name: module, namespace: 'kcp' }, spec: { moduleName: module, channels: Object.entries(channels).map(([channel, version]) => ({ channel, version })) } };
}

function kyma(labels?: Record<string, string>): Kyma {
  return { apiVersion: 'operator.kyma-project.io/v1beta2', kind: 'Kyma', metadata: { name: 'k1', namespace: 'kcp', ...(labels ? { labels } : {}) }, spec: { channel: 'regular' } };
}

const OBJECTS: CatalogObjects = {
  namespace: 'kcp',
  templates: [template('greeter', '1.0.0'), template('greeter', '1.1.0'), template('preview', '0.1.0', { [BETA]: 'True' }), template('mixed', '1.0.0'), template('mixed', '2.0.0', { [BETA]: 'true' })],
  metas: [meta('greeter', { regular: '1.0.0', fast: '1.2.0' }), meta('preview', { regular: '0.1.0' }), meta('mixed', { regular: '1.0.0', fast: '2.0.0' })],
};

describe('klm module catalog', () => {
  it('does not offer a beta module to a Kyma without the label (the label read as the worker reads it)', async () => {
    expect((await catalogEntries(OBJECTS, kyma())).map((e) => e.name)).toEqual(['greeter', 'mixed']);
    expect((await catalogEntries(OBJECTS, kyma({ [BETA]: 'TRUE' }))).map((e) => e.name)).toEqual(['greeter', 'mixed', 'preview']);
    // Without a Kyma: all of it, labelled modules flagged.
    expect((await catalogEntries(OBJECTS)).find((e) => e.name === 'preview')).toMatchObject({ beta: true, versions: ['0.1.0'] });
  });

  it('offers the versions a Kyma may see, and marks a channel whose version it may not', async () => {
    const mixed = (await catalogEntries(OBJECTS, kyma())).find((e) => e.name === 'mixed')!;
    expect(mixed).toMatchObject({ versions: ['1.0.0'], channels: { regular: '1.0.0', fast: '2.0.0' }, beta: false, channelProblems: { fast: { reason: 'ModuleNotVisible' } } });
    expect(catalogTable([mixed])).toContain('regular: 1.0.0, fast: 2.0.0 (not visible to this Kyma)');
  });

  it("marks a channel whose version has no ModuleTemplate, with the worker's reason and message", async () => {
    const greeter = (await catalogEntries(OBJECTS, kyma())).find((e) => e.name === 'greeter')!;
    expect(greeter.channelProblems).toEqual({ fast: { reason: 'TemplateNotFound', message: 'module "greeter": no ModuleTemplate "greeter-1.2.0" in namespace "kcp" for version 1.2.0 of channel "fast"' } });
    expect(catalogTable([greeter])).toMatch(/greeter\s+1\.0\.0, 1\.1\.0\s+regular: 1\.0\.0, fast: 1\.2\.0 \(no template\)\s+-\s+kyma/);
  });
});

describe('klm module promote', () => {
  const p = { namespace: 'kcp', module: 'greeter', channel: 'regular', version: '1.1.0' };
  const plan: RolloutPlanView = { module: 'greeter', channel: 'regular', version: '1.1.0', from: '1.0.0', policy: DEFAULT_ROLLOUT_POLICY, waves: [['k1'], ['k2', 'k3']] };
  const problem = 'key default of ConfigMap kcp/klm-rollout-policy: waves: the size "abc" is neither a positive whole count (5) nor a share between 0 and 100 % ("10%")';

  it('refuses a channel whose rollout policy cannot be used, naming the key, the problem, the fix and the override', () => {
    expect(policyRefusal(p, plan)).toBeUndefined();
    const refusal = policyRefusal(p, { ...plan, policyProblem: problem })!;
    expect(refusal).toContain(`its policy cannot be used: ${problem}`);
    expect(refusal).toContain('kubectl edit configmap klm-rollout-policy -n kcp');
    expect(refusal).toContain('--force');
    expect(refusal).not.toContain('\n');
  });

  it("shows no waves of the built-in default beside a policy that cannot be used", () => {
    expect(planTable(plan)).toContain('wave 2 (2): k2 k3');
    const shown = planTable({ ...plan, policyProblem: problem });
    expect(shown).toBe(`greeter on regular → 1.1.0 (from 1.0.0): 3 Kymas; the rollout would halt at once, for its policy cannot be used: ${problem}\nthe Kymas it would move once the policy is fixed: k1 k2 k3`);
  });
});

describe('klm kyma status', () => {
  const view = (workflow: KymaStatusView['workflow']): KymaStatusView => ({ kyma: 'kcp/k1', state: 'Ready', channel: 'regular', conditions: [], modules: [], workflowId: 'kyma/kcp/k1', workflow });

  it('says nothing more of a running workflow', () => {
    expect(notRunning(view({ status: 'RUNNING' }))).toBeUndefined();
    expect(kymaStatusText(view({ status: 'RUNNING' }))).toContain('workflow: kyma/kcp/k1 (running)');
  });

  it('says which way a workflow is gone, and when', () => {
    const terminated = view({ status: 'TERMINATED', closedAt: '2025-01-02T03:04:05.000Z' });
    expect(kymaStatusText(terminated)).toContain('workflow: kyma/kcp/k1 (NOT RUNNING: TERMINATED at 2025-01-02T03:04:05.000Z)');
    expect(notRunning(terminated)?.message).toMatch(/^the workflow kyma\/kcp\/k1 of Kyma kcp\/k1 is not running \(it ended TERMINATED at 2025-01-02T03:04:05\.000Z\): nothing reconciles the Kyma; the bridge starts it again when/);
    expect(notRunning(view({ status: 'NOT_FOUND' }))?.message).toContain('(Temporal has no such workflow)');
    for (const status of ['FAILED', 'TIMED_OUT', 'COMPLETED', 'CANCELLED']) expect(notRunning(view({ status }))?.message).toContain(`it ended ${status}`);
  });
});
