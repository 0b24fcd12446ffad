// A Docker credential helper for tests: `docker-credential-<name>`, a shell script in a directory
// of the test's own (put it first on PATH), answering as the real helpers do: the credentials
// for the one server URL it knows, "credentials not found in native keychain" (exit 1) for any
// other; or failing with a marker on stderr (which no klm output may show); or hanging.
import { chmod, writeFile } from 'node:fs/promises';
import path from 'node:path';

export type HelperBehaviour =
  | { answers: { serverUrl: string; username: string; secret: string } }
  | { fails: { exitCode: number; stderr: string } }
  | { hangs: true };

const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

/** Writes `docker-credential-<name>` into `dir`; returns its path. */
export async function writeCredentialHelper(dir: string, name: string, b: HelperBehaviour): Promise<string> {
  let body: string;
  if ('answers' in b) {
    const json = JSON.stringify({
      ServerURL: b.answers.serverUrl,
      Username: b.answers.username,
      Secret: b.answers.secret,
    });
    body = [
      'server=$(cat)',
      `if [ "$1" = get ] && [ "$server" = ${quote(b.answers.serverUrl)} ]; then printf '%s' ${quote(json)}; exit 0; fi`,
      "printf 'credentials not found in native keychain'; exit 1",
    ].join('\n');
  } else if ('fails' in b) {
    body = `cat >/dev/null\nprintf '%s\\n' ${quote(b.fails.stderr)} >&2\nexit ${b.fails.exitCode}`;
  } else {
    body = 'exec sleep 30';
  }
  const file = path.join(dir, `docker-credential-${name}`);
  await writeFile(file, `#!/bin/sh\n${body}\n`);
  await chmod(file, 0o755);
  return file;
}
