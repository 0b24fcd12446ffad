// Registry credentials for klm as Docker keeps them in $DOCKER_CONFIG/config.json (default
// ~/.docker/config.json): a credential helper for the host (`credHelpers`, as
// `gcloud auth configure-docker` writes it), else the config's credential store (`credsStore`),
// else the `auths` `docker login` writes. A helper runs once per host and process
// (src/cli/docker-credential-helper.ts); when it has no entry for the host, the `auths` entry is
// used if there is one (Docker would go anonymous), else anonymous access.
import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import path from 'node:path';
import { parseDockerConfig, registryHostOf, type Credentials } from '../oci/auth';
import type { CredentialSource } from '../oci/registries';
import { helperCredentials } from './docker-credential-helper';
import { Refused } from './output';

interface DockerConfig {
  auths?: unknown;
  credHelpers?: unknown;
  credsStore?: unknown;
}

/** `credHelpers` by registry host; names that are no helper name are left out. */
function helpersOf(doc: DockerConfig): Map<string, string> {
  const out = new Map<string, string>();
  if (doc.credHelpers && typeof doc.credHelpers === 'object')
    for (const [key, name] of Object.entries(doc.credHelpers as Record<string, unknown>))
      if (typeof name === 'string' && name) out.set(registryHostOf(key), name);
  return out;
}

export function dockerConfigCredentials(env: NodeJS.ProcessEnv = process.env): CredentialSource | undefined {
  const file = path.join(env.DOCKER_CONFIG ?? path.join(homedir(), '.docker'), 'config.json');
  if (!existsSync(file)) return undefined;
  let text: string;
  let doc: DockerConfig;
  try {
    text = readFileSync(file, 'utf8');
    doc = JSON.parse(text) as DockerConfig;
  } catch {
    // JSON.parse quotes the text around an error, and that may be a password: say only where.
    throw new Refused(
      `the Docker config ${file} cannot be read as JSON: fix or remove it (klm reads registry credentials from its "auths")`,
    );
  }
  if (!doc || typeof doc !== 'object') return undefined;
  const helpers = helpersOf(doc);
  const store = typeof doc.credsStore === 'string' && doc.credsStore ? doc.credsStore : undefined;
  if (!doc.auths && !helpers.size && !store) return undefined;
  const auths = doc.auths ? parseDockerConfig(text) : new Map<string, Credentials>();
  const asked = new Map<string, Promise<Credentials | undefined>>();
  const where = `the Docker config ${file}`;
  return {
    describe: where,
    credentialsFor: (host) => {
      const key = host.toLowerCase();
      const helper = helpers.get(key) ?? store;
      if (!helper) return Promise.resolve(auths.get(key));
      let answer = asked.get(key);
      if (!answer) {
        answer = helperCredentials(helper, key, where).then((c) => c ?? auths.get(key));
        asked.set(key, answer);
      }
      return answer;
    },
  };
}
