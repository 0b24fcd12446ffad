// klm module create, as module authors run it: a module-config.yaml with a manifest and a
// default CR in a directory of their own, the command as a process pushing to the local stack's
// registry; the template it writes, applied with a ModuleReleaseMeta, installs the module on a
// Kyma until it is Ready. Refusals: an invalid config (every problem listed), a version the
// registry has already (unless --overwrite); a registry with TLS and token auth, pushed to with
// credentials that no output shows (given, or from a Docker credential helper on PATH). With
// --output-constructor-file, the component constructor modulectl 3.2.0 writes, its git source
// from a repository made for the test, and nothing pushed.
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parse, stringify } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ModuleTemplate } from '../../src/api/moduletemplate';
import type { KubeObject } from '../../src/api/shared';
import { startAuthRegistry, type AuthRegistry } from '../../src/localstack/registry-token';
import { toolPaths } from '../../src/localstack/tools';
import { configuredComponentLocation, pullDescriptor } from '../../src/oci/ocm';
import { Registries } from '../../src/oci/registries';
import { moduleReleaseMeta } from '../../src/publish/module';
import { kymaInState, kymaObject, useKlm } from '../support/klm';
import { stackInfo, uniqueName } from '../support/stack';
import { klmCli, type Ran } from '../support/cli';
import { writeCredentialHelper } from '../support/credential-helper';

/**
 * A module name of the test's own: the ModuleTemplate takes words of lower-case letters only,
 * so random letters, not uniqueName's digits.
 */
function moduleName(prefix: string): string {
  return `${prefix}-${Array.from(randomBytes(12), (b) => String.fromCharCode(97 + (b % 26))).join('')}`;
}

/**
 * A module of a kind no other test has: a namespaced CRD, its manager's ServiceAccount and
 * Deployment in a namespace of the module's own, which the config's manager names (a manager
 * without a namespace is looked up without one).
 */
function moduleFiles(module: string, version: string) {
  const group = `${module}.example.io`;
  const namespace = `${module}-system`;
  const manifest = [
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } },
    {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: `widgets.${group}` },
      spec: {
        group,
        names: { kind: 'Widget', listKind: 'WidgetList', plural: 'widgets', singular: 'widget' },
        scope: 'Namespaced',
        versions: [
          {
            name: 'v1alpha1',
            served: true,
            storage: true,
            subresources: { status: {} },
            schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
          },
        ],
      },
    },
    { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: `${module}-manager`, namespace } },
    {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: `${module}-manager`, namespace },
      spec: {
        replicas: 1,
        selector: { matchLabels: { app: `${module}-manager` } },
        template: {
          metadata: { labels: { app: `${module}-manager` } },
          spec: {
            serviceAccountName: `${module}-manager`,
            containers: [{ name: 'manager', image: `example.invalid/${module}-manager:${version}` }],
          },
        },
      },
    },
  ]
    .map((o) => stringify(o))
    .join('---\n');
  const defaultCR = {
    apiVersion: `${group}/v1alpha1`,
    kind: 'Widget',
    metadata: { name: 'default' },
    spec: { size: 3 },
  };
  const config = {
    name: `kyma-project.io/module/${module}`,
    version,
    manifest: 'manifest.yaml',
    defaultCR: 'default-cr.yaml',
    repository: 'https://github.com/kyma-project/template-operator',
    documentation: 'https://kyma-project.io/docs',
    icons: [{ name: 'module-icon', link: 'https://kyma-project.io/icon.svg' }],
    team: 'kyma/jellyfish',
    manager: { name: `${module}-manager`, namespace, group: 'apps', version: 'v1', kind: 'Deployment' },
    labels: { 'example.io/purpose': 'test' },
  };
  return { group, namespace, manifest, defaultCR, config };
}

async function authorDir(
  module: string,
  version: string,
  changes: Record<string, unknown> = {},
): Promise<{ dir: string; group: string; namespace: string }> {
  const dir = await mkdtemp(path.join(tmpdir(), 'klm-module-create-'));
  const f = moduleFiles(module, version);
  await writeFile(path.join(dir, 'manifest.yaml'), f.manifest);
  await writeFile(path.join(dir, 'default-cr.yaml'), stringify(f.defaultCR));
  await writeFile(path.join(dir, 'module-config.yaml'), stringify({ ...f.config, ...changes }));
  return { dir, group: f.group, namespace: f.namespace };
}

