// Installs the npm packages when node_modules is missing or older than the lock file.
// Plain JavaScript on purpose: it runs before anything (tsx, TypeScript) is installed.
import { execSync } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';

const marker = 'node_modules/.package-lock.json';
const stale = !existsSync(marker) || statSync(marker).mtimeMs < statSync('package-lock.json').mtimeMs;
if (stale) {
  console.log('[setup] installing npm packages (npm ci) ...');
  execSync('npm ci --no-audit --no-fund', { stdio: 'inherit' });
}
