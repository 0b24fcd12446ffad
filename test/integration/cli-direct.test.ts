// klm's direct installs, as users run them: a community module from a community catalog file
// (its manifest behind a link, served by the real registry), pulled, installed without a Kyma,
// an interrupted install finished, upgraded without touching the default CR, deleted by the
// seed's flow; a catalog module installed directly beside a Kyma (refused while the Kyma has
// it); the module's CR from a file (--config-cr-path) for a module of the Kyma.
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import type { KubeObject } from '../../src/api/shared';
import { startAuthRegistry } from '../../src/localstack/registry-token';
import { Registries } from '../../src/oci/registries';
import { moduleTemplate, pushModuleVersion } from '../../src/publish/module';
import { klmCli } from '../support/cli';
import { echoTemplates } from '../support/community';
import { eventually, getKyma, kymaObject, useKlm } from '../support/klm';
import { stackInfo, uniqueName } from '../support/stack';

type Row = {
  name: string;
  version: string;
  crPolicy: string;
  managed: 'true' | 'false';
  moduleStatus: string;
  installationStatus: string;
  installedVersion?: string;
  desiredVersion?: string;
  message?: string;
  direct?: { template: string; community: boolean };
};

describe('klm module: direct installs and community modules', () => {
  const klm = useKlm();
  const group = `${uniqueName('echo')}.example.io`;
  const kind = { apiVersion: `${group}/v1alpha1`, kind: 'Echo' };
  const direct = uniqueName('direct');
  const community = uniqueName('community');
  const kymaName = uniqueName('kyma');
  let dir: string;
  let catalogFile: string;
  const cluster = () => ['--kubeconfig', stackInfo().kubeconfig];
  /** No Kyma of that name: a cluster klm installs into directly. */
  const none = () => [...cluster(), '--kyma', `${klm().namespace}/none`];
  const noKyma = () => [...none(), '--direct-namespace', direct];
  const list = async (args: string[]) => {
    const r = await klmCli(['module', 'list', ...args, '-o', 'json']);
    expect(r.code, r.stderr).toBe(0);
    return JSON.parse(r.stdout) as Row[];
  };
  const record = async () =>
    (await klm().kube.get<KubeObject & { data: Record<string, string> }>('v1', 'ConfigMap', 'klm-module-echo', direct))
      ?.data['record.json'];

  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'klm-community-'));
    klm().manager.watch(kind.apiVersion, kind.kind);
    const templates = await echoTemplates(stackInfo().registryHost, group, direct);
    catalogFile = path.join(dir, 'all-modules.json');
    await writeFile(catalogFile, JSON.stringify(templates));
  });
  afterAll(async () => {
    await klm().kube.delete('apiextensions.k8s.io/v1', 'CustomResourceDefinition', `echoes.${group}`);
    // A resource people made of a shared kind blocks every deletion of that module in the cluster (other files' too).
    await klm()
      .kube.delete('greeter.example.io/v1alpha1', 'Greeter', 'from-file', direct)
      .catch(() => false);
  });

  it('lists a community catalog, refuses one that is malformed, pulls a community module into a namespace (not kyma-system)', async () => {
    const listed = await klmCli(['module', 'catalog', ...none(), '--community-catalog', catalogFile, '-o', 'json']);
    expect(listed.code, listed.stderr).toBe(0);
    expect((JSON.parse(listed.stdout) as { name: string; origin: string }[]).filter((e) => e.name === 'echo')).toEqual([
      expect.objectContaining({ name: 'echo', versions: ['1.0.0', '1.1.0'], origin: 'community' }),
    ]);
    const bad = path.join(dir, 'bad.json');
    await writeFile(
      bad,
      JSON.stringify([{ kind: 'ModuleTemplate', metadata: { name: 'x' }, spec: { moduleName: 'x' } }]),
    );
    const malformed = await klmCli(['module', 'catalog', ...none(), '--community-catalog', bad]);
    expect(malformed.code).toBe(1);
    expect(malformed.stderr).toContain(
      `the community catalog ${bad} holds entries that are no module versions: entry 1 (x) lacks spec.version`,
    );

    const system = await klmCli([
      'module',
      'pull',
      'echo',
      ...cluster(),
      '--namespace',
      'kyma-system',
      '--community-catalog',
      catalogFile,
    ]);
    expect(system.code).toBe(1);
    expect(system.stderr).toContain('community modules are not pulled into kyma-system');
    const unknown = await klmCli([
      'module',
      'pull',
      'nosuch',
      ...cluster(),
      '--namespace',
      community,
      '--community-catalog',
      catalogFile,
    ]);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain(`community module nosuch is not in the community catalog ${catalogFile}`);
    await klm().kube.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: community } });
    const pulled = await klmCli([
      'module',
      'pull',
      'echo',
      ...cluster(),
      '--namespace',
      community,
      '--version',
      '1.0.0',
      '--community-catalog',
      catalogFile,
    ]);
    expect(pulled.code, pulled.stderr).toBe(0);
    expect(pulled.stdout).toContain(
      `pulled echo 1.0.0 into ModuleTemplate ${community}/echo-1.0.0; install it with \`klm module add ${community}/echo-1.0.0\``,
    );
    // The Kyma CLI's short forms: -n namespace, -v version.
    const again = await klmCli([
      'module',
      'pull',
      'echo',
      ...cluster(),
      '-n',
      community,
      '-v',
      '1.0.0',
      '--community-catalog',
      catalogFile,
    ]);
    expect(again.stdout).toContain('is pulled already: nothing to do');
    const inCluster = await klmCli(['module', 'catalog', ...none(), '-o', 'json']);
    expect(
      (JSON.parse(inCluster.stdout) as { name: string; origin: string }[]).filter((e) => e.name === 'echo'),
    ).toEqual([expect.objectContaining({ versions: ['1.0.0'], origin: `${community}/echo-1.0.0` })]);
  });

  it('installs a community module directly in a cluster without a Kyma, with a warning, asked or --auto-approve; list shows it Ready', async () => {
    // Not a terminal: nobody to ask, so nothing is installed without --auto-approve (as the Kyma CLI).
    const unasked = await klmCli(['module', 'add', `${community}/echo-1.0.0`, ...noKyma(), '--default-config-cr']);
    expect(unasked.code).toBe(1);
    expect(unasked.stderr).toContain(
      'warning: echo is a community module: the Kyma team neither supports it nor answers for it',
    );
    expect(unasked.stderr).toContain('not confirmed: nothing installed (--auto-approve skips the question)');
    expect(await record()).toBeUndefined();
    const add = await klmCli([
      'module',
      'add',
      `${community}/echo-1.0.0`,
      ...noKyma(),
      '--default-config-cr',
      '--auto-approve',
      '--wait',
      '--timeout',
      '2m',
    ]);
    expect(add.code, add.stderr).toBe(0);
    expect(add.stderr).toContain(
      'warning: echo is a community module: the Kyma team neither supports it nor answers for it',
    );
    expect(add.stdout).toContain(`module echo 1.0.0 installed directly into namespace ${direct}`);
    expect(add.stdout).toContain('module echo is Ready');
    const cr = await klm().kube.get<KubeObject & { spec: { greeting: string } }>(
      kind.apiVersion,
      'Echo',
      'default',
      direct,
    );
    expect(cr?.spec.greeting).toBe('hello');
    // The Kyma CLI's fields and types (no channel: a community module has none), klm's beside them.
    expect(await list(noKyma())).toEqual([
      expect.objectContaining({
        name: 'echo',
        version: '1.0.0',
        crPolicy: 'CreateAndDelete',
        managed: 'false',
        moduleStatus: 'Ready',
        installationStatus: 'Ready',
        installedVersion: '1.0.0',
        direct: { template: `${community}/echo-1.0.0`, community: true },
      }),
    ]);
    const why = await klmCli(['module', 'why', 'echo', ...noKyma()]);
    expect(why.code, why.stderr).toBe(0);
    expect(why.stdout).toContain(
      `module echo, installed directly by klm into namespace ${direct} (a community module): Ready`,
    );
    expect(why.stdout).toContain(`from ModuleTemplate ${community}/echo-1.0.0; no workflow follows it`);
    const unknown = await klmCli(['module', 'why', 'nosuch', ...noKyma()]);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain(
      `module nosuch is neither in a Kyma (there is no Kyma ${klm().namespace}/none) nor installed directly in namespace ${direct}`,
    );
  });

  it('finishes an interrupted install with a second run', async () => {
    // What a run killed after writing its record and before applying leaves: the record says
    // Installing; the manager and the default CR are not there.
    const r = JSON.parse((await record())!) as { phase: string; defaultCr?: unknown };
    await klm().kube.mergePatch('v1', 'ConfigMap', 'klm-module-echo', direct, {
      data: { 'record.json': JSON.stringify({ ...r, phase: 'Installing', defaultCr: undefined }) },
    });
    await klm().kube.delete(kind.apiVersion, 'Echo', 'default', direct);
    await klm().kube.delete('apps/v1', 'Deployment', 'echo-manager', direct);
    await eventually(
      'the default CR to be gone',
      async () => (await klm().kube.get(kind.apiVersion, 'Echo', 'default', direct)) === undefined || undefined,
    );
    const [interrupted] = await list(noKyma());
    expect(interrupted).toMatchObject({
      name: 'echo',
      installationStatus: 'Processing',
      message: 'the install of 1.0.0 did not finish: run `klm module add` again to finish it',
    });

    // No --default-config-cr: the install keeps the policy it had (CreateAndDelete), so its default CR is made again.
    const again = await klmCli([
      'module',
      'add',
      `${community}/echo-1.0.0`,
      ...noKyma(),
      '--auto-approve',
      '--wait',
      '--timeout',
      '2m',
    ]);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toContain('module echo 1.0.0: the interrupted install is finished');
    expect(await klm().kube.get('apps/v1', 'Deployment', 'echo-manager', direct)).toBeDefined();
    expect(await klm().kube.get(kind.apiVersion, 'Echo', 'default', direct)).toBeDefined();
    expect(await list(noKyma())).toEqual([
      expect.objectContaining({ name: 'echo', version: '1.0.0', installationStatus: 'Ready' }),
    ]);
  });

  it('upgrades directly: the new manifest applied, what it dropped pruned, the default CR left as its user changed it', async () => {
    await klm().kube.mergePatch(kind.apiVersion, 'Echo', 'default', direct, {
      spec: { greeting: 'changed by its user' },
    });
    expect(
      (
        await klmCli([
          'module',
          'pull',
          'echo',
          ...cluster(),
          '--namespace',
          community,
          '--version',
          '1.1.0',
          '--community-catalog',
          catalogFile,
        ])
      ).code,
    ).toBe(0);
    const up = await klmCli([
      'module',
      'add',
      `${community}/echo-1.1.0`,
      ...noKyma(),
      '--auto-approve',
      '--wait',
      '--timeout',
      '2m',
    ]);
    expect(up.code, up.stderr).toBe(0);
    expect(up.stdout).toContain(
      'module echo upgraded directly from 1.0.0 to 1.1.0 (1 objects 1.0.0 had removed); its default CR was left as it is',
    );
    expect(await klm().kube.get('v1', 'ConfigMap', 'echo-legacy', direct)).toBeUndefined();
    const manager = await klm().kube.get<
      KubeObject & { spec: { template: { spec: { containers: { image: string }[] } } } }
    >('apps/v1', 'Deployment', 'echo-manager', direct);
    expect(manager?.spec.template.spec.containers[0]?.image).toBe('example.invalid/echo-manager:1.1.0');
    expect(
      (await klm().kube.get<KubeObject & { spec: { greeting: string } }>(kind.apiVersion, 'Echo', 'default', direct))
        ?.spec.greeting,
    ).toBe('changed by its user');
    expect(await list(noKyma())).toEqual([
      expect.objectContaining({ name: 'echo', version: '1.1.0', installationStatus: 'Ready', moduleStatus: 'Ready' }),
    ]);
  });

  it(
    'deletes a direct install by the seed flow: refused while resources people made exist, then ' +
      'with them, everything klm applied, then nothing to do',
    async () => {
      await klm().kube.create({
        apiVersion: kind.apiVersion,
        kind: 'Echo',
        metadata: { name: 'mine', namespace: direct },
        spec: {},
      });
      const refused = await klmCli(['module', 'delete', 'echo', ...noKyma()]);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain(
        'module echo still has resources of its kinds; delete them, or run again with --delete-resources:',
      );
      expect(refused.stderr).toContain(`Echo ${direct}/mine`);
      expect(refused.stderr).not.toContain(`Echo ${direct}/default`);
      const unconfirmed = await klmCli(['module', 'delete', 'echo', ...noKyma(), '--delete-resources']);
      expect(unconfirmed.code).toBe(1);
      expect(unconfirmed.stderr).toContain('not confirmed: nothing deleted');
      expect(await record()).toBeDefined();

      const done = await klmCli([
        'module',
        'delete',
        `${community}/echo-1.1.0`,
        ...noKyma(),
        '--delete-resources',
        '--auto-approve',
      ]);
      expect(done.code, done.stderr).toBe(0);
      expect(done.stdout).toContain('deleted 1 resources of module echo');
      expect(done.stdout).toContain('module echo deleted');
      for (const [apiVersion, k, n, ns] of [
        [kind.apiVersion, 'Echo', 'default', direct],
        ['apps/v1', 'Deployment', 'echo-manager', direct],
        ['v1', 'ServiceAccount', 'echo-manager', direct],
        ['apiextensions.k8s.io/v1', 'CustomResourceDefinition', `echoes.${group}`, undefined],
      ] as const) {
        await eventually(
          `${k} ${n} to be gone`,
          async () =>
            (await klm()
              .kube.get(apiVersion, k, n, ns)
              .catch(() => undefined)) === undefined || undefined,
          60_000,
        );
      }
      expect(await record()).toBeUndefined();
      expect(await list(noKyma())).toEqual([]);
      const again = await klmCli(['module', 'delete', 'echo', ...noKyma()]);
      expect(again.code).toBe(0);
      expect(again.stdout).toContain('nothing to do');
    },
  );

  it(
    'installs a catalog module directly beside a Kyma only when asked, with a warning; refuses ' +
      'one the Kyma has, and adding one installed directly to the Kyma',
    async () => {
      const at = [...cluster(), '--kyma', `${klm().namespace}/${kymaName}`, '--direct-namespace', direct];
      await klm().kube.create(
        kymaObject(klm().namespace, kymaName, { channel: 'regular', modules: [{ name: 'counter' }] }),
      );
      const managed = await klmCli(['module', 'add', 'counter', ...at, '--direct']);
      expect(managed.code).toBe(1);
      expect(managed.stderr).toContain(
        `module counter is managed by Kyma ${klm().namespace}/${kymaName}: a direct install would fight the lifecycle manager`,
      );

      // greeter's template has `descriptor: {}`: its component is found through its ModuleReleaseMeta in the registry named.
      const unnamed = await klmCli(['module', 'add', 'greeter', ...at, '--direct'], { KLM_OCI_REGISTRY_HOST: '' });
      expect(unnamed.code).toBe(1);
      expect(unnamed.stderr).toContain('name it with --registry host[/path] (or KLM_OCI_REGISTRY_HOST)');
      const add = await klmCli([
        'module',
        'add',
        'greeter',
        ...at,
        '--direct',
        '--registry',
        stackInfo().registryHost,
        '--wait',
        '--timeout',
        '2m',
      ]);
      expect(add.code, add.stderr).toBe(0);
      expect(add.stderr).toContain(
        `warning: installing greeter directly beside Kyma ${klm().namespace}/${kymaName}: the lifecycle manager will not upgrade, repair or support it`,
      );
      expect(add.stdout).toContain(`module greeter 1.0.0 installed directly into namespace ${direct}`);
      const rows = await list(at);
      // Installed without --default-config-cr: the policy Ignore, as the Kyma CLI installs it; no default CR.
      expect(rows.find((r) => r.name === 'greeter')).toMatchObject({
        version: '1.0.0',
        crPolicy: 'Ignore',
        managed: 'false',
        installationStatus: 'Ready',
        direct: { template: `${klm().namespace}/greeter-1.0.0`, community: false },
      });
      expect(await klm().kube.get('greeter.example.io/v1alpha1', 'Greeter', 'default', direct)).toBeUndefined();
      const viaKyma = await klmCli(['module', 'add', 'greeter', ...at]);
      expect(viaKyma.code).toBe(1);
      expect(viaKyma.stderr).toContain(
        `module greeter is installed directly in namespace ${direct}: the lifecycle manager would take it over unasked`,
      );
      expect((await getKyma(klm(), kymaName))?.spec.modules?.map((m) => m.name)).toEqual(['counter']);
      const removed = await klmCli(['module', 'delete', 'greeter', ...at, '--auto-approve']);
      expect(removed.code, removed.stderr).toBe(0);
      expect(removed.stdout).toContain('module greeter deleted');
      expect(await klm().kube.get('apps/v1', 'Deployment', 'greeter-manager', direct)).toBeUndefined();
    },
  );

  it("adds a module to the Kyma with its CR from a file (--config-cr-path): the policy Ignore, the file's CR applied once the module runs", async () => {
    const at = [...cluster(), '--kyma', `${klm().namespace}/${kymaName}`, '--direct-namespace', direct];
    const file = path.join(dir, 'greeter.yaml');
    await writeFile(
      file,
      stringify({
        apiVersion: 'greeter.example.io/v1alpha1',
        kind: 'Greeter',
        metadata: { name: 'from-file' },
        spec: { greeting: 'from a file' },
      }),
    );
    const both = await klmCli(['module', 'add', 'greeter', ...at, '--cr-path', file, '--default-cr']);
    expect(both.code).toBe(1);
    // The Kyma CLI's names: --config-cr-path, --default-config-cr (--cr-path and --default-cr their hidden aliases).
    for (const args of [
      ['--config-cr-path', file, '--default-config-cr'],
      ['--config-cr-path', file, '--default-cr'],
      ['--cr-path', file, '--default-config-cr'],
    ]) {
      const r = await klmCli(['module', 'add', 'greeter', ...at, ...args]);
      expect(r.code, args.join(' ')).toBe(1);
      expect(r.stderr, args.join(' ')).toMatch(/cannot be used with option/);
    }
    const add = await klmCli(['module', 'add', 'greeter', ...at, '--config-cr-path', file, '--timeout', '2m']);
    expect(add.code, add.stderr).toBe(0);
    expect(add.stdout).toContain(`applied 1 objects of ${file}`);
    expect((await getKyma(klm(), kymaName))?.spec.modules?.find((m) => m.name === 'greeter')).toMatchObject({
      name: 'greeter',
      customResourcePolicy: 'Ignore',
    });
    expect(await klm().kube.get('greeter.example.io/v1alpha1', 'Greeter', 'from-file', direct)).toBeDefined();
    // The policy Ignore: the lifecycle manager made no default CR.
    expect(
      await klm().kube.get('greeter.example.io/v1alpha1', 'Greeter', 'default', `${kymaName}-system`),
    ).toBeUndefined();
  });

  it('installs directly from a registry that wants credentials: those of the Docker config, never shown; refused without them', async () => {
    const regDir = await mkdtemp(path.join(tmpdir(), 'klm-cli-registry-'));
    const password = `pw-${uniqueName('secret')}`;
    const registry = await startAuthRegistry(stackInfo().tools.registry, regDir, {
      user: { username: 'reader', password },
      anonymous: 'none',
    });
    try {
      const host = registry.registry.host;
      const publisher = new Registries({
        caFile: registry.caCert,
        credentials: { describe: 'the test', credentialsFor: () => Promise.resolve({ username: 'reader', password }) },
      });
      const version = {
        name: 'vault',
        component: 'kyma-project.io/module/vault',
        version: '1.0.0',
        manifest: stringify({
          apiVersion: 'v1',
          kind: 'ConfigMap',
          metadata: { name: 'vault-config' },
          data: { sealed: 'true' },
        }),
        descriptor: 'registry' as const,
        layer: 'tar' as const,
      };
      const descriptor = await pushModuleVersion(host, version, publisher.client(host));
      await klm().kube.create(moduleTemplate(version, community, descriptor));
      const docker = async (pw: string) => {
        const d = await mkdtemp(path.join(tmpdir(), 'klm-docker-'));
        await writeFile(
          path.join(d, 'config.json'),
          JSON.stringify({ auths: { [host]: { auth: Buffer.from(`reader:${pw}`).toString('base64') } } }),
        );
        return { DOCKER_CONFIG: d, KLM_REGISTRY_CA_FILE: registry.caCert };
      };
      const add = (env: NodeJS.ProcessEnv) =>
        klmCli(['module', 'add', `${community}/vault-1.0.0`, ...noKyma(), '--auto-approve'], env);
      const anonymous = await add({ DOCKER_CONFIG: regDir, KLM_REGISTRY_CA_FILE: registry.caCert });
      expect(anonymous.code).toBe(1);
      expect(anonymous.stderr).toContain(`fetching the raw manifest of ModuleTemplate ${community}/vault-1.0.0`);
      const wrong = await add(await docker('not-the-password'));
      expect(wrong.code).toBe(1);
      expect(wrong.stderr).toContain('the Docker config');
      const right = await add(await docker(password));
      expect(right.code, right.stderr).toBe(0);
      expect(right.stdout).toContain(`module vault 1.0.0 installed directly into namespace ${direct}`);
      expect(await klm().kube.get('v1', 'ConfigMap', 'vault-config', direct)).toBeDefined();
      for (const r of [anonymous, wrong, right]) expect(`${r.stdout}${r.stderr}`).not.toContain(password);
      expect((await klmCli(['module', 'delete', 'vault', ...noKyma()])).code).toBe(0);
    } finally {
      await registry.stop();
    }
  });
});
