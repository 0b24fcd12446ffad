// Registry credentials for klm as Docker and most registry tools keep them: the `auths` of
// $DOCKER_CONFIG/config.json (default ~/.docker/config.json), written by `docker login`. A
// credential store or helper (credsStore, credHelpers) klm does not run; anonymous access then.
import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import path from 'node:path';
import { parseDockerConfig } from '../oci/auth';
import type { CredentialSource } from '../oci/registries';
import { Refused } from './output';

export function dockerConfigCredentials(env: NodeJS.ProcessEnv = process.env): CredentialSource | undefined {
  const file = path.join(env.DOCKER_CONFIG ?? path.join(homedir(), '.docker'), 'config.json');
  if (!existsSync(file)) return undefined;
  let text: string;
  let doc: { auths?: unknown };
  try {
    text = readFileSync(file, 'utf8');
    doc = JSON.parse(text) as { auths?: unknown };
  } catch {
    // JSON.parse quotes the text around an error, and that may be a password: say only where.
    throw new Refused(
      `the Docker config ${file} cannot be read as JSON: fix or remove it (klm reads registry credentials from its "auths")`,
    );
  }
  if (!doc || typeof doc !== 'object' || !doc.auths) return undefined;
  const auths = parseDockerConfig(text);
  return {
    describe: `the Docker config ${file}`,
    credentialsFor: (host) => Promise.resolve(auths.get(host.toLowerCase())),
  };
}
