// klm module create's pure parts: modulectl 3.2.0's module-config.yaml (every rule, every
// problem at once), the ModuleTemplate it writes, the component it pushes; and reading the
// files a config names (local or downloaded).
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parse, stringify } from 'yaml';
import { describe, expect, it } from 'vitest';
import { credentialsOf, pushTargetOf } from '../../src/cli/module-create';
import { UsageError } from '../../src/cli/output';
import { readLayer } from '../../src/oci/tar';
import { defaultCrIsClusterScoped } from '../../src/publish/cluster-scope';
import { parseModuleConfig, shortName, type ModuleConfig } from '../../src/publish/module-config';
import { moduleComponentOf } from '../../src/publish/module-config-component';
import { moduleTemplateOf } from '../../src/publish/module-config-template';
import { ModuleConfigError, readModuleSources } from '../../src/publish/module-sources';

const VALID = {
  name: 'kyma-project.io/module/template-operator',
  version: '1.0.0',
  manifest: 'manifest.yaml',
  repository: 'https://github.com/kyma-project/template-operator',
  documentation: 'https://kyma-project.io/docs',
  icons: [{ name: 'module-icon', link: 'https://example.io/icon.svg' }],
  team: 'kyma/jellyfish',
};

const noFileProblems = () => undefined;

function parsed(changes: Record<string, unknown>, checkFile: (p: string) => string | undefined = noFileProblems) {
  const raw: Record<string, unknown> = { ...VALID, ...changes };
  for (const [k, v] of Object.entries(changes)) if (v === undefined) delete raw[k];
  return parseModuleConfig(stringify(raw), checkFile);
}

function problems(changes: Record<string, unknown>, checkFile?: (p: string) => string | undefined): string[] {
  return parsed(changes, checkFile).problems;
}

