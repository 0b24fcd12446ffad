// klm module …, as users run it: the command as a process of its own against the local stack,
// its exit codes and output (JSON parsed), each refusal, the deletion flow blocked, listed, then
// unblocked.
import { execFile } from 'node:child_process';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import type { Kyma } from '../../src/api/kyma';
import { API_VERSION, LABELS, ROLLOUT_POLICY_CONFIGMAP, type KubeObject } from '../../src/api/shared';
import { highestState } from '../../src/cli/kyma-module-rows';
import { eventually, getKyma, kymaObject, kymaWorkflowId, useKlm } from '../support/klm';
import { klmCli } from '../support/cli';
import { stackInfo, uniqueName } from '../support/stack';

const exec = promisify(execFile);
const COUNTER = { apiVersion: 'counter.example.io/v1alpha1', kind: 'Counter' };

describe('klm module', () => {
  // No look for ended workflows here: a Kyma workflow the test terminates stays ended until the
  // test starts it again (truthful-status.test.ts proves the look; here it would race the command).
  const klm = useKlm({ endedWorkflowsPollMs: 0 });
  const name = uniqueName('kyma');
  const at = () => ['--kubeconfig', stackInfo().kubeconfig, '--kyma', `${klm().namespace}/${name}`];
  const spec = async () => (await getKyma(klm(), name))!.spec.modules ?? [];

  it('shows the catalog: versions and channels per module, as a table and as JSON', async () => {
    await klm().kube.create(kymaObject(klm().namespace, name, { channel: 'regular', modules: [] }));
    const json = await klmCli(['module', 'catalog', ...at(), '-o', 'json']);
    expect(json.code, json.stderr).toBe(0);
    const greeter = (
      JSON.parse(json.stdout) as { name: string; versions: string[]; channels: Record<string, string> }[]
    ).find((e) => e.name === 'greeter');
    expect(greeter).toMatchObject({
      versions: ['1.0.0', '1.1.0'],
      channels: { regular: '1.0.0', fast: '1.1.0' },
      origin: 'kyma',
    });
    const text = await klmCli(['module', 'catalog', ...at()]);
    expect(text.stdout).toMatch(/^NAME\s+VERSIONS\s+CHANNELS\s+FLAGS\s+ORIGIN/);
    expect(text.stdout).toMatch(/greeter\s+1\.0\.0, 1\.1\.0\s+regular: 1\.0\.0, fast: 1\.1\.0\s+-\s+kyma/);
  });

  it('offers the Kyma only what the worker would install for it: no beta module without its label; a channel without a template marked', async () => {
    const ns = klm().namespace;
    // A beta module, and a module whose channel names a version nobody published a template of.
    await klm().kube.create({
      apiVersion: API_VERSION,
      kind: 'ModuleTemplate',
      metadata: { name: 'preview-0.1.0', namespace: ns, labels: { [LABELS.beta]: 'true' } },
      spec: { moduleName: 'preview', version: '0.1.0', descriptor: {} },
    });
    for (const [module, version] of [
      ['preview', '0.1.0'],
      ['ghost', '1.0.0'],
    ] as const) {
      await klm().kube.create({
        apiVersion: API_VERSION,
        kind: 'ModuleReleaseMeta',
        metadata: { name: module, namespace: ns },
        spec: {
          moduleName: module,
          ocmComponentName: `kyma-project.io/module/${module}`,
          channels: [{ channel: 'regular', version }],
        },
      });
    }
    const json = await klmCli(['module', 'catalog', ...at(), '-o', 'json']);
    expect(json.code, json.stderr).toBe(0);
    const entries = JSON.parse(json.stdout) as {
      name: string;
      channelProblems?: Record<string, { reason: string; message: string }>;
    }[];
    expect(entries.map((e) => e.name)).not.toContain('preview');
    expect(entries.find((e) => e.name === 'ghost')?.channelProblems).toEqual({
      regular: {
        reason: 'TemplateNotFound',
        message: `module "ghost": no ModuleTemplate "ghost-1.0.0" in namespace "${ns}" for version 1.0.0 of channel "regular"`,
      },
    });
    const text = await klmCli(['module', 'catalog', ...at()]);
    expect(text.stdout).toMatch(/ghost\s+-\s+regular: 1\.0\.0 \(no template\)\s+-\s+kyma/);
    // Added all the same, each is refused with what the worker would say, and why.
    const beta = await klmCli(['module', 'add', 'preview', ...at()]);
    expect(beta.code).toBe(1);
    expect(beta.stderr).toContain(
      `module "preview": ModuleTemplate ${ns}/preview-0.1.0 is beta ` +
        `(operator.kyma-project.io/beta: "true"): not available to this Kyma, which lacks that ` +
        `label: label Kyma ${ns}/${name} so to use it`,
    );
    const ghost = await klmCli(['module', 'add', 'ghost', ...at()]);
    expect(ghost.code).toBe(1);
    expect(ghost.stderr).toContain('module "ghost": no ModuleTemplate "ghost-1.0.0"');
    expect(await spec()).toEqual([]);
  });

  it(
    'adds a module with its default CR (--default-config-cr) and waits until it is Ready; a ' +
      'second add changes nothing; list shows it as users know it',
    async () => {
      const add = await klmCli([
        'module',
        'add',
        'greeter',
        ...at(),
        '--default-config-cr',
        '--wait',
        '--timeout',
        '2m',
      ]);
      expect(add.code, add.stderr).toBe(0);
      expect(add.stdout).toContain(
        `module greeter added to Kyma ${klm().namespace}/${name} with its default CR (CR policy CreateAndDelete)`,
      );
      expect(add.stdout).toContain('module greeter is Ready');
      expect(await spec()).toEqual([{ name: 'greeter', customResourcePolicy: 'CreateAndDelete', managed: true }]);
      const again = await klmCli(['module', 'add', 'greeter', ...at()]);
      expect(again.code).toBe(0);
      expect(again.stdout).toContain('already in Kyma');

      const list = await klmCli(['module', 'list', ...at(), '-o', 'json']);
      expect(list.code, list.stderr).toBe(0);
      // The Kyma CLI's fields and types (version with its channel, crPolicy, managed a string), klm's beside them.
      expect(JSON.parse(list.stdout)).toEqual([
        expect.objectContaining({
          name: 'greeter',
          version: '1.0.0(regular)',
          crPolicy: 'CreateAndDelete',
          managed: 'true',
          moduleStatus: 'Ready',
          installationStatus: 'Ready',
          installedVersion: '1.0.0',
        }),
      ]);
      const yaml = await klmCli(['modules', 'list', ...at(), '-o', 'yaml']);
      expect(yaml.code, yaml.stderr).toBe(0);
      expect(parse(yaml.stdout)).toEqual(JSON.parse(list.stdout));
      expect(yaml.stdout).toContain('managed: "true"');
      const table = await klmCli(['module', 'list', ...at()]);
      expect(table.stdout).toMatch(/^NAME\s+VERSION\s+CR POLICY\s+MANAGED\s+MODULE STATUS\s+INSTALLATION STATUS\n/);
      expect(table.stdout).toMatch(/greeter\s+1\.0\.0\(regular\)\s+CreateAndDelete\s+true\s+Ready\s+Ready/);
    },
  );

  it(
    'adds a module without its default CR unless asked, as the Kyma CLI does: the policy ' +
      'Ignore, no default CR; -c picks the channel; del removes it',
    async () => {
      const add = await klmCli(['modules', 'add', 'counter', ...at(), '-c', 'regular', '--wait', '--timeout', '2m']);
      expect(add.code, add.stderr).toBe(0);
      expect(add.stdout).toContain(
        `module counter added to Kyma ${klm().namespace}/${name} without its default CR (CR policy Ignore; --default-config-cr creates it)`,
      );
      expect(add.stdout).toContain('module counter is Ready');
      expect((await spec()).find((m) => m.name === 'counter')).toEqual({
        name: 'counter',
        channel: 'regular',
        customResourcePolicy: 'Ignore',
        managed: true,
      });
      const list = JSON.parse((await klmCli(['module', 'list', ...at(), '-o', 'json'])).stdout) as { name: string }[];
      // Policy Ignore: no CR the lifecycle manager tracks; MODULE STATUS is that of the CRs of its
      // kind in the cluster, as the Kyma CLI reads it (none made here, other files' may be there).
      const crs = (
        await klm().kube.list<KubeObject & { status?: { state?: string } }>(COUNTER.apiVersion, COUNTER.kind)
      ).items;
      expect(list.find((e) => e.name === 'counter')).toMatchObject({
        version: '1.0.0(regular)',
        crPolicy: 'Ignore',
        managed: 'true',
        moduleStatus: crs.length
          ? (highestState(crs.map((c) => c.status?.state ?? '').filter(Boolean)) ?? 'Unknown')
          : '-',
        installationStatus: 'Ready',
      });
      const removed = await klmCli(['module', 'del', 'counter', ...at(), '--wait', '--timeout', '2m']);
      expect(removed.code, removed.stderr).toBe(0);
      expect(removed.stdout).toContain('module counter is gone');
      expect((await spec()).map((m) => m.name)).toEqual(['greeter']);
    },
  );

  it('refuses what the catalog does not offer and says what to do (exit 1); without the Kyma, lists only direct installs', async () => {
    const unknown = await klmCli(['module', 'add', 'nosuch', ...at()]);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain(
      `module "nosuch" is not in the catalog of namespace ${klm().namespace}; \`klm module catalog\` lists what is`,
    );
    const channel = await klmCli(['module', 'add', 'greeter', ...at(), '--channel', 'nightly']);
    expect(channel.code).toBe(1);
    expect(channel.stderr).toContain('module greeter has no channel "nightly"; it has: regular, fast');
    const version = await klmCli(['module', 'add', 'greeter', ...at(), '--version', '9.9.9']);
    expect(version.code).toBe(1);
    expect(version.stderr).toContain('module greeter has no version "9.9.9"; it has: 1.0.0, 1.1.0');
    // Without the Kyma, list shows what klm installed directly (nothing here), and says so.
    const listWithoutKyma = [
      'module',
      'list',
      '--kubeconfig',
      stackInfo().kubeconfig,
      '--kyma',
      `${klm().namespace}/nokyma`,
      '--direct-namespace',
      `${name}-direct`,
    ];
    const missing = await klmCli(listWithoutKyma);
    expect(missing.code, missing.stderr).toBe(0);
    expect(missing.stderr).toContain(
      `there is no Kyma ${klm().namespace}/nokyma: these are the modules klm installed directly`,
    );
    // As the Kyma CLI: the header alone.
    expect(missing.stdout.trim()).toMatch(
      /^NAME\s+VERSION\s+CR POLICY\s+MANAGED\s+MODULE STATUS\s+INSTALLATION STATUS$/,
    );
    const none = await klmCli([...listWithoutKyma, '-o', 'json']);
    expect(JSON.parse(none.stdout)).toEqual([]);
    expect(await spec()).toEqual([{ name: 'greeter', customResourcePolicy: 'CreateAndDelete', managed: true }]);
  });

  it('says when the command line is wrong (exit 1, as the Kyma CLI)', async () => {
    for (const args of [
      ['module', 'list', '--kubeconfig', stackInfo().kubeconfig, '--kyma', 'no-slash'],
      ['module', 'add', 'greeter', ...at(), '--wait', '--timeout', 'soon'],
      ['module', 'list', ...at(), '-o', 'xml'],
      ['module', 'frobnicate'],
      ['module', 'add'],
      ['module', 'list', ...at(), '--context', 'nope'],
      ['module', 'add', 'greeter', ...at(), '--default-config-cr', '--config-cr-path', 'cr.yaml'],
      ['module', 'add', 'greeter', ...at(), '--default-config-cr', '--policy', 'Ignore'],
      ['module', 'manage', 'greeter', ...at(), '--policy', 'Sometimes'],
    ]) {
      const r = await klmCli(args);
      expect(r.code, args.join(' ')).toBe(1);
      expect(r.stderr.trim(), args.join(' ')).not.toBe('');
    }
  });

  it('says where it looked when there is no kubeconfig at all (exit 1)', async () => {
    const home = await mkdtemp(path.join(tmpdir(), 'klm-home-'));
    const r = await klmCli(['module', 'list'], { KUBECONFIG: '', HOME: home });
    expect(r.code, r.stderr).toBe(1);
    expect(r.stderr.trim()).toBe(
      `klm: no kubeconfig: KUBECONFIG is not set, ${home}/.kube/config does not exist, and this runs in no pod with a ` +
        'service account (no /var/run/secrets/kubernetes.io/serviceaccount/token); name one with --kubeconfig or KUBECONFIG',
    );
    const missing = await klmCli(['module', 'list'], { KUBECONFIG: `${home}/nope`, HOME: home });
    expect(missing.stderr.trim()).toBe(
      `klm: no kubeconfig: KUBECONFIG names ${home}/nope, which does not exist; name one with --kubeconfig or KUBECONFIG`,
    );
  });

  it('upgrades by channel, and explains a module: state, versions, Events, its workflow in the Temporal UI', async () => {
    const add = await klmCli(['module', 'add', 'greeter', ...at(), '--channel', 'fast', '--wait', '--timeout', '2m']);
    expect(add.code, add.stderr).toBe(0);
    expect(add.stdout).toContain('module greeter changed');
    const why = await klmCli([
      'module',
      'why',
      'greeter',
      ...at(),
      '-o',
      'json',
      '--temporal-ui',
      'http://127.0.0.1:8233',
    ]);
    expect(why.code, why.stderr).toBe(0);
    const w = JSON.parse(why.stdout) as {
      state: string;
      installedVersion: string;
      desiredVersion: string;
      channel: string;
      workflowId: string;
      temporalUi: string;
      events: { reason: string }[];
    };
    expect(w).toMatchObject({
      state: 'Ready',
      installedVersion: '1.1.0',
      desiredVersion: '1.1.0',
      channel: 'fast',
      workflowId: `kyma/${klm().namespace}/${name}`,
    });
    expect(w.temporalUi).toBe(`http://127.0.0.1:8233/namespaces/default/workflows/${encodeURIComponent(w.workflowId)}`);
    expect(w.events.map((e) => e.reason)).toContain('ModuleInstalling');
  });

  it('unmanages and manages a module again', async () => {
    const off = await klmCli(['module', 'unmanage', 'greeter', ...at()]);
    expect(off.code, off.stderr).toBe(0);
    expect(await spec()).toEqual([
      { name: 'greeter', channel: 'fast', customResourcePolicy: 'CreateAndDelete', managed: false },
    ]);
    // The Kyma CLI's JSON: managed as a string; the version its manager runs, with its channel,
    // and nothing wanted of it (the lifecycle manager moves it nowhere now).
    const list = JSON.parse((await klmCli(['module', 'list', ...at(), '-o', 'json'])).stdout) as Record<
      string,
      unknown
    >[];
    expect(list[0]).toMatchObject({ managed: 'false', version: '1.1.0(fast)', installationStatus: 'Unmanaged' });
    expect(list[0]).not.toHaveProperty('desiredVersion');
    const table = (await klmCli(['module', 'list', ...at()])).stdout;
    expect(table).toMatch(/\ngreeter\s+1\.1\.0\(fast\)\s+CreateAndDelete\s+false\s+\S+\s+Unmanaged\n?$/);
    expect(table).not.toContain('(*');
    const on = await klmCli(['module', 'manage', 'greeter', ...at()]);
    expect(on.code, on.stderr).toBe(0);
    // The API server defaults managed to true again.
    expect(await spec()).toEqual([
      { name: 'greeter', channel: 'fast', customResourcePolicy: 'CreateAndDelete', managed: true },
    ]);
    const absent = await klmCli(['module', 'unmanage', 'counter', ...at()]);
    expect(absent.code).toBe(1);
    expect(absent.stderr).toContain('module counter is not in Kyma');
  });

  it(
    'manage takes over a module the Kyma lacks only when its manager runs, as the Kyma CLI does; ' +
      'sets the policy of one it has (CreateAndDelete unless told)',
    async () => {
      const system = `${name}-system`;
      const missing = await klmCli(['module', 'manage', 'counter', ...at(), '--policy', 'Ignore']);
      expect(missing.code).toBe(1);
      expect(missing.stderr).toContain(
        `module counter is not in Kyma ${klm().namespace}/${name}, and no manager of it runs in its cluster to take over`,
      );
      expect(missing.stderr).toContain('`klm module add counter` adds it');
      expect((await spec()).map((m) => m.name)).toEqual(['greeter']);
      // Its manager runs (installed by other means), and its template names it: taken over.
      await klm().kube.mergePatch(API_VERSION, 'ModuleTemplate', 'counter-1.0.0', klm().namespace, {
        spec: {
          manager: { group: 'apps', version: 'v1', kind: 'Deployment', name: 'counter-manager', namespace: system },
        },
      });
      await klm().kube.create({
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: 'counter-manager', namespace: system },
        spec: {
          replicas: 1,
          selector: { matchLabels: { app: 'counter-manager' } },
          template: {
            metadata: { labels: { app: 'counter-manager' } },
            spec: { containers: [{ name: 'manager', image: 'example.invalid/counter-manager:1.0.0' }] },
          },
        },
      });
      const taken = await klmCli(['module', 'manage', 'counter', ...at(), '--policy', 'Ignore']);
      expect(taken.code, taken.stderr).toBe(0);
      expect(taken.stdout).toContain(
        `module counter 1.0.0, running in the cluster, is now managed by Kyma ${klm().namespace}/${name} (CR policy Ignore)`,
      );
      expect((await spec()).find((m) => m.name === 'counter')).toEqual({
        name: 'counter',
        customResourcePolicy: 'Ignore',
        managed: true,
      });
      const again = await klmCli(['module', 'manage', 'counter', ...at(), '--policy', 'Ignore']);
      expect(again.code, again.stderr).toBe(0);
      expect(again.stdout).toContain('module counter is already managed (CR policy Ignore)');
      const policy = await klmCli(['module', 'manage', 'counter', ...at()]);
      expect(policy.code, policy.stderr).toBe(0);
      expect(policy.stdout).toContain('module counter is now managed (CR policy CreateAndDelete)');
      expect((await spec()).find((m) => m.name === 'counter')).toEqual({
        name: 'counter',
        customResourcePolicy: 'CreateAndDelete',
        managed: true,
      });
      const removed = await klmCli(['module', 'delete', 'counter', ...at(), '--wait', '--timeout', '2m']);
      expect(removed.code, removed.stderr).toBe(0);
      expect((await spec()).map((m) => m.name)).toEqual(['greeter']);
      // The manager it found there is left in place by the removal: gone before the next test adds counter.
      await klm()
        .kube.delete('apps/v1', 'Deployment', 'counter-manager', system)
        .catch(() => false);
    },
  );

  it('--show-errors says on stderr what list could not read; without it, the list alone', async () => {
    const broken = uniqueName('broken');
    await klm().kube.create(kymaObject(klm().namespace, broken, { channel: 'regular', modules: [] }));
    await klm().kube.create({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: `${broken}-kubeconfig`, namespace: klm().namespace, labels: { [LABELS.kymaName]: broken } },
      data: { config: Buffer.from('not: [a kubeconfig').toString('base64') },
    });
    const args = [
      'module',
      'list',
      '--kubeconfig',
      stackInfo().kubeconfig,
      '--kyma',
      `${klm().namespace}/${broken}`,
      '--direct-namespace',
      `${broken}-direct`,
    ];
    const quiet = await klmCli(args);
    expect(quiet.code, quiet.stderr).toBe(0);
    expect(quiet.stderr).not.toContain('cannot be reached');
    const told = await klmCli([...args, '--show-errors']);
    expect(told.code, told.stderr).toBe(0);
    expect(told.stderr).toContain(
      `klm: error: the cluster of Kyma ${klm().namespace}/${broken} cannot be reached, so its ` +
        `direct installs are not listed: Secret ${klm().namespace}/${broken}-kubeconfig does not ` +
        `hold a valid kubeconfig`,
    );
    expect(told.stdout).toBe(quiet.stdout);
  });

  it(
    'deletes only once the resources people made of its kinds are gone: refused with the list, ' +
      'not without confirmation, then with --auto-approve',
    async () => {
      const ns = `${name}-system`;
      await klm().kube.create({
        apiVersion: 'greeter.example.io/v1alpha1',
        kind: 'Greeter',
        metadata: { name: 'mine', namespace: ns },
        spec: {},
      });
      const refused = await klmCli(['module', 'delete', 'greeter', ...at()]);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain(
        'module greeter still has resources of its kinds; delete them, or run again with --delete-resources:',
      );
      expect(refused.stderr).toContain(`Greeter ${ns}/mine`);
      // The module's own default CR is the lifecycle manager's to delete: not listed.
      expect(refused.stderr).not.toContain(`Greeter ${ns}/default`);
      const unconfirmed = await klmCli(['module', 'delete', 'greeter', ...at(), '--delete-resources']);
      expect(unconfirmed.code).toBe(1);
      expect(unconfirmed.stderr).toContain('not confirmed: nothing deleted');
      expect(await klm().kube.get('greeter.example.io/v1alpha1', 'Greeter', 'mine', ns)).toBeDefined();
      expect((await spec()).map((m) => m.name)).toEqual(['greeter']);

      const done = await klmCli([
        'module',
        'delete',
        'greeter',
        ...at(),
        '--delete-resources',
        '--auto-approve',
        '--wait',
        '--timeout',
        '2m',
      ]);
      expect(done.code, done.stderr).toBe(0);
      expect(done.stdout).toContain('deleted 1 resources of module greeter');
      expect(done.stdout).toContain('module greeter is gone');
      expect(await spec()).toEqual([]);
      await eventually(
        'the manager to be gone',
        async () => (await klm().kube.get('apps/v1', 'Deployment', 'greeter-manager', ns)) === undefined || undefined,
        60_000,
      );
      const again = await klmCli(['module', 'delete', 'greeter', ...at()]);
      expect(again.code).toBe(0);
      expect(again.stdout).toContain('nothing to do');
    },
  );

  it('tells a module never installed from one installed, and deletes it from Error with --wait (exit 0)', async () => {
    // As someone editing the Kyma would add it: its channel's version has no template.
    await klm().kube.mergePatch(API_VERSION, 'Kyma', name, klm().namespace, { spec: { modules: [{ name: 'ghost' }] } });
    await eventually(
      'ghost to be in Error',
      async () =>
        ((await getKyma(klm(), name))?.status?.modules ?? []).some((m) => m.name === 'ghost' && m.state === 'Error') ||
        undefined,
      60_000,
    );
    const why = await klmCli(['module', 'why', 'ghost', ...at(), '-o', 'json']);
    expect(why.code, why.stderr).toBe(0);
    const w = JSON.parse(why.stdout) as Record<string, unknown>;
    expect(w).toMatchObject({
      state: 'Error',
      desiredVersion: '1.0.0',
      message: expect.stringContaining('no ModuleTemplate "ghost-1.0.0"') as string,
    });
    expect(w).not.toHaveProperty('installedVersion');
    expect((await klmCli(['module', 'why', 'ghost', ...at()])).stdout).toContain('installed version: -; wanted: 1.0.0');
    const list = JSON.parse((await klmCli(['module', 'list', ...at(), '-o', 'json'])).stdout) as Record<
      string,
      unknown
    >[];
    expect(list).toEqual([
      expect.objectContaining({ name: 'ghost', desiredVersion: '1.0.0', installationStatus: 'Error' }),
    ]);
    // Never installed: no installed version beside the Kyma CLI's VERSION, which says "-".
    expect(list[0]).not.toHaveProperty('installedVersion');
    expect(list[0]).toHaveProperty('version', '-');
    const deleted = await klmCli(['module', 'delete', 'ghost', ...at(), '--wait', '--timeout', '1m']);
    expect(deleted.code, deleted.stderr).toBe(0);
    expect(deleted.stdout).toContain('module ghost is gone');
    expect((await getKyma(klm(), name))?.status?.modules ?? []).toEqual([]);
  });

  it('ends a --wait that runs out of time with exit 3, the change made', async () => {
    const r = await klmCli(['module', 'add', 'counter', ...at(), '--wait', '--timeout', '1ms']);
    expect(r.code, r.stderr).toBe(3);
    expect(r.stderr).toContain('timed out after 0 s waiting for module counter');
    expect((await spec()).map((m) => m.name)).toEqual(['counter']);
    await eventually(
      'counter to be Ready',
      async () =>
        (
          (await klm().kube.get<Kyma & KubeObject>(API_VERSION, 'Kyma', name, klm().namespace))?.status?.modules ?? []
        ).some((m) => m.name === 'counter' && m.state === 'Ready') || undefined,
      120_000,
    );
  });

  it('shows a Kyma as operators look at it, and says when its workflow does not run (exit 4)', async () => {
    const temporal = {
      TEMPORAL_ADDRESS: stackInfo().temporalAddress,
      TEMPORAL_NAMESPACE: stackInfo().temporalNamespace,
    };
    const status = async (...more: string[]) =>
      await klmCli(
        ['kyma', 'status', `${klm().namespace}/${name}`, '--kubeconfig', stackInfo().kubeconfig, ...more],
        temporal,
      );
    const json = await status('-o', 'json');
    expect(json.code, json.stderr).toBe(0);
    const v = JSON.parse(json.stdout) as {
      state: string;
      channel: string;
      modules: { name: string; state: string }[];
      workflowId: string;
      workflow: { status: string };
    };
    expect(v).toMatchObject({
      state: 'Ready',
      channel: 'regular',
      workflowId: `kyma/${klm().namespace}/${name}`,
      workflow: { status: 'RUNNING' },
    });
    expect(v.modules).toEqual([expect.objectContaining({ name: 'counter', version: '1.0.0', state: 'Ready' })]);
    const text = await status();
    expect(text.stdout).toContain(
      `Kyma ${klm().namespace}/${name}: Ready (channel regular)\nworkflow: kyma/${klm().namespace}/${name} (running)`,
    );
    expect(text.stdout).toMatch(/MODULE\s+VERSION\s+CHANNEL\s+STATE\s+MESSAGE\ncounter\s+1\.0\.0/);

    // Its workflow terminated: the status says so, and when, and exits 4.
    await klm()
      .client.workflow.getHandle(kymaWorkflowId(klm().namespace, name))
      .terminate('klm test: a Kyma whose workflow is gone');
    const gone = await status('-o', 'json');
    expect(gone.code, gone.stderr).toBe(4);
    const g = JSON.parse(gone.stdout) as { workflow: { status: string; closedAt: string } };
    expect(g.workflow.status).toBe('TERMINATED');
    expect(Date.parse(g.workflow.closedAt)).toBeGreaterThan(Date.now() - 60_000);
    expect(gone.stderr).toContain(
      `the workflow kyma/${klm().namespace}/${name} of Kyma ${klm().namespace}/${name} is not running (it ended TERMINATED at ${g.workflow.closedAt})`,
    );
    expect((await status()).stdout).toContain(`(NOT RUNNING: TERMINATED at ${g.workflow.closedAt})`);
    // As the message says: a change to the Kyma's labels starts it again.
    await klm().kube.mergePatch(API_VERSION, 'Kyma', name, klm().namespace, {
      metadata: { labels: { 'klm-test/poke': 'restart' } },
    });
    await eventually(
      'the Kyma workflow to run again',
      async () => (await status('-o', 'json')).code === 0 || undefined,
      30_000,
    );
    const bad = await klmCli(['kyma', 'status', name, '--kubeconfig', stackInfo().kubeconfig]);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain(`the Kyma takes namespace/name, not "${name}"`);
  });

  it('promotes a channel after showing the plan of its rollout: not without confirmation, then with --auto-approve', async () => {
    const env = {
      TEMPORAL_ADDRESS: stackInfo().temporalAddress,
      TEMPORAL_NAMESPACE: stackInfo().temporalNamespace,
      KLM_TASK_QUEUE: klm().taskQueue,
      KLM_DEFAULT_NAMESPACE: '{kyma}-system',
    };
    const args = [
      'module',
      'promote',
      'greeter',
      '1.1.0',
      '--channel',
      'regular',
      '--namespace',
      klm().namespace,
      '--kubeconfig',
      stackInfo().kubeconfig,
    ];
    const channels = async () =>
      (await klm().kube.get<KubeObject & { spec: { channels: { channel: string; version: string }[] } }>(
        API_VERSION,
        'ModuleReleaseMeta',
        'greeter',
        klm().namespace,
      ))!.spec.channels;
    const policy = async (regular: string) =>
      await klm().kube.mergePatch('v1', 'ConfigMap', ROLLOUT_POLICY_CONFIGMAP, klm().namespace, { data: { regular } });
    // Counts written quoted are counts.
    await policy('waves: ["1", "2"]\nmaxConcurrent: "5"\nfailureBudget: "1"\nsoak: 0s');
    const asked = await klmCli(args, env);
    expect(asked.code, asked.stderr).toBe(1);
    expect(asked.stdout).toContain(
      `channel regular of module greeter in ${klm().namespace}: 1.0.0 → 1.1.0; the plan of the ` +
        `rollout this starts:\ngreeter on regular → 1.1.0: 0 Kymas in 0 waves, soak 0 s, at most 5 ` +
        `at once, failure budget 1`,
    );
    expect(asked.stderr).toContain('not confirmed: nothing promoted');
    expect(await channels()).toContainEqual({ channel: 'regular', version: '1.0.0' });
    // A policy that cannot be used: not moved, one line says which key, why, and what to do.
    await policy('waves: ["abc"]');
    const refused = await klmCli([...args, '--auto-approve'], env);
    expect(refused.code).toBe(1);
    expect(refused.stderr.trim().split('\n')).toEqual([
      `klm: channel regular of module greeter not moved: its rollout would halt at once, for its ` +
        `policy cannot be used: key regular of ConfigMap ` +
        `${klm().namespace}/${ROLLOUT_POLICY_CONFIGMAP}: waves: the size "abc" is neither a ` +
        `positive whole count (5) nor a share between 0 and 100 % ("10%"); fix that (kubectl edit ` +
        `configmap ${ROLLOUT_POLICY_CONFIGMAP} -n ${klm().namespace}), or move the channel anyway ` +
        `with --force (the rollout then halts until the policy is fixed and it is resumed)`,
    ]);
    expect(refused.stdout).toBe('');
    expect(await channels()).toContainEqual({ channel: 'regular', version: '1.0.0' });
    const done = await klmCli([...args, '--auto-approve', '--force'], env);
    expect(done.code, done.stderr).toBe(0);
    expect(done.stderr).toContain('warning: --force: moving the channel although its rollout policy cannot be used');
    expect(done.stdout).toContain('channel regular of module greeter now carries 1.1.0 (was 1.0.0)');
    expect(await channels()).toEqual(
      expect.arrayContaining([
        { channel: 'regular', version: '1.1.0' },
        { channel: 'fast', version: '1.1.0' },
      ]),
    );
    const again = await klmCli([...args, '--auto-approve'], env);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain('carries 1.1.0 already: nothing to do');
    const unknown = await klmCli(
      [
        'module',
        'promote',
        'greeter',
        '9.9.9',
        '--channel',
        'regular',
        '--namespace',
        klm().namespace,
        '--kubeconfig',
        stackInfo().kubeconfig,
      ],
      env,
    );
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain(
      `module greeter has no ModuleTemplate for version 9.9.9 in namespace ${klm().namespace}; it has: 1.0.0, 1.1.0`,
    );
  });

  it('completes commands and options in bash', async () => {
    const script = (await klmCli(['completion', 'bash'])).stdout;
    const complete = async (words: string[]) =>
      (
        await exec('bash', [
          '-c',
          `${script}\nCOMP_WORDS=(${words.map((w) => `'${w}'`).join(' ')}); COMP_CWORD=${words.length - 1}; _klm_complete; echo "\${COMPREPLY[@]}"`,
        ])
      ).stdout
        .trim()
        .split(' ');
    expect(await complete(['klm', 'mo'])).toEqual(['module']);
    expect(await complete(['klm', 'module', ''])).toEqual(
      expect.arrayContaining(['catalog', 'list', 'add', 'delete', 'manage', 'unmanage', 'why', 'pull']),
    );
    expect(await complete(['klm', 'module', 'add', 'greeter', '--ch'])).toEqual(['--channel']);
    expect(await complete(['klm', 'module', 'delete', 'x', '--auto'])).toEqual(['--auto-approve']);
  });
});
