// The Kyma CLI v3's documented `kyma module` command lines (its docs/user/gen-docs/kyma*.md:
// synopses, flags and examples), replayed with klm against the local stack: the same words,
// their exit codes, the columns of the tables and the fields of -o json|yaml. Each line is kept
// as the doc writes it, beside the doc; what the replay changes is said once, here:
// - the names the docs make up become the sample modules: keda → greeter (with --config-cr-path:
//   counter, whose CR comes from a file), my-namespace/my-module-template-name → a community
//   module pulled into a namespace, community-module-name → echo, v1.0.0 → 1.0.0 (the test
//   catalog's versions are written without v);
// - which cluster and Kyma: the Kyma CLI reads them from the kubeconfig (the Kyma is always
//   kyma-system/default), klm is told with --kubeconfig, --kyma and, for its direct installs,
//   --direct-namespace (the test's own, so that it shares nothing with other files).
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { API_VERSION } from '../../src/api/shared';
import { klmCli, type Ran } from '../support/cli';
import { echoTemplates } from '../support/community';
import { eventually, kymaObject, useKlm } from '../support/klm';
import { stackInfo, uniqueName } from '../support/stack';

interface Documented {
  /** The Kyma CLI's doc the line is from (docs/user/gen-docs/). */
  doc: string;
  /** The line as the doc writes it. */
  line: string;
  /** The words klm runs, the substitutions above made. */
  args: string[];
  /** The Kyma CLI's exit code for it, which klm's must be. */
  code: number;
}

/** The Kyma CLI's columns of `module list`, and its JSON fields (the columns in camelCase). */
const LIST_HEADER = /^NAME\s+VERSION\s+CR POLICY\s+MANAGED\s+MODULE STATUS\s+INSTALLATION STATUS$/;
const LIST_FIELDS = ['name', 'version', 'crPolicy', 'managed', 'moduleStatus', 'installationStatus'];
/** The Kyma CLI's JSON fields of `module catalog`. */
const CATALOG_FIELDS = ['name', 'availableVersions', 'origin'];
/** The flags every Kyma CLI command page lists (kyma.md: persistent flags; --debug hidden). */
const GLOBAL_FLAGS = ['--skip-extensions', '--show-extensions-error', '--debug'];