describe('parseModuleConfig', () => {
  it("reads a valid config with modulectl's defaults", () => {
    const r = parsed({});
    expect(r.problems).toEqual([]);
    expect(r.config).toEqual({
      ...VALID,
      manifest: { path: 'manifest.yaml' },
      securityScanEnabled: true,
      labels: {},
      annotations: {},
      associatedResources: [],
      resources: [],
      requiresDowntime: false,
      internal: false,
      beta: false,
    });
  });

  it('reads every optional key', () => {
    const r = parsed({
      defaultCR: 'https://example.io/cr.yaml',
      security: 'sec-scanners-config.yaml',
      securityScanEnabled: false,
      team: undefined,
      labels: { tier: 'gold', n: 1 },
      annotations: { note: 'x' },
      manager: {
        name: 'template-operator-manager',
        namespace: 'kyma-system',
        group: 'apps',
        version: 'v1',
        kind: 'Deployment',
      },
      associatedResources: [{ group: 'operator.kyma-project.io', version: 'v1alpha1', kind: 'Sample' }],
      resources: { crds: 'https://example.io/crds.yaml' },
      requiresDowntime: true,
      internal: true,
      beta: true,
    });
    expect(r.problems).toEqual([]);
    expect(r.config).toMatchObject({
      defaultCR: { url: 'https://example.io/cr.yaml' },
      securityScanEnabled: false,
      labels: { tier: 'gold', n: '1' },
      annotations: { note: 'x' },
      manager: {
        name: 'template-operator-manager',
        namespace: 'kyma-system',
        group: 'apps',
        version: 'v1',
        kind: 'Deployment',
      },
      associatedResources: [{ group: 'operator.kyma-project.io', version: 'v1alpha1', kind: 'Sample' }],
      resources: [{ name: 'crds', link: 'https://example.io/crds.yaml' }],
      requiresDowntime: true,
      internal: true,
      beta: true,
    });
    expect(r.config?.team).toBeUndefined();
  });

  it.each([
    ['missing', undefined, "name: missing; give the module's component name"],
    ['without a path', 'kyma-project.io', 'name: "kyma-project.io" is not a component name'],
    ['in capitals', 'Kyma-project.io/module/x', 'is not a component name'],
    ['without a domain', 'module/x', 'is not a component name'],
    ['too long', `kyma-project.io/module/${'a'.repeat(240)}`, 'name: 263 characters long; shorten it to at most 255'],
    [
      'whose module name has digits',
      'kyma-project.io/module/widget2',
      'name: its last segment "widget2" names the module in the ModuleTemplate, which takes words ' +
        "of three or more lower-case letters joined by '-', at most 64 characters, e.g. " +
        'template-operator',
    ],
    [
      'whose module name has a short word',
      'kyma-project.io/module/my-module',
      'name: its last segment "my-module" names the module',
    ],
    [
      'whose module name is too long',
      `kyma-project.io/module/${'a'.repeat(65)}`,
      `its last segment "${'a'.repeat(65)}" names the module`,
    ],
  ])('refuses a name %s', (_what, name, problem) => {
    expect(problems({ name }).join('\n')).toContain(problem);
  });

  it("takes the module's short name from the last path segment", () => {
    expect(shortName('kyma-project.io/module/template-operator')).toBe('template-operator');
  });

  it.each(['v1.0.0', '1.0', '1', '01.0.0', 'latest', '1.0.0-'])('refuses the version %s (strict semver)', (version) => {
    expect(problems({ version })).toEqual([
      `version: "${version}" is not a semantic version; write MAJOR.MINOR.PATCH without a leading v, e.g. 1.0.0`,
    ]);
  });

  it.each(['1.0.0', '0.1.2-rc.1', '1.2.3+build.5', '10.20.30-alpha.1+meta'])('accepts the version %s', (version) => {
    expect(problems({ version })).toEqual([]);
  });

  it('reads `version: 1.0` as the string modulectl reads, not as a number', () => {
    expect(
      parseModuleConfig(stringify(VALID).replace('version: 1.0.0', 'version: 1.0'), noFileProblems).problems,
    ).toEqual(['version: "1.0" is not a semantic version; write MAJOR.MINOR.PATCH without a leading v, e.g. 1.0.0']);
  });

  it('requires the manifest: an https URL, or a relative path to a file that is there and not empty', () => {
    expect(problems({ manifest: undefined })).toEqual([
      "manifest: missing; give the https URL of the module's manifest, or its file path relative to the config file",
    ]);
    expect(problems({ manifest: 'http://example.io/m.yaml' })[0]).toMatch(
      /^manifest: "http:\/\/example.io\/m.yaml" does not use https/,
    );
    expect(problems({ manifest: '/etc/manifest.yaml' })).toEqual([
      'manifest: "/etc/manifest.yaml" is an absolute path; give it relative to the config file\'s directory',
    ]);
    const asked: string[] = [];
    expect(problems({ manifest: 'out/m.yaml' }, (p) => (asked.push(p), 'out/m.yaml is empty'))).toEqual([
      'manifest: out/m.yaml is empty',
    ]);
    expect(asked).toEqual(['out/m.yaml']);
    expect(parsed({ manifest: 'https://example.io/m.yaml' }, () => 'not asked for URLs').config?.manifest).toEqual({
      url: 'https://example.io/m.yaml',
    });
  });

  it('requires repository and documentation as https URLs', () => {
    expect(problems({ repository: undefined, documentation: 'http://example.io' })).toEqual([
      'repository: missing; give an https URL, e.g. https://github.com/kyma-project/template-operator',
      'documentation: "http://example.io" does not use https; give an https URL, e.g. ' +
        'https://help.sap.com/docs/btp/sap-business-technology-platform/kyma-modules',
    ]);
    expect(problems({ repository: 'not a url' })).toEqual([
      'repository: "not a url" is not a URL; give an https URL, e.g. https://github.com/kyma-project/template-operator',
    ]);
  });

  it('requires at least one icon, names unique, links https; takes a map too', () => {
    expect(problems({ icons: undefined })).toEqual([
      'icons: missing; give at least one icon, e.g. [{name: module-icon, link: https://…}]',
    ]);
    expect(problems({ icons: [] })).toEqual(['icons: empty; give at least one icon']);
    expect(
      problems({
        icons: [
          { name: 'a', link: 'https://x.io/a' },
          { name: 'a', link: 'https://x.io/b' },
          { link: 'https://x.io/c' },
          { name: 'd', link: 'ftp://x.io/d' },
        ],
      }),
    ).toEqual([
      'icons[1]: the name "a" appears twice; give each entry of icons a name of its own',
      'icons[2]: needs a name',
      'icons[3]: "ftp://x.io/d" does not use https; give an https link',
    ]);
    expect(problems({ icons: 'https://x.io/a' })).toEqual([
      'icons: must be a list of {name, link} (the icons the UI shows), or a map of name to link',
    ]);
    expect(parsed({ icons: { 'module-icon': 'https://x.io/i.svg' } }).config?.icons).toEqual([
      { name: 'module-icon', link: 'https://x.io/i.svg' },
    ]);
  });

  it('requires the team unless the security scan is off', () => {
    expect(problems({ team: undefined })).toEqual([
      "team: missing; give the module's team (e.g. kyma/jellyfish), or set securityScanEnabled: false",
    ]);
    expect(problems({ team: undefined, securityScanEnabled: false })).toEqual([]);
    expect(problems({ team: undefined, securityScanEnabled: true })).toHaveLength(1);
  });

  it('checks the default CR as the manifest, but takes none', () => {
    expect(parsed({}).config?.defaultCR).toBeUndefined();
    expect(problems({ defaultCR: 'http://example.io/cr.yaml' })[0]).toMatch(
      /^defaultCR: "http:\/\/example.io\/cr.yaml" does not use https/,
    );
    expect(problems({ defaultCR: '/cr.yaml' })).toEqual([
      'defaultCR: "/cr.yaml" is an absolute path; give it relative to the config file\'s directory',
    ]);
    expect(
      problems({ defaultCR: 'cr.yaml' }, (p) => (p === 'cr.yaml' ? 'there is no file cr.yaml' : undefined)),
    ).toEqual(['defaultCR: there is no file cr.yaml']);
  });

  it('requires name, group, version and kind of the manager, and a namespace name', () => {
    expect(problems({ manager: { namespace: 'Kyma_System' } })).toEqual([
      'manager.name: missing; name the workload (a Deployment, say) that tells the module is ready',
      'manager.group: missing; give the API group',
      'manager.version: missing; give the API version',
      'manager.kind: missing; give the kind',
      'manager.namespace: "Kyma_System" is not a namespace name; use at most 253 lower-case letters, digits and \'-\'',
    ]);
    expect(problems({ manager: 'deployment' })).toHaveLength(1);
  });

  it('requires group, version and kind of each associated resource', () => {
    expect(problems({ associatedResources: [{ group: 'g', version: 'v1', kind: 'K' }, { group: 'g' }] })).toEqual([
      'associatedResources[1].version: missing; give the API version',
      'associatedResources[1].kind: missing; give the kind',
    ]);
    expect(problems({ associatedResources: { group: 'g' } })).toEqual([
      'associatedResources: must be a list of {group, version, kind}',
    ]);
  });

  it('requires unique names and https links of resources, as a list or a map', () => {
    expect(
      problems({
        resources: [
          { name: 'a', link: 'https://x.io' },
          { name: 'a', link: 'http://x.io' },
        ],
      }),
    ).toEqual([
      'resources[1]: the name "a" appears twice; give each entry of resources a name of its own',
      'resources[1]: "http://x.io" does not use https; give an https link',
    ]);
    expect(problems({ resources: { crds: '' } })).toEqual(['resources.crds: needs a link; give an https link']);
  });

  it('takes only true or false for the flags, and maps of single values for labels and annotations', () => {
    expect(
      problems({
        beta: 'yes',
        internal: 1,
        requiresDowntime: 'false',
        securityScanEnabled: 'on',
        labels: ['a'],
        annotations: { a: { b: 'c' } },
      }),
    ).toEqual([
      'securityScanEnabled: must be true or false, not "on"',
      'labels: must be a map of names to single values',
      'annotations: must be a map of names to single values',
      'internal: must be true or false, not "1"',
      'beta: must be true or false, not "yes"',
    ]);
  });

  it('reports every problem at once, and warns of keys modulectl ignores', () => {
    const r = parseModuleConfig(
      'name: x\nversion: v1\nmanifest: /m.yaml\nrepository: http://a\nicons: []\nchannel: regular\n',
      noFileProblems,
    );
    expect(r.config).toBeUndefined();
    expect(r.problems.map((p) => p.split(':')[0])).toEqual([
      'name',
      'version',
      'manifest',
      'repository',
      'documentation',
      'icons',
      'team',
    ]);
    expect(r.warnings).toEqual(['unknown key "channel" ignored (modulectl ignores it too)']);
  });

  it('says when the file is no YAML map', () => {
    expect(parseModuleConfig('- a\n- b\n', noFileProblems).problems).toEqual([
      "must be a YAML map of modulectl's keys (name, version, manifest, repository, documentation, icons, …)",
    ]);
    expect(parseModuleConfig('name: [\n', noFileProblems).problems[0]).toMatch(/^not valid YAML: /);
  });
});

