// The pure parts of klm module catalog, list, promote and kyma status: what a Kyma is offered (the
// worker's visibility and resolution), a channel without a template marked, the list in the Kyma
// CLI's fields, a promotion refused when its rollout policy cannot be used, a Kyma whose workflow
// is gone said so; completion of commands by their aliases.
import { Command, Option } from 'commander';
import { describe, expect, it } from 'vitest';
import type { Kyma } from '../../src/api/kyma';
import type { ModuleReleaseMeta } from '../../src/api/modulereleasemeta';
import type { ModuleTemplate } from '../../src/api/moduletemplate';
import type { KubeObject } from '../../src/api/shared';
import type { RolloutPlanView } from '../../src/contract/rollout';
import { completionScript } from '../../src/cli/completion';
import { highestState } from '../../src/cli/kyma-module-rows';
import { listEntries, moduleTable, type ModuleRow } from '../../src/cli/kyma-modules';
import { notRunning, kymaStatusText, type KymaStatusView } from '../../src/cli/kyma-status';
import { catalogEntries, catalogTable, withKymaCliFields, type CatalogObjects } from '../../src/cli/module-catalog';
import { policyRefusal } from '../../src/cli/promote';
import { planTable } from '../../src/cli/rollout';
import { DEFAULT_ROLLOUT_POLICY } from '../../src/decisions/rollout-policy';

const BETA = 'operator.kyma-project.io/beta';

function template(module: string, version: string, labels?: Record<string, string>): ModuleTemplate & KubeObject {
  return {
    apiVersion: 'operator.kyma-project.io/v1beta2',
    kind: 'ModuleTemplate',
    metadata: { name: `${module}-${version}`, namespace: 'kcp', ...(labels ? { labels } : {}) },
    spec: { moduleName: module, version, descriptor: {} },
  };
}

function meta(module: string, channels: Record<string, string>): ModuleReleaseMeta & KubeObject {
  return {
    apiVersion: 'operator.kyma-project.io/v1beta2',
    kind: 'ModuleReleaseMeta',
    metadata: { name: module, namespace: 'kcp' },
    spec: {
      moduleName: module,
      channels: Object.entries(channels).map(([channel, version]) => ({ channel, version })),
    },
  };
}

function kyma(labels?: Record<string, string>): Kyma {
  return {
    apiVersion: 'operator.kyma-project.io/v1beta2',
    kind: 'Kyma',
    metadata: { name: 'k1', namespace: 'kcp', ...(labels ? { labels } : {}) },
    spec: { channel: 'regular' },
  };
}

const OBJECTS: CatalogObjects = {
  namespace: 'kcp',
  templates: [
    template('greeter', '1.0.0'),
    template('greeter', '1.1.0'),
    template('preview', '0.1.0', { [BETA]: 'True' }),
    template('mixed', '1.0.0'),
    template('mixed', '2.0.0', { [BETA]: 'true' }),
  ],
  metas: [
    meta('greeter', { regular: '1.0.0', fast: '1.2.0' }),
    meta('preview', { regular: '0.1.0' }),
    meta('mixed', { regular: '1.0.0', fast: '2.0.0' }),
  ],
};

describe('klm module catalog', () => {
  it('does not offer a beta module to a Kyma without the label (the label read as the worker reads it)', async () => {
    expect((await catalogEntries(OBJECTS, kyma())).map((e) => e.name)).toEqual(['greeter', 'mixed']);
    expect((await catalogEntries(OBJECTS, kyma({ [BETA]: 'TRUE' }))).map((e) => e.name)).toEqual([
      'greeter',
      'mixed',
      'preview',
    ]);
    // Without a Kyma: all of it, labelled modules flagged.
    expect((await catalogEntries(OBJECTS)).find((e) => e.name === 'preview')).toMatchObject({
      beta: true,
      versions: ['0.1.0'],
    });
  });

  it('offers the versions a Kyma may see, and marks a channel whose version it may not', async () => {
    const mixed = (await catalogEntries(OBJECTS, kyma())).find((e) => e.name === 'mixed')!;
    expect(mixed).toMatchObject({
      versions: ['1.0.0'],
      channels: { regular: '1.0.0', fast: '2.0.0' },
      beta: false,
      channelProblems: { fast: { reason: 'ModuleNotVisible' } },
    });
    expect(catalogTable([mixed])).toContain('regular: 1.0.0, fast: 2.0.0 (not visible to this Kyma)');
  });

  it("marks a channel whose version has no ModuleTemplate, with the worker's reason and message", async () => {
    const greeter = (await catalogEntries(OBJECTS, kyma())).find((e) => e.name === 'greeter')!;
    expect(greeter.channelProblems).toEqual({
      fast: {
        reason: 'TemplateNotFound',
        message:
          'module "greeter": no ModuleTemplate "greeter-1.2.0" in namespace "kcp" for version 1.2.0 of channel "fast"',
      },
    });
    expect(catalogTable([greeter])).toMatch(
      /greeter\s+1\.0\.0, 1\.1\.0\s+regular: 1\.0\.0, fast: 1\.2\.0 \(no template\)\s+-\s+kyma/,
    );
  });

  it("gives -o json the Kyma CLI's availableVersions (each version with its channels), and an empty catalog its header", async () => {
    const entries = withKymaCliFields(await catalogEntries(OBJECTS, kyma()));
    expect(entries.find((e) => e.name === 'greeter')).toMatchObject({
      name: 'greeter',
      availableVersions: '1.0.0(regular), 1.1.0',
      origin: 'kyma',
    });
    expect(
      withKymaCliFields([{ ...entries[0]!, versions: ['1.0.0'], channels: { regular: '1.0.0', fast: '1.0.0' } }])[0],
    ).toHaveProperty('availableVersions', '1.0.0(regular), 1.0.0(fast)');
    expect(catalogTable([])).toMatch(/^NAME\s+VERSIONS\s+CHANNELS\s+FLAGS\s+ORIGIN$/);
  });
});

