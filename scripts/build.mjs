// The production build: plain JavaScript in dist/, run with `node` (no tsx at run time), and the
// workflow bundle built ahead of time, which the worker loads instead of bundling at start.
//   dist/workers/main.js   the worker          dist/starter/main.js   the bridge
//   dist/cli/klm.js        the command line    dist/workflow-bundle.js the workflows
//   dist/cli/app/          the web page of klm ui (its script bundled for the browser)
// Each entry is bundled with esbuild (./esbuild-node.mjs: our code and @kubernetes/client-node
// inlined, other npm packages left as imports), under the
// same folder depth as in src/, so that paths it resolves from its own URL (deploy/crds,
// examples/modules) hold. klm's commands that run servers (up, tools, bundle, ui) are imported
// when run: split into chunks beside it (dist/cli/*-HASH.js, the same depth), so that a module
// command does not load the Temporal worker. Last, dist/build.json records when the build began
// (bin/klm.mjs rebuilds when a source is newer) and from which commit (the worker's build id,
// src/workers/build-id.ts, names it). Progress goes to stderr (bin/klm.mjs builds on
// first use, and its stdout is the command's). Plain JavaScript: it runs before anything is compiled.
import { execFileSync } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { build } from 'esbuild';
import { tsImport } from 'tsx/esm/api';
import { nodeBundle } from './esbuild-node.mjs';

const started = Date.now();
const common = {
  outbase: 'src',
  outdir: 'dist',
  ...nodeBundle,
  sourcemap: true,
  logLevel: 'warning',
};
rmSync('dist', { recursive: true, force: true });
console.error('[build] compiling worker, bridge and klm to dist/ ...');
await Promise.all([
  build({ ...common, entryPoints: ['src/workers/main.ts', 'src/starter/main.ts'] }),
  build({ ...common, entryPoints: ['src/cli/klm.ts'], splitting: true, chunkNames: 'cli/[name]-[hash]' }),
]);
console.error('[build] bundling the workflows to dist/workflow-bundle.js ...');
execFileSync(process.execPath, ['--import', 'tsx', 'src/cli/klm.ts', 'bundle', '--out', 'dist/workflow-bundle.js'], {
  stdio: ['ignore', 'ignore', 'inherit'],
});
console.error('[build] bundling the web page to dist/cli/app/ ...');
const { writePage } = await tsImport('../src/cli/ui/page.ts', import.meta.url);
await writePage('dist/cli/app');
// KLM_SOURCE_COMMIT (an image build has no .git), else git's.
const commit = process.env.KLM_SOURCE_COMMIT || sourceCommit();
writeFileSync('dist/build.json', `${JSON.stringify({ started, ...(commit ? { commit } : {}) })}\n`);

function sourceCommit() {
  try {
    return execFileSync('git', ['rev-parse', '--verify', 'HEAD^{commit}'], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    }).trim();
  } catch {
    return undefined;
  }
}
console.error(`[build] done in ${((Date.now() - started) / 1000).toFixed(1)}s`);
