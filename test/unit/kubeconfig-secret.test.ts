// A kubeconfig Secret that cannot be read, or whose TLS material cannot be used: the error
// says where (the Secret, its data key, the kubeconfig's entry and field) and what to do, and
// never quotes what it holds, nor OpenSSL's words about it.
import { generateKeyPairSync } from 'node:crypto';
import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { generateCa } from '../../src/localstack/pki';
import { clientFromSecret, TargetClusterError } from '../../src/k8s/target-cluster';

const MARKER = 'SECRET-MARKER-7f3a9c';

function secret(config: string, key = 'config') {
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: 'kc', namespace: 'kcp' },
    data: { [key]: Buffer.from(config).toString('base64') },
  };
}

async function refusal(s: ReturnType<typeof secret>): Promise<Error> {
  const err = await clientFromSecret(s).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(TargetClusterError);
  return err as Error;
}

describe('clientFromSecret', () => {
  it.each([
    [
      'broken YAML next to a token',
      `apiVersion: v1\nusers:\n- name: u\n  user:\n    token: ${MARKER}\n  : [unclosed\n`,
    ],
    ['a token where a mapping belongs', `clusters: ${MARKER}: x: y\n`],
  ])('refuses %s without quoting it', async (_what, config) => {
    const err = await clientFromSecret(secret(config)).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(TargetClusterError);
    expect((err as Error).message).toContain('Secret kcp/kc does not hold a valid kubeconfig');
    expect((err as Error).message).not.toContain(MARKER);
  });

  it('refuses a kubeconfig that runs a command for its credential when the installation forbids it', async () => {
    const config = `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]
users: [{name: u, user: {exec: {apiVersion: client.authentication.k8s.io/v1, command: /bin/true}}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
current-context: c
`;
    const err = await clientFromSecret(secret(config), { allowExec: false }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(TargetClusterError);
    expect((err as Error).message).toBe(
      'Secret kcp/kc: its kubeconfig runs a command for its credential (exec or an auth ' +
        "provider's cmd-path), which this installation forbids (KLM_KUBECONFIG_EXEC=deny)",
    );
  });
});

describe('clientFromSecret: TLS material that cannot be used', () => {
  /** PEM of one key pair (the CA's own certificate and key) and of a key of another pair. */
  let pem: { cert: string; key: string; otherKey: string };
  const b64 = (s: string) => Buffer.from(s).toString('base64');

  beforeAll(async () => {
    const { caCert, caKey } = await generateCa(await mkdtemp(path.join(tmpdir(), 'klm-tls-')));
    const otherKey = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({
      type: 'pkcs8',
      format: 'pem',
    }) as string;
    pem = { cert: await readFile(caCert, 'utf8'), key: await readFile(caKey, 'utf8'), otherKey };
  });

  /** A kubeconfig whose cluster "c" trusts the CA and whose user "admin" has the pair, with `edit` applied. */
  function config(edit: (cluster: Record<string, unknown>, user: Record<string, unknown>) => void): string {
    const cluster: Record<string, unknown> = {
      server: 'https://127.0.0.1:6443',
      'certificate-authority-data': b64(pem.cert),
    };
    const user: Record<string, unknown> = { 'client-certificate-data': b64(pem.cert), 'client-key-data': b64(pem.key) };
    edit(cluster, user);
    return stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'c', cluster }],
      users: [{ name: 'admin', user }],
      contexts: [{ name: 'c', context: { cluster: 'c', user: 'admin' } }],
      'current-context': 'c',
    });
  }

  it('takes usable material', async () => {
    const client = await clientFromSecret(secret(config(() => undefined)));
    client.close();
  });

  const keyFix = "put the user's private key there (PEM, unencrypted, then base64-encoded), and update the Secret";
  it.each<[string, (c: Record<string, unknown>, u: Record<string, unknown>) => void, string]>([
    [
      'a damaged key (OpenSSL: DECODER routines::unsupported)',
      (_c, u) =>
        (u['client-key-data'] = b64(`-----BEGIN PRIVATE KEY-----\n${b64(MARKER)}\n-----END PRIVATE KEY-----\n`)),
      `user "admin" has a client-key-data that is not a private key that can be read (damaged, truncated or of an unsupported type); ${keyFix}`,
    ],
    [
      'a key that is not PEM',
      (_c, u) => (u['client-key-data'] = b64(`${MARKER} not a key`)),
      `user "admin" has a client-key-data that is not PEM after base64 decoding; ${keyFix}`,
    ],
    [
      'PEM text where base64 belongs',
      (_c, u) => (u['client-key-data'] = `-----BEGIN PRIVATE KEY-----\n${MARKER}\n-----END PRIVATE KEY-----`),
      `user "admin" has a client-key-data that holds PEM text, where the field takes it base64-encoded; ${keyFix}`,
    ],
    [
      'an encrypted key',
      (_c, u) =>
        (u['client-key-data'] = b64(
          `-----BEGIN ENCRYPTED PRIVATE KEY-----\n${b64(MARKER)}\n-----END ENCRYPTED PRIVATE KEY-----\n`,
        )),
      `user "admin" has a client-key-data that is an encrypted private key (a kubeconfig has no passphrase for it); ${keyFix}`,
    ],
    [
      'a key of another pair',
      (_c, u) => (u['client-key-data'] = b64(pem.otherKey)),
      'user "admin" has a client-key-data that does not belong to the certificate in its ' +
        'client-certificate-data; put the key and the certificate of one key pair there, and update ' +
        'the Secret',
    ],
    [
      'a damaged client certificate',
      (_c, u) =>
        (u['client-certificate-data'] = b64(
          `-----BEGIN CERTIFICATE-----\n${b64(MARKER)}\n-----END CERTIFICATE-----\n`,
        )),
      'user "admin" has a client-certificate-data that holds a certificate that cannot be read ' +
        "(damaged or truncated); put the user's client certificate there (PEM, then " +
        'base64-encoded), and update the Secret',
    ],
    [
      'a CA that holds no certificate',
      (c) => (c['certificate-authority-data'] = b64(`${MARKER}\n-----BEGIN NOTHING-----\n`)),
      'cluster "c" has a certificate-authority-data that holds no PEM certificate; put the ' +
        "certificate of the CA that signed the API server's certificate there (PEM, then " +
        'base64-encoded), and update the Secret',
    ],
    [
      'a key file that is not there',
      (_c, u) => {
        delete u['client-key-data'];
        u['client-key'] = `/nonexistent/${MARKER}.key`;
      },
      'user "admin" has a client-key that names a file that cannot be read (ENOENT); make it name ' +
        "a file holding the user's private key (PEM, unencrypted), and update the Secret",
    ],
  ])('refuses %s, naming the Secret, its data key, the entry and the field', async (_what, edit, says) => {
    const err = await refusal(secret(config(edit)));
    expect(err.message).toBe(`Secret kcp/kc (data key "config"): in its kubeconfig, ${says}`);
    expect(err.message).not.toMatch(/error:|routines|ERR_OSSL/);
  });

  it('names the data key the kubeconfig is under', async () => {
    const err = await refusal(
      secret(
        config((_c, u) => (u['client-key-data'] = b64('x'))),
        'kubeconfig',
      ),
    );
    expect(err.message).toContain(
      'Secret kcp/kc (data key "kubeconfig"): in its kubeconfig, user "admin" has a client-key-data',
    );
  });

  it('never quotes the material, nor its base64 form', async () => {
    for (const key of [
      b64(`-----BEGIN PRIVATE KEY-----\n${b64(MARKER)}\n-----END PRIVATE KEY-----\n`),
      b64(MARKER),
      MARKER,
    ]) {
      const err = await refusal(secret(config((_c, u) => (u['client-key-data'] = key))));
      for (const form of [MARKER, b64(MARKER), key]) expect(err.message).not.toContain(form);
    }
  });
});