describe("the Kyma CLI's documented `kyma module` command lines, run with klm", () => {
  const klm = useKlm();
  const name = uniqueName('kyma');
  const group = `${uniqueName('echo')}.example.io`;
  const direct = uniqueName('direct');
  const pulled = uniqueName('modules');
  let dir: string;
  let catalog: string;
  const kyma = () => ['--kubeconfig', stackInfo().kubeconfig, '--kyma', `${klm().namespace}/${name}`];
  /** Where the replay points each command: the Kyma's, and for those that install directly, the test's direct namespace. */
  const at = (command: string) =>
    command === 'pull'
      ? ['--kubeconfig', stackInfo().kubeconfig]
      : ['list', 'add', 'delete', 'manage'].includes(command)
        ? [...kyma(), '--direct-namespace', direct]
        : kyma();
  const replay = async (d: Documented): Promise<Ran> => {
    const command = d.args[1] ?? '';
    const r = await klmCli(d.args[0] === 'module' && command ? [...d.args, ...at(command)] : d.args, {
      KLM_COMMUNITY_CATALOG: catalog,
    });
    expect(r.code, `${d.doc}: ${d.line}\n${r.stderr}`).toBe(d.code);
    return r;
  };
  const list = async () =>
    JSON.parse(
      (
        await replay({
          doc: 'kyma_module_list.md',
          line: 'kyma module list -o json',
          args: ['module', 'list', '-o', 'json'],
          code: 0,
        })
      ).stdout,
    ) as Record<string, string>[];

  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'klm-replay-'));
    klm().manager.watch(`${group}/v1alpha1`, 'Echo');
    catalog = path.join(dir, 'all-modules.json');
    await writeFile(catalog, JSON.stringify(await echoTemplates(stackInfo().registryHost, group, direct)));
    await klm().kube.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: pulled } });
    // The stand-in for kyma-system, which a runtime has: a CR from --config-cr-path that names no namespace goes there.
    await klm().kube.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: direct } });
    // `kyma module pull` without --namespace pulls into default: a template an earlier run left there goes first.
    for (const t of ['echo-1.0.0', 'echo-1.1.0'])
      await klm()
        .kube.delete(API_VERSION, 'ModuleTemplate', t, 'default')
        .catch(() => false);
    await klm().kube.create(kymaObject(klm().namespace, name, { channel: 'regular', modules: [] }));
  });
  afterAll(async () => {
    for (const t of ['echo-1.0.0', 'echo-1.1.0'])
      await klm()
        .kube.delete(API_VERSION, 'ModuleTemplate', t, 'default')
        .catch(() => false);
    await klm()
      .kube.delete('apiextensions.k8s.io/v1', 'CustomResourceDefinition', `echoes.${group}`)
      .catch(() => false);
  });

  it('kyma_module.md: `kyma module` prints its commands and exits 0; the global flags are taken', async () => {
    for (const d of [
      { line: 'kyma module', args: ['module'] },
      { line: 'kyma module --skip-extensions', args: ['module', '--skip-extensions'] },
      { line: 'kyma module -h', args: ['module', '-h'] },
    ]) {
      const r = await klmCli(d.args);
      expect(r.code, d.line).toBe(0);
      for (const command of ['add', 'catalog', 'delete', 'list', 'manage', 'pull', 'unmanage'])
        expect(r.stdout, d.line).toMatch(new RegExp(`\\n  ${command}\\b`));
    }
  });

  it('kyma_module_list.md: an empty list is the header alone, and [] in JSON; the flags of the page are taken', async () => {
    const table = await replay({
      doc: 'kyma_module_list.md',
      line: 'kyma module list',
      args: ['module', 'list'],
      code: 0,
    });
    expect(table.stdout.trim()).toMatch(LIST_HEADER);
    expect(await list()).toEqual([]);
    const yaml = await replay({
      doc: 'kyma_module_list.md',
      line: 'kyma module list -o yaml',
      args: ['module', 'list', '-o', 'yaml'],
      code: 0,
    });
    expect(parse(yaml.stdout)).toEqual([]);
    for (const flags of [['--show-errors'], GLOBAL_FLAGS]) {
      const r = await replay({
        doc: 'kyma_module_list.md',
        line: `kyma module list ${flags.join(' ')}`,
        args: ['module', 'list', ...flags],
        code: 0,
      });
      expect(r.stdout.trim()).toMatch(LIST_HEADER);
    }
  });

  it("kyma_module_catalog.md: -o json and yaml carry the Kyma CLI's fields", async () => {
    const json = await replay({
      doc: 'kyma_module_catalog.md',
      line: 'kyma module catalog -o json',
      args: ['module', 'catalog', '-o', 'json'],
      code: 0,
    });
    const entries = JSON.parse(json.stdout) as Record<string, unknown>[];
    for (const e of entries) expect(Object.keys(e)).toEqual(expect.arrayContaining(CATALOG_FIELDS));
    expect(entries.find((e) => e.name === 'greeter')).toMatchObject({
      availableVersions: '1.0.0(regular), 1.1.0(fast)',
      origin: 'kyma',
    });
    const yaml = await replay({
      doc: 'kyma_module_catalog.md',
      line: 'kyma module catalog -o yaml',
      args: ['module', 'catalog', '-o', 'yaml', ...GLOBAL_FLAGS],
      code: 0,
    });
    expect(parse(yaml.stdout)).toEqual(entries);
  });

  it("kyma_module_add.md: its examples add the modules; list shows them in the Kyma CLI's columns and fields", async () => {
    await replay({
      doc: 'kyma_module_add.md',
      line: 'kyma module add keda --default-config-cr',
      args: ['module', 'add', 'greeter', '--default-config-cr'],
      code: 0,
    });
    const file = path.join(dir, 'keda-cr.yaml');
    await writeFile(
      file,
      stringify({
        apiVersion: 'counter.example.io/v1alpha1',
        kind: 'Counter',
        metadata: { name: 'from-file' },
        spec: {},
      }),
    );
    await replay({
      doc: 'kyma_module_add.md',
      line: 'kyma module add keda --config-cr-path ./keda-cr.yaml',
      args: ['module', 'add', 'counter', '--config-cr-path', file],
      code: 0,
    });
    // counter has the policy Ignore: its MODULE STATUS is its CR's (the file's), as the Kyma CLI shows it.
    const rows = await eventually(
      'both modules Ready, counter with its CR Ready',
      async () => {
        const l = await list();
        return l.length === 2 && l.every((e) => e.installationStatus === 'Ready' && e.moduleStatus === 'Ready') && l;
      },
      120_000,
    );
    for (const e of rows) expect(Object.keys(e)).toEqual(expect.arrayContaining(LIST_FIELDS));
    expect(rows).toEqual([
      expect.objectContaining({ name: 'counter', version: '1.0.0(regular)', crPolicy: 'Ignore', managed: 'true' }),
      expect.objectContaining({
        name: 'greeter',
        version: '1.0.0(regular)',
        crPolicy: 'CreateAndDelete',
        managed: 'true',
      }),
    ]);
    const table = await replay({
      doc: 'kyma_module_list.md',
      line: 'kyma module list',
      args: ['module', 'list'],
      code: 0,
    });
    const lines = table.stdout.trim().split('\n');
    expect(lines[0]).toMatch(LIST_HEADER);
    expect(lines.slice(1)).toEqual([
      expect.stringMatching(/^counter\s+1\.0\.0\(regular\)\s+Ignore\s+true\s+Ready\s+Ready$/),
      expect.stringMatching(/^greeter\s+1\.0\.0\(regular\)\s+CreateAndDelete\s+true\s+Ready\s+Ready$/),
    ]);
  });

  it('kyma_module_unmanage.md, kyma_module_manage.md: unmanaged, the module shows the version it runs; managed again', async () => {
    await replay({
      doc: 'kyma_module_unmanage.md',
      line: 'kyma module unmanage <module>',
      args: ['module', 'unmanage', 'greeter'],
      code: 0,
    });
    const off = await eventually(
      'greeter Unmanaged',
      async () => (await list()).find((e) => e.name === 'greeter' && e.installationStatus === 'Unmanaged'),
      60_000,
    );
    expect(off).toMatchObject({ version: '1.0.0(regular)', managed: 'false' });
    expect(off).not.toHaveProperty('desiredVersion');
    const table = await replay({
      doc: 'kyma_module_list.md',
      line: 'kyma module list',
      args: ['module', 'list'],
      code: 0,
    });
    expect(table.stdout).toMatch(/\ngreeter\s+1\.0\.0\(regular\)\s+CreateAndDelete\s+false\s+\S+\s+Unmanaged/);
    expect(table.stdout).not.toContain('(*');
    await replay({
      doc: 'kyma_module_manage.md',
      line: 'kyma module manage <module>',
      args: ['module', 'manage', 'greeter'],
      code: 0,
    });
    await replay({
      doc: 'kyma_module_manage.md',
      line: 'kyma module manage <module> --policy Ignore',
      args: ['module', 'manage', 'counter', '--policy', 'Ignore'],
      code: 0,
    });
    expect((await list()).map((e) => [e.name, e.managed])).toEqual([
      ['counter', 'true'],
      ['greeter', 'true'],
    ]);
  });

  it('kyma_module_pull.md, kyma_module_add.md, kyma_module_delete.md: a community module pulled, added, deleted', async () => {
    for (const d of [
      { line: 'kyma module pull community-module-name', args: ['module', 'pull', 'echo'] },
      {
        line: 'kyma module pull community-module-name --namespace module-namespace',
        args: ['module', 'pull', 'echo', '--namespace', pulled],
      },
      {
        line: 'kyma module pull community-module-name --version v1.0.0 --namespace module-namespace',
        args: ['module', 'pull', 'echo', '--version', '1.0.0', '--namespace', pulled],
      },
    ])
      await replay({ doc: 'kyma_module_pull.md', code: 0, ...d });
    expect(await klm().kube.get(API_VERSION, 'ModuleTemplate', 'echo-1.1.0', 'default')).toBeDefined();
    expect(await klm().kube.get(API_VERSION, 'ModuleTemplate', 'echo-1.0.0', pulled)).toBeDefined();
    await replay({
      doc: 'kyma_module_add.md',
      line: 'kyma module add my-namespace/my-module-template-name --default-config-cr --auto-approve',
      args: ['module', 'add', `${pulled}/echo-1.0.0`, '--default-config-cr', '--auto-approve'],
      code: 0,
    });
    expect((await list()).find((e) => e.name === 'echo')).toMatchObject({ version: '1.0.0', managed: 'false' });
    await replay({
      doc: 'kyma_module_delete.md',
      line: 'kyma module delete my-namespace/my-community-module-1.0.0 --auto-approve',
      args: ['module', 'delete', `${pulled}/echo-1.0.0`, '--auto-approve'],
      code: 0,
    });
    expect((await list()).map((e) => e.name)).toEqual(['counter', 'greeter']);
  });

  it('kyma_module_delete.md: `kyma module delete keda` removes it', async () => {
    await replay({
      doc: 'kyma_module_delete.md',
      line: 'kyma module delete keda',
      args: ['module', 'delete', 'greeter'],
      code: 0,
    });
    // Without --wait it returns once the module left the Kyma's spec; the list shows it until the
    // lifecycle manager has removed it (its CRD gone too), then not at all.
    await eventually(
      'greeter to leave the list',
      async () => !(await list()).some((e) => e.name === 'greeter') || undefined,
      60_000,
    );
  });

  it('kyma_completion.md: completion for bash, zsh, fish and powershell', async () => {
    for (const shell of ['bash', 'zsh', 'fish', 'powershell']) {
      const r = await klmCli(['completion', shell]);
      expect(r.code, shell).toBe(0);
      expect(r.stdout, shell).toContain('klm');
    }
  });

  it('a wrong command line exits 1, as the Kyma CLI (cobra) does', async () => {
    for (const d of [
      { line: 'kyma module list -o xml', args: ['module', 'list', '-o', 'xml'] },
      { line: 'kyma module add', args: ['module', 'add'] },
      {
        line: 'kyma module manage keda --policy Sometimes',
        args: ['module', 'manage', 'greeter', '--policy', 'Sometimes'],
      },
      { line: 'kyma module list --no-such-flag', args: ['module', 'list', '--no-such-flag'] },
    ])
      await replay({ doc: 'kyma_module*.md (flags)', code: 1, ...d });
    // A word that is no command: the Kyma CLI (cobra checks only the root's) prints help and exits
    // 0; klm says so and exits 1, a deliberate difference (docs/user/klm.md: the table of differences).
    const typo = await klmCli(['module', 'lsit']);
    expect(typo.code).toBe(1);
    expect(typo.stderr).toContain("unknown command 'lsit'");
  });
});