const CONFIG: ModuleConfig = {
  name: 'kyma-project.io/module/template-operator',
  version: '1.2.3',
  manifest: { path: 'manifest.yaml' },
  repository: 'https://github.com/kyma-project/template-operator',
  documentation: 'https://kyma-project.io/docs',
  icons: [
    { name: 'z-icon', link: 'https://x.io/z.svg' },
    { name: 'a-icon', link: 'https://x.io/a.svg' },
  ],
  team: 'kyma/jellyfish',
  securityScanEnabled: true,
  labels: { 'z.example.io/tier': 'gold' },
  annotations: { note: 'x' },
  manager: {
    name: 'template-operator-manager',
    namespace: 'kyma-system',
    group: 'apps',
    version: 'v1',
    kind: 'Deployment',
  },
  associatedResources: [{ group: 'operator.kyma-project.io', version: 'v1alpha1', kind: 'Sample' }],
  resources: [],
  requiresDowntime: true,
  internal: false,
  beta: false,
};

const CR = {
  apiVersion: 'operator.kyma-project.io/v1alpha1',
  kind: 'Sample',
  metadata: { name: 'sample' },
  spec: { resourceFilePath: './module-data/yaml' },
};

describe('moduleTemplateOf', () => {
  it('writes the ModuleTemplate modulectl 3.2.0 writes: every field, maps sorted by name, descriptor {}', () => {
    expect(moduleTemplateOf(CONFIG, { defaultCR: CR, clusterScoped: false, namespace: '' })).toEqual({
      apiVersion: 'operator.kyma-project.io/v1beta2',
      kind: 'ModuleTemplate',
      metadata: {
        name: 'template-operator-1.2.3',
        namespace: '',
        labels: { 'operator.kyma-project.io/module-name': 'template-operator', 'z.example.io/tier': 'gold' },
        annotations: { note: 'x', 'operator.kyma-project.io/is-cluster-scoped': 'false' },
      },
      spec: {
        moduleName: 'template-operator',
        version: '1.2.3',
        requiresDowntime: true,
        info: {
          repository: CONFIG.repository,
          documentation: CONFIG.documentation,
          icons: [
            { name: 'a-icon', link: 'https://x.io/a.svg' },
            { name: 'z-icon', link: 'https://x.io/z.svg' },
          ],
        },
        associatedResources: [{ group: 'operator.kyma-project.io', version: 'v1alpha1', kind: 'Sample' }],
        data: CR,
        manager: {
          name: 'template-operator-manager',
          namespace: 'kyma-system',
          group: 'apps',
          version: 'v1',
          kind: 'Deployment',
        },
        descriptor: {},
      },
    });
    // The order of the keys, as modulectl's Go template writes them.
    const yaml = stringify(moduleTemplateOf(CONFIG, { defaultCR: CR, clusterScoped: false, namespace: '' }));
    expect(Object.keys((parse(yaml) as { spec: object }).spec)).toEqual([
      'moduleName',
      'version',
      'requiresDowntime',
      'info',
      'associatedResources',
      'data',
      'manager',
      'descriptor',
    ]);
  });

  it('leaves out what the config has not: no data, manager, associated resources or resources', () => {
    const { manager: _m, ...bare } = CONFIG;
    const t = moduleTemplateOf({ ...bare, associatedResources: [] }, { clusterScoped: false, namespace: 'kcp-system' });
    expect(t.metadata.namespace).toBe('kcp-system');
    expect(Object.keys(t.spec as object)).toEqual(['moduleName', 'version', 'requiresDowntime', 'info', 'descriptor']);
  });

  it('annotates a cluster-scoped default CR kind', () => {
    expect(
      moduleTemplateOf(CONFIG, { defaultCR: CR, clusterScoped: true, namespace: '' }).metadata.annotations,
    ).toEqual({ note: 'x', 'operator.kyma-project.io/is-cluster-scoped': 'true' });
  });

  it('labels beta and internal modules; the module-name label is always the short name', () => {
    const t = moduleTemplateOf(
      { ...CONFIG, beta: true, internal: true, labels: { 'operator.kyma-project.io/module-name': 'other' } },
      { clusterScoped: false, namespace: '' },
    );
    expect(t.metadata.labels).toEqual({
      'operator.kyma-project.io/beta': 'true',
      'operator.kyma-project.io/internal': 'true',
      'operator.kyma-project.io/module-name': 'template-operator',
    });
    expect(moduleTemplateOf(CONFIG, { clusterScoped: false, namespace: '' }).metadata.labels).not.toHaveProperty(
      'operator.kyma-project.io/beta',
    );
  });

  it('offers a manifest URL as the resource rawManifest, which a config resource of that name replaces', () => {
    const url = { ...CONFIG, manifest: { url: 'https://github.com/x/releases/download/1.2.3/template-operator.yaml' } };
    expect(
      (moduleTemplateOf(url, { clusterScoped: false, namespace: '' }).spec as { resources: unknown }).resources,
    ).toEqual([{ name: 'rawManifest', link: 'https://github.com/x/releases/download/1.2.3/template-operator.yaml' }]);
    const more = {
      ...url,
      resources: [
        { name: 'crds', link: 'https://x.io/crds.yaml' },
        { name: 'rawManifest', link: 'https://x.io/mine.yaml' },
      ],
    };
    expect(
      (moduleTemplateOf(more, { clusterScoped: false, namespace: '' }).spec as { resources: unknown }).resources,
    ).toEqual([
      { name: 'crds', link: 'https://x.io/crds.yaml' },
      { name: 'rawManifest', link: 'https://x.io/mine.yaml' },
    ]);
    expect(
      (
        moduleTemplateOf(
          { ...CONFIG, resources: [{ name: 'crds', link: 'https://x.io/crds.yaml' }] },
          { clusterScoped: false, namespace: '' },
        ).spec as { resources: unknown }
      ).resources,
    ).toEqual([{ name: 'crds', link: 'https://x.io/crds.yaml' }]);
  });
});

