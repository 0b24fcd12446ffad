// The documentation stays true to the tree: every relative link resolves (to a file, and to a
// heading for an #anchor into markdown), every doc says first whom it is for, and the
// configuration reference names exactly the environment variables the code reads.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  anchorsOf,
  brokenLinks,
  codeFiles,
  codeVariables,
  githubSlug,
  markdownFiles,
  referenceVariables,
} from '../support/docs';

const root = path.resolve(import.meta.dirname, '../..');
const read = (file: string) => readFileSync(path.join(root, file), 'utf8');

/** Every markdown file a reader follows links in: README, CHANGELOG, docs/ and bench/. */
const docs = ['README.md', 'CHANGELOG.md', ...markdownFiles(root, 'docs'), ...markdownFiles(root, 'bench')];

describe('the link checker', () => {
  it("takes anchors as GitHub makes them: lower case, punctuation and code marks dropped, spaces as '-'", () => {
    expect(githubSlug("The Kyma CLI v3's `kyma module` and klm's")).toBe('the-kyma-cli-v3s-kyma-module-and-klms');
    expect(githubSlug('Outside Kubernetes: `klm up`, `klm run` and the image')).toBe(
      'outside-kubernetes-klm-up-klm-run-and-the-image',
    );
    expect(githubSlug('Capacity for 5,000 runtimes (a plan)')).toBe('capacity-for-5000-runtimes-a-plan');
    expect([...anchorsOf('# A\n\n## Steps\n\n```sh\n# not a heading\n```\n\n## Steps\n')]).toEqual([
      'a',
      'steps',
      'steps-1',
    ]);
  });

  it('finds every broken relative link of a fixture, and only those', () => {
    const broken = brokenLinks(path.join(root, 'test/fixtures/docs-links'), ['index.md']);
    expect(broken.map(({ line, target }) => ({ line, target }))).toEqual([
      { line: 9, target: 'sub/missing.md' },
      { line: 10, target: 'sub/page.md#no-such-heading' },
      { line: 11, target: 'images/missing.png' },
    ]);
    expect(broken[1]?.problem).toBe('sub/page.md has no heading #no-such-heading');
  });
});

describe('the documentation', () => {
  it('has docs in each of user/, operator/ and contributor/', () => {
    for (const folder of ['user', 'operator', 'contributor'])
      expect(markdownFiles(root, `docs/${folder}`).length, folder).toBeGreaterThan(0);
  });

  it('links only to files and headings that exist', () => {
    expect(brokenLinks(root, docs)).toEqual([]);
  });

  it('says first, under its title, whom each page is for', () => {
    const pages = [...markdownFiles(root, 'docs'), 'bench/results/HISTORY.md'];
    const without = pages.filter((file) => !/^# .+\n\nFor /.test(read(file)));
    expect(without).toEqual([]);
  });

  it('keeps the README short: a newcomer reads it whole', () => {
    expect(read('README.md').trimEnd().split('\n').length).toBeLessThanOrEqual(150);
  });
});

describe('the configuration reference (docs/operator/configuration.md)', () => {
  // What the code reads: src/, scripts/ and bin/ searched for KLM_ names and env reads, and the
  // TEMPORAL_ variables the SDK's environment configuration reads for src/infra/temporal-env.ts
  // (codeVariables in test/support/docs.ts says how, and which names it leaves out and why).
  const code = codeVariables(root, codeFiles(root), read('node_modules/@temporalio/envconfig/lib/envconfig-toml.js'));
  const reference = referenceVariables(read('docs/operator/configuration.md'));

  it('finds the variables of the code and of the reference where they are', () => {
    expect(code).toContain('KLM_DRIFT_INTERVAL');
    expect(code).toContain('KLM_REGISTRY_CREDENTIALS');
    expect(code).toContain('TEMPORAL_TLS_SERVER_NAME');
    expect(code).toContain('POD_NAME');
    expect(code).not.toContain('KLM_TIMEOUT');
    expect(code).not.toContain('HOME');
    expect([
      ...referenceVariables('| variable | x |\n| --- | --- |\n| `A_B`, `C` | `NOT_THIS` |\n\n| `D` |\n'),
    ]).toEqual(['A_B', 'C']);
  });

  it('names every variable the code reads', () => {
    expect([...code].filter((v) => !reference.has(v)).sort()).toEqual([]);
  });

  it('names no variable the code does not read', () => {
    expect([...reference].filter((v) => !code.has(v)).sort()).toEqual([]);
  });
});