describe('klm module list', () => {
  const ready: ModuleRow = {
    name: 'greeter',
    version: '1.0.0',
    channel: 'regular',
    installedChannel: 'regular',
    customResourcePolicy: 'Ignore',
    managed: true,
    moduleStatus: '-',
    installationStatus: 'Ready',
  };
  const upgrading: ModuleRow = {
    name: 'counter',
    version: '1.0.0',
    desiredVersion: '1.1.0',
    channel: 'fast',
    installedChannel: 'fast',
    customResourcePolicy: 'CreateAndDelete',
    managed: true,
    moduleStatus: 'Ready',
    installationStatus: 'Processing',
    message: 'installing 1.1.0',
  };
  const unmanaged: ModuleRow = {
    name: 'keeper',
    version: '1.1.0',
    installedChannel: 'regular',
    customResourcePolicy: 'Ignore',
    managed: false,
    moduleStatus: 'Ready',
    installationStatus: 'Unmanaged',
  };
  const never: ModuleRow = {
    name: 'ghost',
    desiredVersion: '1.0.0',
    channel: 'regular',
    installedChannel: 'regular',
    customResourcePolicy: 'CreateAndDelete',
    managed: true,
    moduleStatus: '-',
    installationStatus: 'Error',
    message: 'no template',
  };
  const direct: ModuleRow = {
    name: 'echo',
    version: '1.0.0',
    customResourcePolicy: 'CreateAndDelete',
    managed: false,
    moduleStatus: 'Ready',
    installationStatus: 'Ready',
    direct: { template: 'community/echo-1.0.0', community: true },
  };

  it("prints the Kyma CLI's fields, named and typed as its: version with its channel, crPolicy, managed a string; klm's beside them", () => {
    expect(listEntries([ready, upgrading, never, direct])).toEqual([
      {
        name: 'greeter',
        version: '1.0.0(regular)',
        crPolicy: 'Ignore',
        managed: 'true',
        moduleStatus: '-',
        installationStatus: 'Ready',
        installedVersion: '1.0.0',
        channel: 'regular',
      },
      {
        name: 'counter',
        version: '1.0.0(fast)',
        crPolicy: 'CreateAndDelete',
        managed: 'true',
        moduleStatus: 'Ready',
        installationStatus: 'Processing',
        installedVersion: '1.0.0',
        desiredVersion: '1.1.0',
        channel: 'fast',
        message: 'installing 1.1.0',
      },
      {
        name: 'ghost',
        version: '-',
        crPolicy: 'CreateAndDelete',
        managed: 'true',
        moduleStatus: '-',
        installationStatus: 'Error',
        desiredVersion: '1.0.0',
        channel: 'regular',
        message: 'no template',
      },
      {
        name: 'echo',
        version: '1.0.0',
        crPolicy: 'CreateAndDelete',
        managed: 'false',
        moduleStatus: 'Ready',
        installationStatus: 'Ready',
        installedVersion: '1.0.0',
        direct: { template: 'community/echo-1.0.0', community: true },
      },
    ]);
  });

  it('shows VERSION as the Kyma CLI does (1.2.3(regular)), the version the Kyma wants beside it when it differs', () => {
    const text = moduleTable(listEntries([ready, upgrading, direct]));
    expect(text).toMatch(/^NAME\s+VERSION\s+CR POLICY\s+MANAGED\s+MODULE STATUS\s+INSTALLATION STATUS\n/);
    expect(text).toMatch(/\ngreeter\s+1\.0\.0\(regular\)\s+Ignore\s+true\s+-\s+Ready\n/);
    expect(text).toMatch(/\ncounter\s+1\.0\.0\(fast\) \(\*1\.1\.0\)\s+CreateAndDelete\s+true\s+Ready\s+Processing\n/);
    expect(text).toMatch(/\necho\s+1\.0\.0\s+CreateAndDelete\s+false\s+Ready\s+Ready\n/);
    expect(text).toMatch(/\(\*V\): the Kyma wants version V, which is not the one running yet$/);
  });

  it('prints the header alone for a Kyma without modules, as the Kyma CLI does (JSON: [])', () => {
    expect(moduleTable([])).toBe('NAME   VERSION   CR POLICY   MANAGED   MODULE STATUS   INSTALLATION STATUS');
  });

  it('shows an unmanaged module with the version it runs and no footer: nothing is wanted of it', () => {
    const text = moduleTable(listEntries([ready, unmanaged]));
    expect(text).toMatch(/\nkeeper\s+1\.1\.0\(regular\)\s+Ignore\s+false\s+Ready\s+Unmanaged$/);
    expect(text).not.toContain('(*');
    expect(text).not.toContain('the Kyma wants');
  });

  it("reads a module's state from its CRs as the Kyma CLI does: Ready first, then Processing, Deleting, Error, Warning", () => {
    expect(highestState(['Error', 'Ready'])).toBe('Ready');
    expect(highestState(['Warning', 'Error'])).toBe('Error');
    expect(highestState(['Warning', 'Deleting', 'Processing'])).toBe('Processing');
    expect(highestState(['Custom', 'Warning'])).toBe('Warning');
    expect(highestState(['Custom'])).toBe('Custom');
    expect(highestState([])).toBeUndefined();
  });
});