describe('defaultCrIsClusterScoped', () => {
  const crd = (group: string, kind: string, scope: string) => ({
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    spec: { group, scope, names: { kind } },
  });
  it("is true only when the CRD of the default CR's group and kind has scope Cluster", () => {
    const cr = { apiVersion: 'demo.example.io/v1', kind: 'Widget' };
    expect(
      defaultCrIsClusterScoped([{ kind: 'ServiceAccount' }, crd('demo.example.io', 'Widget', 'Cluster')], cr),
    ).toBe(true);
    expect(defaultCrIsClusterScoped([crd('demo.example.io', 'Widget', 'Namespaced')], cr)).toBe(false);
    expect(
      defaultCrIsClusterScoped(
        [crd('other.example.io', 'Widget', 'Cluster'), crd('demo.example.io', 'Gadget', 'Cluster')],
        cr,
      ),
    ).toBe(false);
    expect(defaultCrIsClusterScoped([crd('demo.example.io', 'Widget', 'Cluster')], undefined)).toBe(false);
  });
});

describe('moduleComponentOf', () => {
  const files = {
    manifest: { fileName: 'manifest.yaml', text: 'kind: A\n' },
    defaultCR: { fileName: 'cr.yml', text: 'kind: B\n' },
  };

  it('labels the component as modulectl does, with the scan labels while the scan is enabled', () => {
    const c = moduleComponentOf(CONFIG, files, true);
    expect(c.name).toBe(CONFIG.name);
    expect(c.version).toBe('1.2.3');
    expect(c.labels).toEqual([
      { name: 'kyma-project.io/built-by', value: 'modulectl', version: 'v1' },
      { name: 'operator.kyma-project.io/beta', value: 'false', version: 'v1' },
      { name: 'operator.kyma-project.io/internal', value: 'false', version: 'v1' },
      { name: 'operator.kyma-project.io/requiresDowntime', value: 'true', version: 'v1' },
      { name: 'operator.kyma-project.io/is-cluster-scoped', value: 'true', version: 'v1' },
      { name: 'security.kyma-project.io/scan', value: 'enabled', version: 'v1' },
      {
        name: 'cloud.gardener.cnudie/responsibles',
        value: [{ github_hostname: 'github.tools.sap', teamname: 'kyma/jellyfish', type: 'githubTeam' }],
        version: 'v1',
      },
    ]);
    expect(
      moduleComponentOf({ ...CONFIG, securityScanEnabled: false }, files, false).labels.map((l) => l.name),
    ).not.toContain('security.kyma-project.io/scan');
  });

  it('carries the manifest and the default CR as uncompressed tars of their one file', () => {
    const c = moduleComponentOf(CONFIG, files, false);
    expect(c.resources.map((r) => [r.name, r.type, r.mediaType])).toEqual([
      ['raw-manifest', 'directoryTree', 'application/x-tar'],
      ['default-cr', 'directoryTree', 'application/x-tar'],
    ]);
    expect(readLayer(c.resources[0]!.blob, 'm')).toEqual({ text: 'kind: A\n', format: 'tar' });
    expect(readLayer(c.resources[1]!.blob, 'cr', /^cr\.yml$/).text).toBe('kind: B\n');
    // A download named like no YAML file still reads as the archive's one YAML file.
    const odd = moduleComponentOf(CONFIG, { manifest: { fileName: 'download', text: 'kind: A\n' } }, false);
    expect(odd.resources).toHaveLength(1);
    expect(readLayer(odd.resources[0]!.blob, 'm', /^raw-manifest\.yaml$/).text).toBe('kind: A\n');
  });
});

