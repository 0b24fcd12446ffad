// Installs the npm packages when node_modules is missing or older than the lock file.
// Plain JavaScript on purpose: it runs before anything (tsx, TypeScript) is installed. It works
// on the checkout it belongs to, wherever it is called from (bin/klm.mjs imports it), and
// prints on stderr only: stdout is klm's output (`klm module list -o json`).
import { execSync } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const marker = path.join(root, 'node_modules', '.package-lock.json');
const stale = !existsSync(marker) || statSync(marker).mtimeMs < statSync(path.join(root, 'package-lock.json')).mtimeMs;
if (stale) {
  console.error('[setup] installing npm packages (npm ci) ...');
  // --loglevel: the repository's .npmrc quiets npm's script banners, not this install's messages.
  execSync('npm ci --no-audit --no-fund --loglevel=notice', { cwd: root, stdio: ['inherit', 2, 'inherit'] });
}