describe('klm module create', () => {
  const klm = useKlm();
  const module = moduleName('widget');
  const component = `kyma-project.io/module/${module}`;
  let dir: string;
  let group: string;
  let namespace: string;

  beforeAll(async () => {
    ({ dir, group, namespace } = await authorDir(module, '1.0.0'));
  });

  afterAll(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  const create = (...more: string[]) =>
    klmCli([
      'module',
      'create',
      '-c',
      path.join(dir, 'module-config.yaml'),
      '-o',
      path.join(dir, 'template.yaml'),
      '--registry',
      stackInfo().registryHost,
      ...more,
    ]);

  it('pushes the component and writes the template; applied with a ModuleReleaseMeta, the module installs until Ready', async () => {
    const ran = await create('--namespace', klm().namespace);
    expect(ran.code, ran.stderr).toBe(0);
    expect(ran.stderr).toContain(
      `pushing component ${component}:1.0.0 to ${stackInfo().registryHost}/component-descriptors/${component}`,
    );
    expect(ran.stdout).toContain(`ModuleTemplate ${module}-1.0.0 written to ${path.join(dir, 'template.yaml')}`);
    expect(ran.stdout).toContain(`spec.ocmComponentName is ${component}`);
    expect(ran.stdout).toContain(`KLM_OCI_REGISTRY_HOST=${stackInfo().registryHost}`);

    const template = parse(await readFile(path.join(dir, 'template.yaml'), 'utf8')) as ModuleTemplate & KubeObject;
    expect(template.metadata).toEqual({
      name: `${module}-1.0.0`,
      namespace: klm().namespace,
      labels: { 'example.io/purpose': 'test', 'operator.kyma-project.io/module-name': module },
      annotations: { 'operator.kyma-project.io/is-cluster-scoped': 'false' },
    });
    expect(template.spec).toMatchObject({
      moduleName: module,
      version: '1.0.0',
      descriptor: {},
      data: { kind: 'Widget', metadata: { name: 'default' } },
      manager: { name: `${module}-manager`, namespace, kind: 'Deployment' },
    });

    // What the worker reads: the component in the registry it is configured with (useKlm: the stack's).
    const loc = configuredComponentLocation({ host: stackInfo().registryHost }, component, '1.0.0', 'test');
    const descriptor = (await pullDescriptor(Registries.unconfigured().client(loc.registry), loc)) as {
      component: { labels: { name: string; value: unknown }[]; resources: { name: string }[] };
    };
    expect(descriptor.component.resources.map((r) => r.name)).toEqual(['raw-manifest', 'default-cr']);
    expect(descriptor.component.labels).toContainEqual({
      name: 'security.kyma-project.io/scan',
      value: 'enabled',
      version: 'v1',
    });

    await klm().kube.apply(template);
    await klm().kube.apply(moduleReleaseMeta(module, component, klm().namespace, { regular: '1.0.0' }));
    klm().manager.watch(`${group}/v1alpha1`, 'Widget');
    const kyma = uniqueName('kyma');
    await klm().kube.create(kymaObject(klm().namespace, kyma, { channel: 'regular', modules: [{ name: module }] }));
    const ready = await kymaInState(klm(), kyma, 'Ready', 60_000);
    expect(ready.status?.modules?.find((m) => m.name === module)).toMatchObject({ state: 'Ready', version: '1.0.0' });
    expect(await klm().kube.get(`${group}/v1alpha1`, 'Widget', 'default', `${kyma}-system`)).toMatchObject({
      spec: { size: 3 },
      status: { state: 'Ready' },
    });
    expect(await klm().kube.get('apps/v1', 'Deployment', `${module}-manager`, namespace)).toMatchObject({
      spec: { template: { spec: { containers: [{ image: `example.invalid/${module}-manager:1.0.0` }] } } },
    });
  });

  it('refuses a version the registry has, unless --overwrite', async () => {
    const again = await create();
    expect(again.code).toBe(1);
    expect(again.stderr).toContain(
      `component ${component}:1.0.0 is in ${stackInfo().registryHost}/component-descriptors/${component} already: raise the version`,
    );
    expect(again.stderr).toContain('give --overwrite to replace it');
    const replaced = await create('--overwrite');
    expect(replaced.code, replaced.stderr).toBe(0);
    expect(replaced.stderr).toContain('replacing it (--overwrite)');
  });

  it('refuses an invalid config with every problem listed, and writes no template', async () => {
    const bad = await authorDir(moduleName('bad'), 'v1', {
      repository: 'http://github.com/x',
      icons: [],
      manifest: 'nowhere.yaml',
      manager: { name: 'm', group: 'apps', version: 'v1' },
    });
    try {
      const ran = await klmCli([
        'module',
        'create',
        '-c',
        path.join(bad.dir, 'module-config.yaml'),
        '-o',
        path.join(bad.dir, 'template.yaml'),
        '--registry',
        stackInfo().registryHost,
      ]);
      expect(ran.code).toBe(1);
      expect(ran.stderr).toContain(
        `${path.join(bad.dir, 'module-config.yaml')} has 5 problems; fix them and run again:`,
      );
      for (const key of ['version', 'manifest', 'repository', 'icons', 'manager.kind'])
        expect(ran.stderr).toMatch(new RegExp(`\\n {2}- ${key.replace('.', '\\.')}: `));
      expect(existsSync(path.join(bad.dir, 'template.yaml'))).toBe(false);
    } finally {
      await rm(bad.dir, { recursive: true, force: true });
    }
  });

  it('says when the command line is wrong (exit 1, as the Kyma CLI)', async () => {
    const noRegistry = await klmCli([
      'module',
      'create',
      '-c',
      path.join(dir, 'module-config.yaml'),
      '-o',
      path.join(dir, 'template.yaml'),
    ]);
    expect(noRegistry.code).toBe(1);
    expect(noRegistry.stderr).toContain('--registry is required');
    const scheme = await create('--registry', `http://${stackInfo().registryHost}`);
    expect(scheme.code).toBe(1);
  });
});

describe('klm module create --output-constructor-file (the OCM CLI pushes)', () => {
  const module = moduleName('sources');
  let dir: string;
  let commit: string;

  beforeAll(async () => {
    ({ dir } = await authorDir(module, '2.0.0'));
    const git = (...args: string[]) =>
      execFileSync('git', ['-C', dir, '-c', 'user.name=author', '-c', 'user.email=author@example.io', ...args], {
        encoding: 'utf8',
      });
    git('init', '-q');
    git('add', '-A');
    git('commit', '-q', '-m', 'the module');
    commit = git('rev-parse', 'HEAD').trim();
  });

  afterAll(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  const create = (...more: string[]) =>
    klmCli([
      'module',
      'create',
      '-c',
      path.join(dir, 'module-config.yaml'),
      '-o',
      path.join(dir, 'template.yaml'),
      ...more,
    ]);

  it("writes the template and the constructor modulectl 3.2.0 writes, its git source the repository's HEAD; pushes nothing", async () => {
    const out = path.join(dir, 'component-constructor.yaml');
    const ran = await create(
      '--output-constructor-file',
      out,
      '--module-sources-git-directory',
      dir,
      '--skip-version-validation=false',
    );
    expect(ran.code, ran.stderr).toBe(0);
    expect(ran.stderr).not.toContain('pushing');
    expect(ran.stdout).toContain(
      `ModuleTemplate ${module}-2.0.0 written to ${path.join(dir, 'template.yaml')} (nothing pushed: no --registry)`,
    );
    expect(ran.stdout).toContain(`component constructor written to ${out}: push the component with the OCM CLI`);
    expect(existsSync(path.join(dir, 'template.yaml'))).toBe(true);

    const doc = parse(await readFile(out, 'utf8')) as { components: Record<string, unknown>[] };
    expect(Object.keys(doc)).toEqual(['components']);
    expect(doc.components).toHaveLength(1);
    const c = doc.components[0]!;
    expect(c.name).toBe(`kyma-project.io/module/${module}`);
    expect(c.version).toBe('2.0.0');
    expect(c.provider).toEqual({
      name: 'kyma-project.io',
      labels: [{ name: 'kyma-project.io/built-by', value: 'modulectl', version: 'v1' }],
    });
    expect(c.labels).toContainEqual({
      name: 'operator.kyma-project.io/is-cluster-scoped',
      value: 'false',
      version: 'v1',
    });
    expect(c.labels).toContainEqual({ name: 'security.kyma-project.io/scan', value: 'enabled', version: 'v1' });
    expect(c.resources).toEqual([
      {
        name: `${module}-manager`,
        type: 'ociArtifact',
        version: '2.0.0',
        relation: 'external',
        labels: [{ name: 'scan.security.kyma-project.io/type', value: 'third-party-image', version: 'v1' }],
        access: { type: 'ociArtifact', imageReference: `example.invalid/${module}-manager:2.0.0` },
      },
      {
        name: 'raw-manifest',
        type: 'directoryTree',
        version: '2.0.0',
        input: { type: 'dir', path: dir, includeFiles: ['manifest.yaml'] },
      },
      {
        name: 'default-cr',
        type: 'directoryTree',
        version: '2.0.0',
        input: { type: 'dir', path: dir, includeFiles: ['default-cr.yaml'] },
      },
      {
        name: 'moduletemplate',
        type: 'PlainText',
        version: '2.0.0',
        input: { type: 'file', path: path.join(dir, 'template.yaml') },
      },
    ]);
    expect(c.sources).toEqual([
      {
        name: 'module-sources',
        type: 'Github',
        version: '2.0.0',
        access: { type: 'gitHub', repoUrl: 'https://github.com/kyma-project/template-operator', commit },
      },
    ]);
  });

  it('refuses a directory that is no git repository, writing nothing', async () => {
    const elsewhere = await mkdtemp(path.join(tmpdir(), 'klm-no-git-'));
    try {
      const out = path.join(elsewhere, 'component-constructor.yaml');
      const template = path.join(elsewhere, 'template.yaml');
      const ran = await klmCli([
        'module',
        'create',
        '-c',
        path.join(dir, 'module-config.yaml'),
        '-o',
        template,
        '--output-constructor-file',
        out,
        '--module-sources-git-directory',
        elsewhere,
      ]);
      expect(ran.code).toBe(1);
      expect(ran.stderr).toContain(
        `--module-sources-git-directory ${elsewhere}: git found no repository or no commit there; give the directory of the module's git repository`,
      );
      expect(existsSync(out)).toBe(false);
      expect(existsSync(template)).toBe(false);
    } finally {
      await rm(elsewhere, { recursive: true, force: true });
    }
  });

  it('with --skip-version-validation=false, refuses a manager whose image is not tagged with the version', async () => {
    const wrong = await authorDir(moduleName('untagged'), '3.0.0');
    try {
      const manifest = await readFile(path.join(wrong.dir, 'manifest.yaml'), 'utf8');
      await writeFile(path.join(wrong.dir, 'manifest.yaml'), manifest.replace('-manager:3.0.0', '-manager:2.9.9'));
      const ran = await klmCli([
        'module',
        'create',
        '-c',
        path.join(wrong.dir, 'module-config.yaml'),
        '-o',
        path.join(wrong.dir, 'template.yaml'),
        '--dry-run',
        '--skip-version-validation=false',
      ]);
      expect(ran.code).toBe(1);
      expect(ran.stderr).toContain("runs an image tagged 3.0.0, the module's version");
    } finally {
      await rm(wrong.dir, { recursive: true, force: true });
    }
  });
});

describe('klm module create to a registry with TLS and token auth', () => {
  const USER = 'module-author';
  const PASSWORD = 'Pa55-module-author-8e1d';
  const WRONG = 'Wr0ng-module-author-44b0';
  let regDir: string;
  let reg: AuthRegistry;
  let dir: string;
  const module = moduleName('private');
  const component = `kyma-project.io/module/${module}`;

  beforeAll(async () => {
    regDir = await mkdtemp(path.join(tmpdir(), 'klm-module-create-registry-'));
    reg = await startAuthRegistry(toolPaths().registry, regDir, { user: { username: USER, password: PASSWORD } });
    ({ dir } = await authorDir(module, '0.1.0'));
  });

  afterAll(async () => {
    await reg?.stop();
    for (const d of [regDir, dir]) if (d) await rm(d, { recursive: true, force: true });
  });

  const create = (env: NodeJS.ProcessEnv, ...more: string[]) =>
    klmCli(
      [
        'module',
        'create',
        '-c',
        path.join(dir, 'module-config.yaml'),
        '-o',
        path.join(dir, 'template.yaml'),
        '--registry',
        `${reg.registry.host}/kyma/modules`,
        '--registry-ca-file',
        reg.caCert,
        ...more,
      ],
      env,
    );

  function expectNoSecret(ran: Ran): void {
    const shown = ran.stdout + ran.stderr;
    for (const secret of [
      PASSWORD,
      WRONG,
      Buffer.from(`${USER}:${PASSWORD}`).toString('base64'),
      Buffer.from(`${USER}:${WRONG}`).toString('base64'),
    ])
      expect(shown).not.toContain(secret);
  }

  it('is refused without credentials, and with a wrong password, which no output shows', async () => {
    const anonymous = await create({});
    expect(anonymous.code).toBe(1);
    expect(anonymous.stderr).toContain(
      `registry ${reg.registry.host} refused anonymous access to ` +
        `${reg.registry.host}/kyma/modules/component-descriptors/${component}: give ` +
        `--registry-credentials user:password (or set KLM_REGISTRY_CREDENTIALS)`,
    );
    const wrong = await create({}, '--registry-credentials', `${USER}:${WRONG}`);
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toContain('refused the credentials from --registry-credentials');
    expectNoSecret(wrong);
  });

  it('pushes with credentials from KLM_REGISTRY_CREDENTIALS, under the subpath; no output shows the password', async () => {
    const ran = await create({ KLM_REGISTRY_CREDENTIALS: `${USER}:${PASSWORD}` });
    expect(ran.code, ran.stderr).toBe(0);
    expect(ran.stdout).toContain(
      `KLM_OCI_REGISTRY_HOST=${reg.registry.host} with KLM_MODULES_REPOSITORY_SUBPATH=kyma/modules`,
    );
    expectNoSecret(ran);
    const reader = new Registries({
      caFile: reg.caCert,
      credentials: {
        describe: 'the test',
        credentialsFor: () => Promise.resolve({ username: USER, password: PASSWORD }),
      },
    });
    const loc = configuredComponentLocation(
      { host: reg.registry.host, subPath: 'kyma/modules' },
      component,
      '0.1.0',
      'test',
    );
    const descriptor = (await pullDescriptor(reader.client(loc.registry), loc)) as {
      component: { name: string; version: string };
    };
    expect(descriptor.component).toMatchObject({ name: component, version: '0.1.0' });
  });

  /** A Docker config naming helper `name` for the registry, the helper's directory first on PATH. */
  async function helperEnv(name: string, helper: Parameters<typeof writeCredentialHelper>[2]) {
    const helperDir = await mkdtemp(path.join(dir, 'docker-'));
    await writeCredentialHelper(helperDir, name, helper);
    await writeFile(
      path.join(helperDir, 'config.json'),
      JSON.stringify({ credHelpers: { [reg.registry.host]: name } }),
    );
    return { DOCKER_CONFIG: helperDir, PATH: `${helperDir}${path.delimiter}${process.env.PATH ?? ''}` };
  }

  it('pushes with the credentials of the Docker credential helper the Docker config names; no output shows them', async () => {
    const env = await helperEnv('test', {
      answers: { serverUrl: reg.registry.host, username: USER, secret: PASSWORD },
    });
    const ran = await create(env, '--overwrite');
    expect(ran.code, ran.stderr).toBe(0);
    expect(ran.stderr).toContain(`pushing component ${component}:0.1.0`);
    expectNoSecret(ran);
  });

  it('says which credential helper failed for which host, quoting none of its output', async () => {
    const MARKER = 'HELPER-STDERR-MARKER-3f9e';
    const env = await helperEnv('test', { fails: { exitCode: 7, stderr: `${MARKER} ${PASSWORD}` } });
    const ran = await create(env, '--overwrite');
    expect(ran.code).toBe(1);
    expect(ran.stderr).toContain(
      `the credential helper docker-credential-test failed for ${reg.registry.host} (exit code 7)`,
    );
    expect(ran.stdout + ran.stderr).not.toContain(MARKER);
    expectNoSecret(ran);
  });
});
