// The component constructor klm module create writes for the OCM CLI, as modulectl 3.2.0 writes
// it: image references read and checked as modulectl reads them, the images a manifest runs, their
// resource names and versions, the version validation of the manager's image, and the
// constructor's fields one by one.
import { readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { constructorFile } from '../../src/cli/module-create';
import { componentConstructorOf, imageResourceOf } from '../../src/publish/component-constructor';
import { isImageCandidate, parseImage } from '../../src/publish/image-reference';
import { managerVersionProblem } from '../../src/publish/manager-version';
import { manifestImages } from '../../src/publish/manifest-images';
import type { ModuleConfig } from '../../src/publish/module-config';

const DIGEST = '0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef';

const CONFIG: ModuleConfig = {
  name: 'kyma-project.io/module/template-operator',
  version: '1.2.3',
  manifest: { path: 'manifest.yaml' },
  repository: 'https://github.com/kyma-project/template-operator',
  documentation: 'https://kyma-project.io/docs',
  icons: [{ name: 'module-icon', link: 'https://example.io/icon.svg' }],
  team: 'kyma/jellyfish',
  securityScanEnabled: true,
  labels: {},
  annotations: {},
  manager: { name: 'manager', namespace: 'x', group: 'apps', version: 'v1', kind: 'Deployment' },
  associatedResources: [],
  resources: [],
  requiresDowntime: false,
  internal: false,
  beta: true,
};

function deployment(name: string, images: string[], env: string[] = [], kind = 'Deployment') {
  return {
    apiVersion: 'apps/v1',
    kind,
    metadata: { name },
    spec: {
      template: {
        spec: {
          initContainers: [{ name: 'init', image: images[1] }],
          containers: [{ name: 'main', image: images[0], env: env.map((value, i) => ({ name: `E${i}`, value })) }],
        },
      },
    },
  };
}

describe('image references', () => {
  it('reads name, tag and digest as distribution/reference does', () => {
    expect(parseImage('europe-docker.pkg.dev/kyma/prod/template-operator:1.2.3')).toEqual({
      name: 'template-operator',
      tag: '1.2.3',
      reference: 'europe-docker.pkg.dev/kyma/prod/template-operator:1.2.3',
    });
    expect(parseImage(`localhost:5000/a/b:v1@sha256:${DIGEST}`)).toEqual({
      name: 'b',
      tag: 'v1',
      digest: DIGEST,
      reference: `localhost:5000/a/b:v1@sha256:${DIGEST}`,
    });
    expect(parseImage(`busybox@sha256:${DIGEST}`)).toMatchObject({ name: 'busybox', digest: DIGEST });
  });

  it('refuses a reference without tag or digest, latest and main, upper case paths and a digest alone', () => {
    expect(parseImage('example.io/a/b')).toEqual({ problem: 'has no tag or digest' });
    expect(parseImage('busybox:latest')).toEqual({ problem: 'has the tag latest, which is not allowed' });
    expect(parseImage('example.io/b:MAIN')).toEqual({ problem: 'has the tag MAIN, which is not allowed' });
    expect(parseImage('example.io/Upper:1.0')).toEqual({ problem: 'is not an image reference' });
    expect(parseImage(DIGEST)).toEqual({ problem: 'names no image, only a digest' });
    expect(parseImage('example.io/b@sha256:0123456789abcdef0123456789abcdef')).toEqual({
      problem: 'has a sha256 digest that is not 64 hex digits',
    });
  });

  it('checks only values that look like references', () => {
    expect(isImageCandidate('busybox')).toBe(false);
    expect(isImageCandidate('a b:1')).toBe(false);
    expect(isImageCandidate('busybox:1.36')).toBe(true);
    expect(isImageCandidate(`x@${'a'.repeat(300)}`)).toBe(false);
  });

  it('names and versions image resources as modulectl does', () => {
    const res = (r: string) =>
      imageResourceOf(parseImage(r) as Exclude<ReturnType<typeof parseImage>, { problem: string }>);
    expect(res('example.io/op:1.2.3')).toEqual({ name: 'op', version: '1.2.3' });
    expect(res('example.io/op:v1.2.3')).toEqual({ name: 'op', version: 'v1.2.3' });
    expect(res('example.io/op:1.36')).toEqual({ name: 'op', version: '0.0.0-1.36' });
    expect(res('example.io/op:_weird_tag_')).toEqual({ name: 'op', version: '0.0.0-weird-tag' });
    expect(res(`example.io/op:1.2.3@sha256:${DIGEST}`)).toEqual({
      name: 'op-01234567',
      version: '1.2.3+sha256.0123456789ab',
    });
    expect(res(`example.io/op:dev@sha256:${DIGEST}`)).toEqual({
      name: 'op-01234567',
      version: '0.0.0-dev+sha256.0123456789ab',
    });
    expect(res(`example.io/op@sha256:${DIGEST}`)).toEqual({
      name: 'op-01234567',
      version: '0.0.0+sha256.0123456789ab',
    });
  });
});

describe('manifestImages', () => {
  it("finds containers', init containers' and env images of Deployments and StatefulSets, once each, sorted", () => {
    const found = manifestImages([
      deployment(
        'manager',
        ['example.io/op:1.2.3', 'example.io/init:1.0'],
        ['example.io/side:2.0', 'plain', 'http://x y'],
      ),
      deployment('db', ['example.io/db:9', 'example.io/init:1.0'], [], 'StatefulSet'),
      { kind: 'Pod', spec: { containers: [{ image: 'example.io/pod:1' }] } },
      null,
    ]);
    expect(found.problems).toEqual([]);
    expect(found.images.map((i) => i.reference)).toEqual([
      'example.io/db:9',
      'example.io/init:1.0',
      'example.io/op:1.2.3',
      'example.io/side:2.0',
    ]);
  });

  it('lists every bad image with where it is', () => {
    const found = manifestImages([
      deployment('manager', ['example.io/op:latest', 'example.io/init:main'], ['https://x.io/a']),
    ]);
    expect(found.problems).toEqual([
      'Deployment manager, containers main: the image "example.io/op:latest" has the tag latest, which is not allowed',
      'Deployment manager, containers main, env E0: the image "https://x.io/a" is not an image reference',
      'Deployment manager, initContainers init: the image "example.io/init:main" has the tag main, which is not allowed',
    ]);
  });
});

describe('managerVersionProblem (--skip-version-validation=false)', () => {
  it('passes when a container of the manager runs an image tagged with the version, or there is no manager', () => {
    expect(managerVersionProblem(CONFIG, [deployment('manager', ['example.io/op:1.2.3'])])).toBeUndefined();
    const { manager: _, ...noManager } = CONFIG;
    expect(managerVersionProblem(noManager, [])).toBeUndefined();
  });

  it('says what is wrong otherwise: another tag, a digest only, another kind or name', () => {
    for (const objects of [
      [deployment('manager', ['example.io/op:1.2.2'])],
      [deployment('manager', [`example.io/op@sha256:${DIGEST}`])],
      [deployment('manager', ['example.io/op:1.2.3'], [], 'StatefulSet')],
      [deployment('other', ['example.io/op:1.2.3'])],
    ])
      expect(managerVersionProblem(CONFIG, objects)).toBe(
        'manager: no container of the Deployment manager in the manifest runs an image tagged ' +
          "1.2.3, the module's version; tag the manager's image with it, or leave out " +
          '--skip-version-validation=false',
      );
  });
});

describe('componentConstructorOf', () => {
  const images = manifestImages([deployment('manager', ['example.io/op:1.2.3'])]).images;
  const constructor = componentConstructorOf(CONFIG, {
    manifestFile: '/src/module/manifest.yaml',
    defaultCRFile: '/src/module/config/default-cr.yaml',
    templateFile: '/out/template.yaml',
    images,
    source: { repoUrl: CONFIG.repository, commit: 'c'.repeat(40) },
    clusterScoped: false,
  }) as { components: Record<string, unknown>[] };

  it('has one component: name, version, provider with the built-by label, labels', () => {
    expect(constructor.components).toHaveLength(1);
    const c = constructor.components[0]!;
    expect(Object.keys(c)).toEqual(['name', 'version', 'provider', 'labels', 'resources', 'sources']);
    expect(c.name).toBe(CONFIG.name);
    expect(c.version).toBe('1.2.3');
    expect(c.provider).toEqual({
      name: 'kyma-project.io',
      labels: [{ name: 'kyma-project.io/built-by', value: 'modulectl', version: 'v1' }],
    });
    expect(c.labels).toEqual([
      { name: 'operator.kyma-project.io/beta', value: 'true', version: 'v1' },
      { name: 'operator.kyma-project.io/internal', value: 'false', version: 'v1' },
      { name: 'operator.kyma-project.io/requiresDowntime', value: 'false', version: 'v1' },
      { name: 'operator.kyma-project.io/is-cluster-scoped', value: 'false', version: 'v1' },
      { name: 'security.kyma-project.io/scan', value: 'enabled', version: 'v1' },
      {
        name: 'cloud.gardener.cnudie/responsibles',
        value: [{ github_hostname: 'github.tools.sap', teamname: 'kyma/jellyfish', type: 'githubTeam' }],
        version: 'v1',
      },
    ]);
  });

  it('has the images, raw-manifest, default-cr and moduletemplate resources, and the git source', () => {
    const c = constructor.components[0]!;
    expect(c.resources).toEqual([
      {
        name: 'op',
        type: 'ociArtifact',
        version: '1.2.3',
        relation: 'external',
        labels: [{ name: 'scan.security.kyma-project.io/type', value: 'third-party-image', version: 'v1' }],
        access: { type: 'ociArtifact', imageReference: 'example.io/op:1.2.3' },
      },
      {
        name: 'raw-manifest',
        type: 'directoryTree',
        version: '1.2.3',
        input: { type: 'dir', path: '/src/module', includeFiles: ['manifest.yaml'] },
      },
      {
        name: 'default-cr',
        type: 'directoryTree',
        version: '1.2.3',
        input: { type: 'dir', path: '/src/module/config', includeFiles: ['default-cr.yaml'] },
      },
      {
        name: 'moduletemplate',
        type: 'PlainText',
        version: '1.2.3',
        input: { type: 'file', path: '/out/template.yaml' },
      },
    ]);
    expect(c.sources).toEqual([
      {
        name: 'module-sources',
        type: 'Github',
        version: '1.2.3',
        access: { type: 'gitHub', repoUrl: CONFIG.repository, commit: 'c'.repeat(40) },
      },
    ]);
  });
});

describe('constructorFile', () => {
  it('names a local file by its absolute path, and writes a downloaded one to a directory of its own', async () => {
    const lines: string[] = [];
    expect(
      await constructorFile({ fileName: 'm.yaml', text: 'x', localFile: 'a/m.yaml' }, 'raw-manifest', (l) =>
        lines.push(l),
      ),
    ).toBe(path.resolve('a/m.yaml'));
    const manifest = await constructorFile({ fileName: 'same.yaml', text: 'kind: A\n' }, 'raw-manifest', (l) =>
      lines.push(l),
    );
    const cr = await constructorFile({ fileName: 'same.yaml', text: 'kind: B\n' }, 'default-cr', (l) => lines.push(l));
    try {
      expect(path.basename(manifest)).toBe('same.yaml');
      expect(path.dirname(manifest)).not.toBe(path.dirname(cr));
      expect(await readFile(manifest, 'utf8')).toBe('kind: A\n');
      expect(await readFile(cr, 'utf8')).toBe('kind: B\n');
      expect(lines).toEqual([
        `raw-manifest: downloaded to ${manifest}, which the constructor names`,
        `default-cr: downloaded to ${cr}, which the constructor names`,
      ]);
    } finally {
      for (const f of [manifest, cr]) await rm(path.dirname(f), { recursive: true, force: true });
    }
  });
});
