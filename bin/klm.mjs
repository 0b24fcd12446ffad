#!/usr/bin/env node
// `klm`: package.json's bin, for `npx klm` in a checkout, `npm run klm`, and a global install
// (`npm install -g .`, which links to this checkout). It installs the npm packages when they are
// missing or stale (scripts/ensure-deps.mjs, as `npm start` and `npm test` do), and runs the
// built command line, dist/cli/klm.js, with plain node: no TypeScript compiled per call. The
// build (scripts/build.mjs) is made on first use, and made again, saying so on stderr, whenever
// a source (src/, the lock file, the build script) is newer than the build's start (dist/build.json):
// a build older than the sources never runs. A copy without sources (an image) runs its dist as it is.
// Plain JavaScript: it runs before anything is installed or compiled.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { constants } from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const at = (...parts) => path.join(root, ...parts);
const entry = at('dist', 'cli', 'klm.js');

/** When the build in dist/ began, or undefined when there is none that finished. */
function builtAt() {
  try {
    return existsSync(entry) ? JSON.parse(readFileSync(at('dist', 'build.json'), 'utf8')).started : undefined;
  } catch {
    return undefined;
  }
}

/** The newest modification time of what the build reads. */
function sourcesChangedAt() {
  const files = readdirSync(at('src'), { recursive: true, withFileTypes: true })
    .filter((f) => f.isFile())
    .map((f) => path.join(f.parentPath ?? f.path, f.name));
  return Math.max(...[...files, at('package-lock.json'), at('scripts', 'build.mjs')].map((f) => statSync(f).mtimeMs));
}

/** Why dist/ must be built, or undefined when it is up to date. */
function buildReason() {
  if (!existsSync(at('src'))) return undefined;
  const started = builtAt();
  if (started === undefined) return 'it has not been built in this checkout yet';
  if (sourcesChangedAt() > started) return 'a source changed since the last build';
  return undefined;
}

/**
 * On a Node older than package.json's engines (its packages need 24: undici, under the
 * Kubernetes client, fails on 20 at import), this checkout runs itself again on the image's Node,
 * as `npm start` does (scripts/with-node.mjs: fetched once, said on stderr).
 */
function runOnImageNode() {
  const child = spawn(
    process.execPath,
    [at('scripts', 'with-node.mjs'), 'node', fileURLToPath(import.meta.url), ...process.argv.slice(2)],
    { stdio: 'inherit' },
  );
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(signal, () => child.kill(signal));
  child.on('exit', (code, signal) => process.exit(code ?? 128 + (constants.signals[signal] ?? 0)));
}

const minimum = Number(/\d+/.exec(JSON.parse(readFileSync(at('package.json'), 'utf8')).engines?.node ?? '')?.[0]);
if (Number(process.versions.node.split('.')[0]) < minimum && existsSync(at('scripts', 'with-node.mjs'))) {
  runOnImageNode();
} else {
  await main();
}

async function main() {
  if (existsSync(at('package-lock.json'))) await import('../scripts/ensure-deps.mjs');
  const reason = buildReason();
  if (reason) {
    console.error(`klm: building dist/ (${reason}): once, a few seconds ...`);
    const built = spawnSync(process.execPath, [at('scripts', 'build.mjs')], {
      cwd: root,
      stdio: ['ignore', 2, 'inherit'],
    });
    if (built.status !== 0) {
      console.error('klm: the build failed (see above); `npm run build` runs it again');
      process.exit(built.status ?? 1);
    }
  }
  await import(pathToFileURL(entry).href);
}
