// How the worker, the bridge and the CLI reach Temporal: the SDK's environment configuration.
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { temporalFromEnv } from '../../src/infra/temporal-env';

const HOME = { HOME: '/nonexistent-home' };

describe('the Temporal connection from the environment', () => {
  it('defaults to the local dev server, plaintext, namespace default', () => {
    expect(temporalFromEnv(HOME)).toEqual({
      connectionOptions: { address: '127.0.0.1:7233' },
      namespace: 'default',
      describe: '127.0.0.1:7233 (plaintext)',
    });
  });

  it('takes a client certificate, a server CA and a server name (mTLS)', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'klm-tls-'));
    for (const f of ['c.crt', 'c.key', 'ca.crt']) await writeFile(path.join(dir, f), `-----${f}-----`);
    const t = temporalFromEnv({
      ...HOME,
      TEMPORAL_ADDRESS: 'temporal.example:7233',
      TEMPORAL_NAMESPACE: 'fleet',
      TEMPORAL_TLS_CLIENT_CERT_PATH: path.join(dir, 'c.crt'),
      TEMPORAL_TLS_CLIENT_KEY_PATH: path.join(dir, 'c.key'),
      TEMPORAL_TLS_SERVER_CA_CERT_PATH: path.join(dir, 'ca.crt'),
      TEMPORAL_TLS_SERVER_NAME: 'temporal',
    });
    expect(t.namespace).toBe('fleet');
    expect(t.connectionOptions.address).toBe('temporal.example:7233');
    const tls = t.connectionOptions.tls as {
      serverNameOverride?: string;
      clientCertPair?: { crt: Uint8Array; key: Uint8Array };
      serverRootCACertificate?: Uint8Array;
    };
    const text = (b?: Uint8Array) => (b ? Buffer.from(b).toString() : undefined);
    expect(tls.serverNameOverride).toBe('temporal');
    expect([text(tls.clientCertPair?.crt), text(tls.clientCertPair?.key), text(tls.serverRootCACertificate)]).toEqual([
      '-----c.crt-----',
      '-----c.key-----',
      '-----ca.crt-----',
    ]);
    expect(t.describe).toBe('temporal.example:7233 (TLS with a client certificate)');
  });

  it('takes an API key (with TLS) and never shows it', () => {
    const t = temporalFromEnv({
      ...HOME,
      TEMPORAL_ADDRESS: 'ns.acct.tmprl.cloud:7233',
      TEMPORAL_API_KEY: 'key-MARKER-3f9a',
    });
    expect(t.connectionOptions).toMatchObject({ apiKey: 'key-MARKER-3f9a', tls: true });
    expect(t.describe).toBe('ns.acct.tmprl.cloud:7233 (TLS, API key)');
    expect(t.describe).not.toContain('MARKER');
  });

  it('reads a profile from TEMPORAL_CONFIG_FILE, the environment overriding it', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'klm-profile-'));
    const file = path.join(dir, 'temporal.toml');
    await writeFile(file, '[profile.prod]\naddress = "prod.example:7233"\nnamespace = "prod"\n');
    expect(temporalFromEnv({ ...HOME, TEMPORAL_CONFIG_FILE: file, TEMPORAL_PROFILE: 'prod' })).toMatchObject({
      namespace: 'prod',
      connectionOptions: { address: 'prod.example:7233' },
    });
    expect(
      temporalFromEnv({ ...HOME, TEMPORAL_CONFIG_FILE: file, TEMPORAL_PROFILE: 'prod', TEMPORAL_NAMESPACE: 'other' })
        .namespace,
    ).toBe('other');
  });

  it('says which file it cannot read, and quotes no line of a broken profile file', async () => {
    expect(() =>
      temporalFromEnv({
        ...HOME,
        TEMPORAL_TLS_CLIENT_CERT_PATH: '/nonexistent/c.crt',
        TEMPORAL_TLS_CLIENT_KEY_PATH: '/nonexistent/c.key',
      }),
    ).toThrow(/cannot read \/nonexistent\/c\.(crt|key) \(ENOENT\)/);
    const dir = await mkdtemp(path.join(tmpdir(), 'klm-profile-'));
    const file = path.join(dir, 'temporal.toml');
    await writeFile(file, '[profile.default]\napi_key = "secret-MARKER-77"\naddress = = broken\n');
    let message = '';
    try {
      temporalFromEnv({ ...HOME, TEMPORAL_CONFIG_FILE: file });
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).toContain('Temporal connection configuration');
    expect(message).not.toContain('MARKER');
  });

  it('says so when a named profile does not exist', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'klm-profile-'));
    const file = path.join(dir, 'temporal.toml');
    await writeFile(file, '[profile.default]\naddress = "a:1"\n');
    expect(() => temporalFromEnv({ ...HOME, TEMPORAL_CONFIG_FILE: file, TEMPORAL_PROFILE: 'nosuch' })).toThrow(
      "Profile 'nosuch' not found",
    );
  });
});
