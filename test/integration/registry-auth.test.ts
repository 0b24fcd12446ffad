// A registry as users have them: HTTPS with a private CA and token auth (Debian's
// docker-registry and our token service), credentials from a dockerconfigjson Secret that the
// worker reads from the control plane. Modules install through it; a wrong password is a
// typed Error that names the Secret and shows the password nowhere; fixing the Secret heals.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Manifest } from '../../src/api/manifest';
import { manifestName } from '../../src/api/names';
import { API_VERSION, type KubeObject } from '../../src/api/shared';
import { startAuthRegistry, type AuthRegistry } from '../../src/localstack/registry-token';
import { toolPaths } from '../../src/localstack/tools';
import { Registries } from '../../src/oci/registries';
import { eventually, getKyma, kymaInState, kymaObject, useKlm, type Klm } from '../support/klm';
import { uniqueName } from '../support/stack';

const USER = 'klm-reader';
const PASSWORD = 'Pa55-correct-horse-7f3a';
const WRONG = 'Wr0ng-battery-staple-91c2';

function dockerConfigSecret(namespace: string, name: string, registry: string, password: string): KubeObject {
  const auth = Buffer.from(`${USER}:${password}`).toString('base64');
  const json = JSON.stringify({ auths: { [registry]: { username: USER, password, auth } } });
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name, namespace },
    type: 'kubernetes.io/dockerconfigjson',
    data: { '.dockerconfigjson': Buffer.from(json).toString('base64') },
  };
}

describe('a private registry with TLS and token auth', () => {
  let dir: string;
  let reg: AuthRegistry;
  let publisher: Registries;
  // The Secret lives in a namespace of its own, as upstream's lives in kcp-system.
  const secretNamespace = uniqueName('kcp');
  const secretName = 'registry-cred';

  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'klm-registry-auth-'));
    reg = await startAuthRegistry(toolPaths().registry, dir, { user: { username: USER, password: PASSWORD } });
    publisher = new Registries({
      caFile: reg.caCert,
      credentials: {
        describe: 'the test publisher',
        credentialsFor: () => Promise.resolve({ username: USER, password: PASSWORD }),
      },
    });
  });

  const klm = useKlm(() => ({
    settings: { installRetryMs: 2000 },
    registry: { caFile: reg.caCert, insecureHosts: [], credSecret: `${secretNamespace}/${secretName}` },
    samples: { registryHost: reg.registry.host, client: publisher.client(reg.registry.host) },
  }));

  beforeAll(async () => {
    await klm().kube.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: secretNamespace } });
    await klm().kube.apply(dockerConfigSecret(secretNamespace, secretName, reg.registry.host, PASSWORD));
  });

  afterAll(async () => {
    await reg?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  async function moduleStatus(k: Klm, kyma: string, module: string) {
    return (await getKyma(k, kyma))?.status?.modules?.find((m) => m.name === module);
  }

  it('refuses anonymous pulls (the registry really requires credentials)', async () => {
    const err = await new Registries({ caFile: reg.caCert })
      .client(reg.registry.host)
      .getManifest('component-descriptors/kyma-project.io/module/greeter', '1.0.0')
      .then(
        () => undefined,
        (e: Error & { reason?: string }) => e,
      );
    expect(err?.reason).toBe('RegistryCredentialsRefused');
  });

  it('does not trust its certificate without the CA, and says what to configure', async () => {
    const err = await new Registries()
      .client(reg.registry.host)
      .getManifest('component-descriptors/kyma-project.io/module/greeter', '1.0.0')
      .then(
        () => undefined,
        (e: Error & { reason?: string }) => e,
      );
    expect(err?.reason).toBe('RegistryUnavailable');
    expect(err?.message).toContain('KLM_REGISTRY_CA_FILE');
  });

  it('installs a module from it when the worker trusts the CA and has the Secret', async () => {
    const name = uniqueName('kyma');
    await klm().kube.create(kymaObject(klm().namespace, name, { channel: 'regular', modules: [{ name: 'greeter' }] }));
    const kyma = await kymaInState(klm(), name, 'Ready', 90_000);
    expect(kyma.status?.modules?.[0]).toMatchObject({ name: 'greeter', state: 'Ready', version: '1.0.0' });
    expect(reg.tokens.counts.issued).toBeGreaterThan(0);
  });

  it('shows refused credentials as a typed Error naming the Secret, never the password, and heals when the Secret is fixed', async () => {
    const refusedBefore = reg.tokens.counts.refused;
    await klm().kube.apply(dockerConfigSecret(secretNamespace, secretName, reg.registry.host, WRONG));
    // The worker learns of the change by its watch: wait until it has, so the install below
    // cannot race it. counter's layer has not been fetched yet: its install needs the registry.
    await eventually(
      'the worker to see the changed Secret',
      async () => (await klm().worker!.registryCredentials!.credentialsFor(reg.registry.host))?.password === WRONG,
      30_000,
    );
    const name = uniqueName('kyma');
    await klm().kube.create(kymaObject(klm().namespace, name, { channel: 'regular', modules: [{ name: 'counter' }] }));
    const kyma = await kymaInState(klm(), name, 'Error', 90_000);
    const m = kyma.status?.modules?.find((x) => x.name === 'counter');
    expect(m?.state).toBe('Error');
    expect(m?.message).toContain('refused the credentials');
    expect(m?.message).toContain(`Secret ${secretNamespace}/${secretName}`);
    const manifest = await klm().kube.get<Manifest & KubeObject>(
      API_VERSION,
      'Manifest',
      manifestName(name, 'counter'),
      klm().namespace,
    );
    expect(manifest?.status?.conditions?.[0]).toMatchObject({ reason: 'RegistryCredentialsRefused', status: 'False' });
    expect(reg.tokens.counts.refused).toBeGreaterThan(refusedBefore);
    const shown = JSON.stringify([kyma, manifest]);
    for (const secret of [
      WRONG,
      PASSWORD,
      Buffer.from(`${USER}:${WRONG}`).toString('base64'),
      Buffer.from(`${USER}:${PASSWORD}`).toString('base64'),
    ]) {
      expect(shown).not.toContain(secret);
    }

    // The worker watches the Secret: the right password is used at the next attempt.
    await klm().kube.apply(dockerConfigSecret(secretNamespace, secretName, reg.registry.host, PASSWORD));
    await eventually(
      'counter to be Ready',
      async () => (await moduleStatus(klm(), name, 'counter'))?.state === 'Ready',
      90_000,
    );
  });
});
