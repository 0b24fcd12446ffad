// The environment the image gives its processes (the Dockerfile's final ENV lines), for the
// processes the bench and the read-only pod test start as the image runs them.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const DOCKERFILE = fileURLToPath(new URL('../Dockerfile', import.meta.url));

/** NAME=value of each `ENV NAME=value` line of the Dockerfile's last stage. */
export function imageEnv(dockerfile = readFileSync(DOCKERFILE, 'utf8')): Record<string, string> {
  const last = dockerfile.slice(dockerfile.lastIndexOf('\nFROM '));
  const env: Record<string, string> = {};
  for (const [, name, value] of last.matchAll(/^ENV ([A-Z_][A-Z0-9_]*)=(\S+)$/gm)) env[name!] = value!;
  return env;
}
