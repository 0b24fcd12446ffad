// The Node.js the product and the suite run on: the image's (Dockerfile), which
// scripts/with-node.mjs puts first where the machine's `node` is older. package.json's scripts
// that run the product go through it; under `npm test` this worker, and every child started by
// name (tsx, npx, vitest's workers), run on it.
import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { imageEnv } from '../../bench/image-env';

const pkg = JSON.parse(readFileSync('package.json', 'utf8')) as {
  engines: { node: string };
  scripts: Record<string, string>;
};
/** The lowest major package.json's engines allow (">=24"). */
const minimum = Number(/^>=(\d+)$/.exec(pkg.engines.node)?.[1]);
const imageNode = /^ARG NODE_IMAGE=node:(\d+\.\d+\.\d+)-/m.exec(readFileSync('Dockerfile', 'utf8'))?.[1];
const withNode = /^const IMAGE_NODE = '([^']+)';/m.exec(readFileSync('scripts/with-node.mjs', 'utf8'))?.[1];
const major = (version: string) => Number(version.replace(/^v/, '').split('.')[0]);

/**
 * The young generation's size (MB) over a second of short-lived garbage, in a node with `env`: the
 * median of samples taken through it (a single sample may catch pages V8 holds for a moment
 * beyond the bound: 18 MB once with 4 MB semi-spaces, whose median is 8).
 */
function youngGenerationMb(env: NodeJS.ProcessEnv): number {
  const churn = `const v8 = require('v8'); const t = Date.now(); let keep = []; const sizes = []; let n = 0;
while (Date.now() - t < 1000) { const a = []; for (let i = 0; i < 1000; i++) a.push({ i, s: 'x' + i }); keep.push(a); if (keep.length > 500) keep = [];
  if (++n % 50 === 0) sizes.push(v8.getHeapSpaceStatistics().find((x) => x.space_name === 'new_space').space_size / 2 ** 20); }
sizes.sort((a, b) => a - b);
process.stdout.write(String(sizes[sizes.length >> 1]));`;
  return Number(execFileSync(process.execPath, ['-e', churn], { encoding: 'utf8', env: { ...process.env, ...env } }));
}

describe('the Node.js runtime', () => {
  it("keeps each isolate's young generation at 8 MB in the image (NODE_OPTIONS), where Node 24 lets it grow to 64", () => {
    const image = imageEnv();
    expect(image.NODE_OPTIONS).toBe('--max-semi-space-size=4');
    expect(youngGenerationMb({ NODE_OPTIONS: image.NODE_OPTIONS })).toBeLessThanOrEqual(8);
    expect(youngGenerationMb({ NODE_OPTIONS: '' })).toBeGreaterThan(32);
  });

  it("is the image's in scripts/with-node.mjs, and the image's satisfies engines", () => {
    expect(imageNode).toMatch(/^\d+\.\d+\.\d+$/);
    expect(withNode).toBe(imageNode);
    expect(minimum).toBeGreaterThanOrEqual(24);
    expect(major(imageNode!)).toBeGreaterThanOrEqual(minimum);
  });

  it('is chosen by scripts/with-node.mjs for each script that runs the product, its tests or its build', () => {
    const runsProduct = Object.entries(pkg.scripts).filter(([, line]) => /\b(tsx|vitest run|build\.mjs)\b/.test(line));
    expect(runsProduct.map(([name]) => name)).toEqual(expect.arrayContaining(['start', 'test', 'build', 'tools']));
    const notThrough = runsProduct.filter(([, line]) => !line.startsWith("exec node scripts/with-node.mjs --sh '"));
    expect(notThrough).toEqual([]);
  });

  it('gives the children of a command line the Node it runs on, first on PATH, with the arguments after it, and says which on stderr', () => {
    const run = spawnSync(
      process.execPath,
      ['scripts/with-node.mjs', '--sh', 'node -p "JSON.stringify(process.argv)"', 'one arg', 'two'],
      { encoding: 'utf8', env: { ...process.env, KLM_WITH_NODE: '' } },
    );
    expect(run.status).toBe(0);
    const [execPath, ...args] = JSON.parse(run.stdout) as string[];
    expect(args).toEqual(['one arg', 'two']);
    const version = execFileSync(execPath!, ['--version'], { encoding: 'utf8' }).trim();
    expect(major(version)).toBeGreaterThanOrEqual(minimum);
    expect(run.stderr).toContain(`[with-node] Node.js ${version} (${execPath}`);
    // This worker's Node is recent enough here: it is used as it is.
    if (major(process.version) >= minimum) expect(execPath).toBe(process.execPath);
  });

  it.runIf(process.env.npm_lifecycle_event === 'test')(
    'runs under npm test on Node 24 or newer, as every child started by name does',
    () => {
      expect(major(process.version)).toBeGreaterThanOrEqual(minimum);
      expect(execFileSync('node', ['--version'], { encoding: 'utf8' }).trim()).toBe(process.version);
    },
  );
});
