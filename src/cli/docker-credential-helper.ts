// A Docker credential helper run as Docker runs it (docker-credential-helpers' client):
// `docker-credential-<name> get`, the server URL on stdin, `{"ServerURL", "Username", "Secret"}`
// on stdout. `gcloud auth configure-docker`, the ECR and ACR helpers and the desktop keychains
// (credsStore) answer this way. A helper's output and its stderr may hold the secret, so no
// message quotes them: they name the helper, the host and the exit code.
import { execFile } from 'node:child_process';
import type { Credentials } from '../oci/auth';

/** How long a helper may take (gcloud refreshes a token over the network). */
export const HELPER_TIMEOUT_MS = 20_000;

/** What a helper prints on stdout when it has no entry for the server (the helpers' shared text). */
const NOT_FOUND = 'credentials not found in native keychain';

/** Username a helper gives with an identity token (an OAuth2 refresh token) in Secret. */
const IDENTITY_TOKEN_USER = '<token>';

/** The server URL Docker keys a registry by: Docker Hub's old index URL, any other host as it is. */
export function serverUrlOf(host: string): string {
  return ['docker.io', 'index.docker.io', 'registry-1.docker.io'].includes(host) ? 'https://index.docker.io/v1/' : host;
}

interface Ran {
  code: number | string | null;
  killed: boolean;
  stdout: string;
}

function run(command: string, input: string, timeoutMs: number): Promise<Ran> {
  return new Promise((resolve) => {
    const child = execFile(
      command,
      ['get'],
      { timeout: timeoutMs, maxBuffer: 1024 * 1024, windowsHide: true },
      (err, stdout) => {
        const e = err as (NodeJS.ErrnoException & { killed?: boolean }) | null;
        resolve({ code: e ? (e.code ?? null) : 0, killed: Boolean(e?.killed), stdout: String(stdout) });
      },
    );
    // A helper that exits without reading stdin makes the write fail (EPIPE): its exit code says what happened.
    child.stdin?.on('error', () => undefined);
    child.stdin?.end(input);
  });
}

/**
 * The credentials helper `name` keeps for `host`; undefined when it has none. `where`: the Docker
 * config that names the helper (for messages).
 */
export async function helperCredentials(
  name: string,
  host: string,
  where: string,
  timeoutMs = HELPER_TIMEOUT_MS,
): Promise<Credentials | undefined> {
  const command = `docker-credential-${name}`;
  const ran = await run(command, serverUrlOf(host), timeoutMs);
  if (ran.code === 'ENOENT')
    throw new Error(
      `${where} names the credential helper ${command} for ${host}, which is not on PATH: install it, or remove it from the config's credHelpers/credsStore`,
    );
  if (ran.killed)
    throw new Error(`the credential helper ${command} gave no answer for ${host} within ${timeoutMs / 1000} s`);
  if (ran.code !== 0) {
    if (ran.stdout.trim() === NOT_FOUND) return undefined;
    throw new Error(
      `the credential helper ${command} failed for ${host} ` +
        `(${typeof ran.code === 'number' ? `exit code ${ran.code}` : String(ran.code)}); run \`echo ` +
        `${serverUrlOf(host)} | ${command} get\` to see why`,
    );
  }
  let answer: { Username?: unknown; Secret?: unknown };
  try {
    answer = JSON.parse(ran.stdout) as typeof answer;
  } catch {
    throw new Error(`the credential helper ${command} answered for ${host} with no JSON {Username, Secret}`);
  }
  const { Username: username, Secret: secret } = answer ?? {};
  if (typeof username !== 'string' || typeof secret !== 'string' || !secret)
    throw new Error(`the credential helper ${command} answered for ${host} without a Username and a Secret`);
  if (username === IDENTITY_TOKEN_USER)
    throw new Error(
      `the credential helper ${command} gave an identity token for ${host}; klm signs in with a username and password only (the token exchange is not built)`,
    );
  return { username, password: secret };
}