describe('klm completion', () => {
  it('completes a command typed by its alias as by its name, and offers no hidden option', () => {
    const root = new Command('klm');
    const mod = root.command('module').alias('modules');
    mod.command('delete').alias('del').option('--auto-approve', 'do not ask');
    mod.command('add').option('--default-config-cr', 'the default CR').addOption(new Option('--default-cr').hideHelp());
    const script = completionScript(root, 'bash');
    for (const path of ['module delete', 'modules delete', 'module del', 'modules del'])
      expect(script).toContain(`"${path}"*) opts="--auto-approve --help" ;;`);
    expect(script).toContain('"modules add"*) opts="--default-config-cr --help" ;;');
  });
});

describe('klm module promote', () => {
  const p = { namespace: 'kcp', module: 'greeter', channel: 'regular', version: '1.1.0' };
  const plan: RolloutPlanView = {
    module: 'greeter',
    channel: 'regular',
    version: '1.1.0',
    from: '1.0.0',
    policy: DEFAULT_ROLLOUT_POLICY,
    waves: [['k1'], ['k2', 'k3']],
  };
  const problem =
    'key default of ConfigMap kcp/klm-rollout-policy: waves: the size "abc" is neither a positive whole count (5) nor a share between 0 and 100 % ("10%")';

  it('refuses a channel whose rollout policy cannot be used, naming the key, the problem, the fix and the override', () => {
    expect(policyRefusal(p, plan)).toBeUndefined();
    const refusal = policyRefusal(p, { ...plan, policyProblem: problem })!;
    expect(refusal).toContain(`its policy cannot be used: ${problem}`);
    expect(refusal).toContain('kubectl edit configmap klm-rollout-policy -n kcp');
    expect(refusal).toContain('--force');
    expect(refusal).not.toContain('\n');
  });

  it('shows no waves of the built-in default beside a policy that cannot be used', () => {
    expect(planTable(plan)).toContain('wave 2 (2): k2 k3');
    const shown = planTable({ ...plan, policyProblem: problem });
    expect(shown).toBe(
      `greeter on regular → 1.1.0 (from 1.0.0): 3 Kymas; the rollout would halt at once, for its ` +
        `policy cannot be used: ${problem}\nthe Kymas it would move once the policy is fixed: k1 k2 ` +
        `k3`,
    );
  });
});

describe('klm kyma status', () => {
  const view = (workflow: KymaStatusView['workflow']): KymaStatusView => ({
    kyma: 'kcp/k1',
    state: 'Ready',
    channel: 'regular',
    conditions: [],
    modules: [],
    workflowId: 'kyma/kcp/k1',
    workflow,
  });

  it('says nothing more of a running workflow', () => {
    expect(notRunning(view({ status: 'RUNNING' }))).toBeUndefined();
    expect(kymaStatusText(view({ status: 'RUNNING' }))).toContain('workflow: kyma/kcp/k1 (running)');
  });

  it('says which way a workflow is gone, and when', () => {
    const terminated = view({ status: 'TERMINATED', closedAt: '2025-01-02T03:04:05.000Z' });
    expect(kymaStatusText(terminated)).toContain(
      'workflow: kyma/kcp/k1 (NOT RUNNING: TERMINATED at 2025-01-02T03:04:05.000Z)',
    );
    expect(notRunning(terminated)?.message).toMatch(
      /^the workflow kyma\/kcp\/k1 of Kyma kcp\/k1 is not running \(it ended TERMINATED at 2025-01-02T03:04:05\.000Z\): nothing reconciles the Kyma; the bridge starts it again when/,
    );
    expect(notRunning(view({ status: 'NOT_FOUND' }))?.message).toContain('(Temporal has no such workflow)');
    for (const status of ['FAILED', 'TIMED_OUT', 'COMPLETED', 'CANCELLED'])
      expect(notRunning(view({ status }))?.message).toContain(`it ended ${status}`);
  });
});
