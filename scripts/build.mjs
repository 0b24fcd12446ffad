// The production build: plain JavaScript in dist/, run with `node` (no tsx at run time), and the
// workflow bundle built ahead of time, which the worker loads instead of bundling at start.
//   dist/workers/main.js   the worker          dist/starter/main.js   the bridge
//   dist/cli/klm.js        the command line    dist/workflow-bundle.js the workflows
//   dist/cli/app/          the web page of klm ui (its script bundled for the browser)
// Each entry is bundled with esbuild (our code inlined, npm packages left as imports), under the
// same folder depth as in src/, so that paths it resolves from its own URL (deploy/crds,
// examples/modules) hold. Plain JavaScript: it runs before anything is compiled.
import { execFileSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { build } from 'esbuild';
import { tsImport } from 'tsx/esm/api';

const started = Date.now();
rmSync('dist', { recursive: true, force: true });
console.log('[build] compiling worker, bridge and klm to dist/ ...');
await build({
  entryPoints: ['src/workers/main.ts', 'src/starter/main.ts', 'src/cli/klm.ts'],
  outbase: 'src',
  outdir: 'dist',
  bundle: true,
  packages: 'external',
  platform: 'node',
  format: 'esm',
  target: 'node20',
  sourcemap: true,
  logLevel: 'warning',
});
console.log('[build] bundling the workflows to dist/workflow-bundle.js ...');
execFileSync(process.execPath, ['--import', 'tsx', 'src/cli/klm.ts', 'bundle', '--out', 'dist/workflow-bundle.js'], {
  stdio: 'inherit',
});
console.log('[build] bundling the web page to dist/cli/app/ ...');
const { writePage } = await tsImport('../src/cli/ui/page.ts', import.meta.url);
await writePage('dist/cli/app');
console.log(`[build] done in ${((Date.now() - started) / 1000).toFixed(1)}s`);