describe('readModuleSources', () => {
  const manifest =
    'apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nspec: {group: ' +
    'demo.example.io, scope: Cluster, names: {kind: Widget}}\n---\napiVersion: v1\nkind: ' +
    'ServiceAccount\nmetadata: {name: sa}\n';
  const cr = 'apiVersion: demo.example.io/v1\nkind: Widget\nmetadata: {name: default}\nspec: {size: 3}\n';

  async function configIn(changes: Record<string, unknown>, files: Record<string, string> = {}): Promise<string> {
    const dir = await mkdtemp(path.join(tmpdir(), 'klm-module-config-'));
    for (const [name, text] of Object.entries(files)) await writeFile(path.join(dir, name), text);
    const file = path.join(dir, 'module-config.yaml');
    await writeFile(file, stringify({ ...VALID, ...changes }));
    return file;
  }

  const noDownload = () => Promise.reject(new Error('no download expected'));

  it("reads local files relative to the config file's directory; the default CR typed as YAML", async () => {
    const file = await configIn({ defaultCR: 'cr.yaml' }, { 'manifest.yaml': manifest, 'cr.yaml': cr });
    const s = await readModuleSources(file, noDownload);
    const dir = path.dirname(file);
    expect(s.manifest).toEqual({
      fileName: 'manifest.yaml',
      text: manifest,
      localFile: path.join(dir, 'manifest.yaml'),
    });
    expect(s.manifestObjects).toHaveLength(2);
    expect(s.defaultCR).toEqual({
      fileName: 'cr.yaml',
      text: cr,
      localFile: path.join(dir, 'cr.yaml'),
      object: { apiVersion: 'demo.example.io/v1', kind: 'Widget', metadata: { name: 'default' }, spec: { size: 3 } },
    });
  });

  it('downloads a manifest and a default CR given as URLs', async () => {
    const asked: string[] = [];
    const download = (url: string, what: string) => {
      asked.push(`${what} ${url}`);
      return Promise.resolve(url.endsWith('cr.yaml') ? cr : manifest);
    };
    const s = await readModuleSources(
      await configIn({
        manifest: 'https://example.io/releases/1.0.0/operator.yaml',
        defaultCR: 'https://example.io/releases/1.0.0/cr.yaml',
      }),
      download,
    );
    expect(asked).toEqual([
      'manifest https://example.io/releases/1.0.0/operator.yaml',
      'defaultCR https://example.io/releases/1.0.0/cr.yaml',
    ]);
    expect(s.manifest.fileName).toBe('operator.yaml');
    expect(defaultCrIsClusterScoped(s.manifestObjects, s.defaultCR?.object)).toBe(true);
  });

  it("reports missing and empty files with the config's other problems", async () => {
    const file = await configIn({ version: 'v1', defaultCR: 'cr.yaml' }, { 'manifest.yaml': '' });
    const err = await readModuleSources(file, noDownload).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ModuleConfigError);
    expect((err as ModuleConfigError).problems).toEqual([
      'version: "v1" is not a semantic version; write MAJOR.MINOR.PATCH without a leading v, e.g. 1.0.0',
      `manifest: ${path.join(path.dirname(file), 'manifest.yaml')} is empty`,
      `defaultCR: there is no file ${path.join(path.dirname(file), 'cr.yaml')} (the path is relative to the config file's directory)`,
    ]);
    expect((err as Error).message).toMatch(/has 3 problems; fix them and run again:\n {2}- version: /);
  });

  it('refuses a manifest that is no YAML and a default CR that is not one object', async () => {
    const file = await configIn({ defaultCR: 'cr.yaml' }, { 'manifest.yaml': 'kind: [\n', 'cr.yaml': '- a\n' });
    const err = (await readModuleSources(file, noDownload).catch((e: unknown) => e)) as ModuleConfigError;
    expect(err.problems.map((p) => p.replace(path.dirname(file), 'DIR'))).toEqual([
      expect.stringMatching(/^manifest: DIR\/manifest.yaml: not valid YAML: /),
      'defaultCR: DIR/cr.yaml must hold one object (apiVersion, kind, metadata, spec)',
    ]);
  });

  it('says where the config should be when there is none', async () => {
    await expect(readModuleSources('/nonexistent/module-config.yaml', noDownload)).rejects.toThrow(
      'cannot read the module config /nonexistent/module-config.yaml (ENOENT): give its path with --config-file',
    );
  });
});

describe('klm module create options', () => {
  it('splits --registry into host and subpath, and refuses a scheme', () => {
    expect(pushTargetOf('127.0.0.1:5000')).toEqual({ host: '127.0.0.1:5000' });
    expect(pushTargetOf('Europe-Docker.pkg.dev/my-project/modules/')).toEqual({
      host: 'europe-docker.pkg.dev',
      subPath: 'my-project/modules',
    });
    expect(() => pushTargetOf('https://reg.example.io')).toThrow(UsageError);
  });

  it('reads user:password (a password may hold colons), and never quotes it when it is wrong', () => {
    expect(credentialsOf('ci-bot:pa:ss')).toEqual({ username: 'ci-bot', password: 'pa:ss' });
    for (const bad of ['s3cr3t-only', ':s3cr3t-only', 's3cr3t-only:']) {
      const err = (() => {
        try {
          credentialsOf(bad);
        } catch (e) {
          return e as Error;
        }
      })();
      expect(err).toBeInstanceOf(UsageError);
      expect(err!.message).not.toContain('s3cr3t');
    }
  });
});
