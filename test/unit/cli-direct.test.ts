// The pure parts of klm's direct installs and community catalog: which version is the highest,
// which version a manager runs, what a community catalog file may hold, how a link is shown.
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { readCommunityCatalog } from '../../src/cli/community-catalog';
import { runningVersionOf } from '../../src/cli/direct-status';
import { shownLink } from '../../src/cli/module-source';
import { highestVersion } from '../../src/cli/module-templates';

const manager = (o: { annotations?: Record<string, string>; labels?: Record<string, string>; image?: string }) => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: {
    name: 'm',
    ...(o.annotations ? { annotations: o.annotations } : {}),
    ...(o.labels ? { labels: o.labels } : {}),
  },
  spec: {
    template: {
      spec: {
        containers: [
          { name: 'sidecar', image: 'proxy:9.9.9' },
          { name: 'manager', image: o.image ?? 'r.example/op@sha256:abc' },
        ],
      },
    },
  },
});

describe('direct installs', () => {
  it('takes the highest release, a pre-release only when there is nothing else', () => {
    expect(highestVersion(['1.2.0', '1.10.0', '1.9.9', '2.0.0-rc.1'])).toBe('1.10.0');
    expect(highestVersion(['2.0.0-rc.1', '2.0.0-rc.2'])).toBe('2.0.0-rc.2');
  });

  it("reads the manager's version from klm's stamp, else app.kubernetes.io/version, else the manager container's image tag", () => {
    expect(
      runningVersionOf(
        manager({
          annotations: { 'operator.kyma-project.io/module-version': '1.1.0' },
          labels: { 'app.kubernetes.io/version': '0.9' },
          image: 'op:0.8.0',
        }),
      ),
    ).toBe('1.1.0');
    expect(runningVersionOf(manager({ labels: { 'app.kubernetes.io/version': '0.9.0' }, image: 'op:0.8.0' }))).toBe(
      '0.9.0',
    );
    expect(runningVersionOf(manager({ image: 'registry.example:5000/team/op:v0.8.0' }))).toBe('0.8.0');
    expect(runningVersionOf(manager({}))).toBeUndefined();
  });

  it('shows a link without its user and password', () => {
    expect(shownLink('https://user:s3cret@example.org/m.yaml')).toBe('https://example.org/m.yaml');
    expect(shownLink('not a url')).not.toContain('not a url');
  });
});

describe('a community catalog', () => {
  const template = (name: string, version: string) => ({
    apiVersion: 'operator.kyma-project.io/v1beta2',
    kind: 'ModuleTemplate',
    metadata: { name: `${name}-${version}` },
    spec: { moduleName: name, version, descriptor: {} },
  });
  const file = async (name: string, text: string) => {
    const f = path.join(await mkdtemp(path.join(tmpdir(), 'klm-catalog-')), name);
    await writeFile(f, text);
    return f;
  };

  it('is read as the JSON array of all-modules.json or as YAML documents', async () => {
    const json = await readCommunityCatalog(
      await file('all-modules.json', JSON.stringify([template('a', '1.0.0'), template('b', '0.1.0')])),
    );
    expect(json.map((t) => t.metadata.name)).toEqual(['a-1.0.0', 'b-0.1.0']);
    const yaml = await readCommunityCatalog(
      await file(
        'all-modules.yaml',
        'apiVersion: operator.kyma-project.io/v1beta2\nkind: ModuleTemplate\nmetadata: {name: ' +
          'a-1.0.0}\nspec: {moduleName: a, version: 1.0.0, descriptor: {}}\n---\n',
      ),
    );
    expect(yaml.map((t) => t.spec.version)).toEqual(['1.0.0']);
  });

  it('names every entry that is no module version, and a file that cannot be read', async () => {
    const bad = await file(
      'bad.json',
      JSON.stringify([
        template('a', '1.0.0'),
        { kind: 'ConfigMap', metadata: {} },
        { kind: 'ModuleTemplate', metadata: { name: 'x' }, spec: { moduleName: 'x' } },
      ]),
    );
    await expect(readCommunityCatalog(bad)).rejects.toThrow(
      `the community catalog ${bad} holds entries that are no module versions: entry 2 lacks ` +
        `kind: ModuleTemplate, metadata.name, spec.moduleName, spec.version; entry 3 (x) lacks ` +
        `spec.version`,
    );
    await expect(readCommunityCatalog(await file('x.json', '[{'))).rejects.toThrow('is not valid JSON');
    await expect(readCommunityCatalog('/nonexistent/catalog.json')).rejects.toThrow(
      'the community catalog /nonexistent/catalog.json cannot be read: name a file or an http(s) URL with --community-catalog',
    );
  });
});
