// Registry credentials from the Docker config as Docker finds them: a credHelpers entry for the
// host, else the credsStore, else the auths; each helper a real process (a script on PATH) that
// gets the server URL on stdin. A helper that fails, hangs or is missing is an error naming the
// helper and the host, never quoting what it printed (it may be the secret).
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dockerConfigCredentials } from '../../src/cli/docker-credentials';
import { helperCredentials, serverUrlOf } from '../../src/cli/docker-credential-helper';
import { writeCredentialHelper } from '../support/credential-helper';

const SECRET = 'helper-secret-5d1c8e';
const MARKER = 'STDERR-MARKER-with-secret-9a7f';

describe('Docker credential helpers', () => {
  let dir: string;
  let oldPath: string | undefined;

  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'klm-credential-helpers-'));
    await writeCredentialHelper(dir, 'test', {
      answers: { serverUrl: 'registry.example.io:5000', username: 'helper-user', secret: SECRET },
    });
    await writeCredentialHelper(dir, 'store', {
      answers: { serverUrl: 'https://index.docker.io/v1/', username: 'hub-user', secret: SECRET },
    });
    await writeCredentialHelper(dir, 'broken', { fails: { exitCode: 3, stderr: `${MARKER} ${SECRET}` } });
    await writeCredentialHelper(dir, 'slow', { hangs: true });
    await writeCredentialHelper(dir, 'token', {
      answers: { serverUrl: 'acr.example.io', username: '<token>', secret: SECRET },
    });
    oldPath = process.env.PATH;
    process.env.PATH = `${dir}${path.delimiter}${oldPath ?? ''}`;
  });

  afterAll(async () => {
    process.env.PATH = oldPath;
    await rm(dir, { recursive: true, force: true });
  });

  async function source(config: object) {
    const configDir = await mkdtemp(path.join(dir, 'config-'));
    await writeFile(path.join(configDir, 'config.json'), JSON.stringify(config));
    return dockerConfigCredentials({ DOCKER_CONFIG: configDir })!;
  }

  it('runs the credHelpers entry of the host with the server URL on stdin', async () => {
    const s = await source({ credHelpers: { 'registry.example.io:5000': 'test' }, credsStore: 'broken' });
    expect(await s.credentialsFor('registry.example.io:5000')).toEqual({ username: 'helper-user', password: SECRET });
  });

  it('runs the credsStore for hosts without a helper; Docker Hub by its index URL', async () => {
    const s = await source({ credsStore: 'store' });
    expect(serverUrlOf('registry-1.docker.io')).toBe('https://index.docker.io/v1/');
    expect(await s.credentialsFor('registry-1.docker.io')).toEqual({ username: 'hub-user', password: SECRET });
  });

  it('uses the auths entry when the helper has none, and goes anonymous when neither has one', async () => {
    const auth = Buffer.from('file-user:file-password').toString('base64');
    const s = await source({ credsStore: 'test', auths: { 'other.example.io': { auth } } });
    expect(await s.credentialsFor('other.example.io')).toEqual({ username: 'file-user', password: 'file-password' });
    expect(await s.credentialsFor('third.example.io')).toBeUndefined();
  });

  it('says which helper failed for which host and its exit code, quoting none of its output', async () => {
    const s = await source({ credHelpers: { 'registry.example.io': 'broken' } });
    const err = (await s.credentialsFor('registry.example.io').catch((e: unknown) => e)) as Error;
    expect(err.message).toContain(
      'the credential helper docker-credential-broken failed for registry.example.io (exit code 3)',
    );
    expect(err.message).not.toContain(MARKER);
    expect(err.message).not.toContain(SECRET);
  });

  it('bounds a helper in time, and says when it is not on PATH', async () => {
    await expect(helperCredentials('slow', 'registry.example.io', 'the config', 300)).rejects.toThrow(
      'the credential helper docker-credential-slow gave no answer for registry.example.io within 0.3 s',
    );
    await expect(helperCredentials('missing', 'registry.example.io', 'the config')).rejects.toThrow(
      'the config names the credential helper docker-credential-missing for registry.example.io, which is not on PATH',
    );
  });

  it('refuses an identity token (Username <token>) without showing it', async () => {
    const err = (await helperCredentials('token', 'acr.example.io', 'the config').catch((e: unknown) => e)) as Error;
    expect(err.message).toContain('gave an identity token for acr.example.io');
    expect(err.message).not.toContain(SECRET);
  });
});
