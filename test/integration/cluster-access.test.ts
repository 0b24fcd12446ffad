// Target clusters as users have them: kubeconfigs whose credentials expire and rotate (or are
// refused, or hold a key that cannot be used), and API servers that hang or die. Each Kyma here
// targets a kube-apiserver of the test's own.
import { X509Certificate } from 'node:crypto';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import https from 'node:https';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { kubeconfigSecret } from '../../bench/fleet';
import type { Manifest } from '../../src/api/manifest';
import { FOUND_ANNOTATION, manifestName, OLD_CLUSTERS_CLEARED_ANNOTATION } from '../../src/api/names';
import { API_VERSION, type KubeObject } from '../../src/api/shared';
import type { KubeClient } from '../../src/k8s/rest-client';
import { issueCert, pkiIn } from '../../src/localstack/pki';
import { eventually, getKyma, kymaInState, kymaObject, kymaWorkflowId, useKlm, type Klm } from '../support/klm';
import { testModule, type TestModule } from '../support/modules';
import { stackInfo, uniqueName } from '../support/stack';
import { startOwnCluster, type OwnCluster } from '../support/target-cluster';

/** The greeter without its Deployment: the cluster runs no controllers, the sample manager makes its CR Ready. */
const withoutWorkload = (manifest: string) =>
  manifest
    .split(/^---$/m)
    .filter((doc) => !/^kind: Deployment/m.test(doc))
    .join('---');

async function installation(klm: Klm, kyma: string, module: string) {
  const manifest = await klm.kube.get<Manifest & KubeObject>(
    API_VERSION,
    'Manifest',
    manifestName(kyma, module),
    klm.namespace,
  );
  const condition = manifest?.status?.conditions?.find((c) => c.type === 'Installation');
  const entry = (await getKyma(klm, kyma))?.status?.modules?.find((m) => m.name === module);
  return { state: manifest?.status?.state, reason: condition?.reason, message: condition?.message, entry };
}

let own: OwnCluster;

beforeAll(async () => {
  own = await startOwnCluster();
});

afterAll(async () => {
  await own?.stop();
});

/** The product for one describe block, with a module of its own on the test's cluster, and Kymas targeting that cluster. */
function onOwnCluster(settings: Parameters<typeof useKlm>[0]) {
  const klm = useKlm(settings);
  let mod: TestModule;
  beforeAll(async () => {
    mod = await testModule(klm());
    own.manager.watch(mod.apiVersion, mod.kind);
    await mod.publish('1.0.0', undefined, withoutWorkload);
    await mod.channels({ regular: '1.0.0' });
  });
  async function kymaWith(kubeconfig: string): Promise<string> {
    const name = uniqueName('kyma');
    await klm().kube.create(kubeconfigSecret(klm().namespace, name, kubeconfig));
    await klm().kube.create(kymaObject(klm().namespace, name, { channel: 'regular', modules: [{ name: mod.name }] }));
    await kymaInState(klm(), name, 'Ready');
    return name;
  }
  return { klm, mod: () => mod, kymaWith };
}

describe('kubeconfigs whose credentials expire and rotate', () => {
  // Reconciliation every 2.5 s: requests all the time, with credentials that change under them.
  const { klm, mod, kymaWith } = onOwnCluster({ settings: { driftIntervalMs: 2500, installRetryMs: 5000 } });

  it('keeps a kubeconfig with an exec credential plugin working while its tokens expire every few seconds', async () => {
    const countFile = path.join(await mkdtemp(path.join(tmpdir(), 'klm-exec-')), 'count');
    await writeFile(countFile, '');
    const name = await kymaWith(await own.execKubeconfig(2000, countFile));
    // The server really refuses an expired token of the plugin's kind.
    const status = await new Promise<number>((resolve, reject) => {
      https
        .get(
          `${own.url}/version`,
          { headers: { authorization: `Bearer ${own.expiredToken()}` }, rejectUnauthorized: false },
          (res) => {
            res.resume();
            resolve(res.statusCode ?? 0);
          },
        )
        .on('error', reject);
    });
    expect(status).toBe(401);
    // Reconciliation every 2.5 s (drift) for 50 s, with tokens valid for 2 s: each one needs a new token.
    const states = new Set<string>();
    const until = Date.now() + 50_000;
    const before = own.tokens.accepted;
    while (Date.now() < until) {
      const i = await installation(klm(), name, mod().name);
      states.add(`${i.state}/${i.reason}`);
      await new Promise((r) => setTimeout(r, 1000));
    }
    expect([...states]).toEqual(['Ready/Ready']);
    expect((await readFile(countFile, 'utf8')).length, 'tokens the plugin issued').toBeGreaterThanOrEqual(15);
    expect(own.tokens.accepted - before, 'requests the API server accepted with a plugin token').toBeGreaterThanOrEqual(
      15,
    );
    // Removal works with the plugin too; and the next test's Kyma is then the only one putting the module's objects back.
    await klm().kube.delete(API_VERSION, 'Kyma', name, klm().namespace);
    await eventually('the Kyma to be gone', async () => (await getKyma(klm(), name)) === undefined, 90_000);
  }, 240_000);

  it('follows a rotated client certificate: the old one may be revoked', async () => {
    const pkiDir = stackInfo().pkiDir;
    const group = uniqueName('old-credentials');
    const old = await issueCert(pkiDir, group, group, { clientAuth: true, group });
    // The old identity gets its rights from a binding that the rotation revokes.
    const binding = {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name: group },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'cluster-admin' },
      subjects: [{ kind: 'Group', name: group, apiGroup: 'rbac.authorization.k8s.io' }],
    };
    await own.client.create(binding);
    const name = await kymaWith(await own.certKubeconfig(old.cert, old.key));
    const rotatedName = uniqueName('rotated');
    const rotated = await issueCert(pkiDir, rotatedName, rotatedName, { clientAuth: true, group: 'system:masters' });
    await klm().kube.apply(
      kubeconfigSecret(klm().namespace, name, await own.certKubeconfig(rotated.cert, rotated.key)),
    );
    await own.client.delete('rbac.authorization.k8s.io/v1', 'ClusterRoleBinding', group);
    // Something of the module goes missing: only the rotated credentials can put it back.
    const sa = (await own.client.list('v1', 'ServiceAccount')).items.find((s) =>
      s.metadata.name.startsWith(mod().name),
    );
    expect(sa, 'the module ServiceAccount').toBeDefined();
    const { name: saName, namespace: saNamespace } = sa!.metadata;
    await own.client.delete('v1', 'ServiceAccount', saName, saNamespace);
    await eventually(
      'the ServiceAccount to be applied again',
      async () => (await own.client.get('v1', 'ServiceAccount', saName, saNamespace)) !== undefined,
      60_000,
    );
    expect((await installation(klm(), name, mod().name)).state).toBe('Ready');
  }, 180_000);

  it(
    'names the Secret, the field and what to do when its client key cannot be used or the ' +
      'cluster refuses its token or its expired client certificate, on the module and in the Runtime condition alike',
    async () => {
      const ns = klm().namespace;
      const token = own.expiredToken();
      const cert = (await readFile(pkiIn(stackInfo().pkiDir).adminCert)).toString('base64');
      const expiredName = uniqueName('expired');
      const expired = await issueCert(stackInfo().pkiDir, expiredName, expiredName, {
        clientAuth: true,
        group: 'system:masters',
        days: -1,
      });
      const configs = [
        own.userKubeconfig({
          'client-certificate-data': cert,
          'client-key-data': Buffer.from('-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n').toString(
            'base64',
          ),
        }),
        own.userKubeconfig({ token }),
        await own.certKubeconfig(expired.cert, expired.key),
      ];
      const [keyKyma, tokenKyma, expiredKyma] = await Promise.all(
        configs.map(async (config) => {
          const name = uniqueName('kyma');
          await klm().kube.create(kubeconfigSecret(ns, name, config));
          await klm().kube.create(kymaObject(ns, name, { channel: 'regular', modules: [{ name: mod().name }] }));
          return name;
        }),
      );
      const failed = (name: string, reason: string) =>
        eventually(`${reason} on the module and in the Runtime condition of ${name}`, async () => {
          const i = await installation(klm(), name, mod().name);
          const runtime = (await getKyma(klm(), name))?.status?.conditions?.find((c) => c.type === 'Runtime');
          return i.state === 'Error' &&
            i.reason === reason &&
            i.entry?.message === i.message &&
            runtime?.reason === reason
            ? { ...i, runtime }
            : undefined;
        });
      const key = await failed(keyKyma!, 'InvalidKubeconfig');
      expect(key.message).toBe(
        `Secret ${ns}/kubeconfig-${keyKyma} (data key "config"): in its kubeconfig, user "user" has ` +
          `a client-key-data that is not a private key that can be read (damaged, truncated or of an ` +
          `unsupported type); put the user's private key there (PEM, unencrypted, then ` +
          `base64-encoded), and update the Secret`,
      );
      const refused = await failed(tokenKyma!, 'TargetCredentialsRefused');
      expect(refused.message).toContain(
        `the target cluster of Kyma ${ns}/${tokenKyma} (kubeconfig Secret ${ns}/kubeconfig-${tokenKyma}) refused the credentials of its kubeconfig (HTTP 401`,
      );
      for (const m of [refused.message, refused.runtime.message]) {
        expect(m).toContain(
          `renew the credentials (a new token, or a new client certificate and key) in Secret ${ns}/kubeconfig-${tokenKyma}, data key "config"`,
        );
        expect(m).not.toContain(token);
      }
      // The certificate's own expiry says which it was.
      const expiredAt = new Date(new X509Certificate(await readFile(expired.cert)).validTo).toISOString();
      const refusedCert = await failed(expiredKyma!, 'TargetCredentialsRefused');
      for (const m of [refusedCert.message, refusedCert.runtime.message])
        expect(m).toContain(
          `refused the credentials of its kubeconfig (HTTP 401 Unauthorized: its client certificate expired at ${expiredAt}): ` +
            `renew the credentials (a new token, or a new client certificate and key) in Secret ${ns}/kubeconfig-${expiredKyma}`,
        );
    },
    120_000,
  );
});

describe('API servers that hang or die, and Secrets that name another cluster, with default timers', () => {
  // Default drift and retry timers: detection and recovery come from the bridge's probe, and
  // a Secret's switch from the bridge's watch on Secrets.
  const { klm, mod, kymaWith } = onOwnCluster({});

  /** The objects the module's install makes for Kyma `name`, object by object. */
  function moduleObjects(name: string): { apiVersion: string; kind: string; name: string; namespace?: string }[] {
    const m = mod().name;
    const ns = `${name}-system`;
    return [
      { apiVersion: 'v1', kind: 'Namespace', name: ns },
      { apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', name: `${m}s.${m}.example.io` },
      { apiVersion: 'v1', kind: 'ServiceAccount', name: `${m}-manager`, namespace: ns },
      { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', name: `${m}-manager` },
      { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRoleBinding', name: `${m}-manager` },
      { apiVersion: mod().apiVersion, kind: mod().kind, name: 'default', namespace: ns },
    ];
  }

  /** Which of the module's objects for Kyma `name` a cluster holds (`kind/name` each). */
  async function present(client: KubeClient, name: string): Promise<string[]> {
    const found = await Promise.all(
      moduleObjects(name).map(async (o) =>
        (await client.get(o.apiVersion, o.kind, o.name, o.namespace).catch(() => undefined))
          ? `${o.kind}/${o.name}`
          : '',
      ),
    );
    return found.filter(Boolean);
  }

  /** The clusters the Kyma's loads found (their `cluster`), from its workflow's history (this run). */
  async function loadedClusters(name: string): Promise<unknown[]> {
    const history = await klm().client.workflow.getHandle(kymaWorkflowId(klm().namespace, name)).fetchHistory();
    const text = (p?: { data?: Uint8Array | null }) => (p?.data ? Buffer.from(p.data).toString('utf8') : '');
    return (history.events ?? []).flatMap((e) => {
      const d = e.markerRecordedEventAttributes?.details;
      const activity = text(d?.['data']?.payloads?.[0] ?? undefined);
      // A run's first read is `beginKymaRun`'s (with the worker's settings), the later ones `loadKyma`'s.
      const begin = activity.includes('"beginKymaRun"');
      if (!begin && !activity.includes('"loadKyma"')) return [];
      const result = text(d?.['result']?.payloads?.[0] ?? undefined);
      const parsed = result
        ? (JSON.parse(result) as { cluster?: unknown; snapshot?: { cluster?: unknown } | null })
        : null;
      const snapshot = begin ? parsed?.snapshot : parsed;
      return snapshot ? [snapshot.cluster] : [];
    });
  }

  async function kymaEvents(name: string): Promise<{ type?: string; reason?: string; message?: string }[]> {
    const events = await klm().kube.list('v1', 'Event', { namespace: klm().namespace });
    return events.items
      .map((e) => e as { type?: string; reason?: string; message?: string; involvedObject?: { name?: string } })
      .filter((e) => e.involvedObject?.name === name);
  }

  it(
    'tells when its kubeconfig Secret switches to another cluster: the modules are installed there at once ' +
      '(what was there before recorded as found), and a condition and a Warning Event name the old cluster and the ' +
      'modules whose objects stayed on it, until a person clears it',
    async () => {
      const pki = pkiIn(stackInfo().pkiDir);
      const name = await kymaWith(await own.certKubeconfig(pki.adminCert, pki.adminKey));
      const ns = `${name}-system`;
      const a = own.client;
      const b = klm().kube;
      const all = moduleObjects(name).map((o) => `${o.kind}/${o.name}`);
      expect(await present(a, name), 'the objects on the first cluster').toEqual(all);
      expect(await present(b, name), 'the objects on the second cluster before the switch').toEqual([]);
      const uidA = (await a.get('v1', 'Namespace', 'kube-system'))!.metadata.uid!;
      // The second cluster (the control plane's) has a namespace and a ServiceAccount of a user's
      // own under the names the module ships: the install must take them for found, not for ours.
      const sa = moduleObjects(name).find((o) => o.kind === 'ServiceAccount')!;
      await b.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns, labels: { owner: 'a-user' } } });
      await b.create({
        apiVersion: 'v1',
        kind: 'ServiceAccount',
        metadata: { name: sa.name, namespace: ns, labels: { owner: 'a-user' } },
      });

      const switched = Date.now();
      const kubeconfigB = await readFile(stackInfo().kubeconfig, 'utf8');
      await klm().kube.apply(kubeconfigSecret(klm().namespace, name, kubeconfigB));
      await eventually('every object of the module on the new cluster', async () =>
        (await present(b, name)).length === all.length ? true : undefined,
      );
      const foundSa = await b.get('v1', 'ServiceAccount', sa.name, ns);
      expect(foundSa?.metadata.annotations?.[FOUND_ANNOTATION], "the user's ServiceAccount recorded as found").toBe(
        JSON.stringify({ labels: { owner: 'a-user' }, annotations: {} }),
      );
      const condition = await eventually('the TargetCluster condition', async () =>
        (await getKyma(klm(), name))?.status?.conditions?.find((c) => c.type === 'TargetCluster'),
      );
      expect(Date.now() - switched, 'ms until the switch was told (the drift timer is 5 min)').toBeLessThan(60_000);
      expect(condition.status).toBe('False');
      expect(condition.reason).toBe('ModulesLeftOnOldCluster');
      for (const part of [own.url, uidA, mod().name, `${OLD_CLUSTERS_CLEARED_ANNOTATION}=1`])
        expect(condition.message).toContain(part);
      // The module is Ready on the new cluster; the Kyma is Warning while something stays on the old one.
      const kyma = await eventually('the module Ready on the new cluster', async () => {
        const k = await getKyma(klm(), name);
        return k?.status?.modules?.[0]?.state === 'Ready' ? k : undefined;
      });
      expect(kyma.status?.state).toBe('Warning');
      const told = (await kymaEvents(name)).filter((e) => e.reason === 'TargetClusterSwitched');
      expect(told.map((e) => e.type)).toEqual(['Warning']);
      for (const part of [own.url, uidA, mod().name]) expect(told[0]!.message).toContain(part);
      // Nothing of the first cluster was removed: its credentials are gone with the Secret's change.
      expect(await present(a, name), 'the objects left on the first cluster').toEqual(all);
      // No credentials in what it told, nor in its workflow's history: names and ids only.
      const key = (await readFile(pki.adminKey)).toString('base64');
      const history = JSON.stringify(
        await klm().client.workflow.getHandle(kymaWorkflowId(klm().namespace, name)).fetchHistory(),
      );
      for (const text of [condition.message, told[0]!.message, history]) {
        expect(text).not.toContain(key.slice(0, 40));
        expect(text).not.toContain(Buffer.from(kubeconfigB).toString('base64').slice(0, 40));
      }

      // A person cleared the first cluster: the condition goes, the Kyma is Ready.
      await klm().kube.mergePatch(API_VERSION, 'Kyma', name, klm().namespace, {
        metadata: { annotations: { [OLD_CLUSTERS_CLEARED_ANNOTATION]: '1' } },
      });
      const cleared = await kymaInState(klm(), name, 'Ready');
      expect(cleared.status?.conditions?.map((c) => c.type)).not.toContain('TargetCluster');

      // Its deletion removes what it made on the new cluster, and leaves the user's own objects there.
      await klm().kube.delete(API_VERSION, 'Kyma', name, klm().namespace);
      await eventually('the Kyma to be gone', async () => (await getKyma(klm(), name)) === undefined, 90_000);
      expect(await present(b, name)).toEqual([`Namespace/${ns}`, `ServiceAccount/${sa.name}`]);
      const left = await b.get('v1', 'ServiceAccount', sa.name, ns);
      expect(left?.metadata.labels).toEqual({ owner: 'a-user' });
      await b.delete('v1', 'Namespace', ns);
    },
    180_000,
  );

  it('takes a new URL of the same cluster for no switch', async () => {
    const pki = pkiIn(stackInfo().pkiDir);
    const name = await kymaWith(await own.certKubeconfig(pki.adminCert, pki.adminKey));
    const uid = (await own.client.get('v1', 'Namespace', 'kube-system'))!.metadata.uid!;
    expect(own.url).toMatch(/^https:\/\/127\.0\.0\.1:/);
    const byName = own.url.replace('127.0.0.1', 'localhost');
    const config = (await own.certKubeconfig(pki.adminCert, pki.adminKey)).replace(own.url, byName);
    await klm().kube.apply(kubeconfigSecret(klm().namespace, name, config));
    await eventually('a load of the Kyma to find its cluster by the new URL', async () =>
      (await loadedClusters(name)).some((c) => JSON.stringify(c) === JSON.stringify({ server: byName, uid }))
        ? true
        : undefined,
    );
    // Something of the module goes missing: the new URL puts it back.
    const ns = `${name}-system`;
    await own.client.delete(mod().apiVersion, mod().kind, 'default', ns);
    await eventually(
      'the default CR to be put back',
      async () => (await own.client.get(mod().apiVersion, mod().kind, 'default', ns)) !== undefined,
      60_000,
    );
    const kyma = await kymaInState(klm(), name, 'Ready');
    expect(kyma.status?.conditions?.map((c) => c.type)).not.toContain('TargetCluster');
    expect((await kymaEvents(name)).map((e) => e.reason)).not.toContain('TargetClusterSwitched');
    await klm().kube.delete(API_VERSION, 'Kyma', name, klm().namespace);
    await eventually('the Kyma to be gone', async () => (await getKyma(klm(), name)) === undefined, 90_000);
  }, 120_000);

  /** The Manifest and the Kyma's entry both show the module unreachable, within `ms` of `since`. */
  async function unreachableWithin(name: string, ms: number, since: number) {
    const i = await eventually(
      'TargetClusterUnreachable on the Manifest and the Kyma',
      async () => {
        // Manifest and Kyma are two objects, read one after the other: a status write may land
        // between the reads, so both must tell the outage, and tell it alike, in one look.
        const s = await installation(klm(), name, mod().name);
        return s.state === 'Error' &&
          s.reason === 'TargetClusterUnreachable' &&
          s.entry?.state === 'Error' &&
          s.entry.message === s.message
          ? s
          : undefined;
      },
      ms + 30_000,
    );
    const took = Date.now() - since;
    expect(took, `ms until TargetClusterUnreachable (message: ${i.message})`).toBeLessThanOrEqual(ms);
    expect(i.message).toContain(`Kyma ${klm().namespace}/${name}`);
    expect(i.message).toContain(`kubeconfig Secret ${klm().namespace}/kubeconfig-${name}`);
    expect(i.entry?.message).toBe(i.message);
    return i;
  }

  /** Its watches on the cluster work again: a default CR deleted by hand comes back long before the drift timer. */
  async function watchedAgain(name: string) {
    const ns = `${name}-system`;
    await own.client.delete(mod().apiVersion, mod().kind, 'default', ns);
    await eventually(
      'the default CR to be put back',
      async () => (await own.client.get(mod().apiVersion, mod().kind, 'default', ns)) !== undefined,
      60_000,
    );
  }

  it('shows a hung API server (SIGSTOP) as TargetClusterUnreachable within 60 s and recovers when it answers again', async () => {
    const name = await kymaWith(
      await own.certKubeconfig(pkiIn(stackInfo().pkiDir).adminCert, pkiIn(stackInfo().pkiDir).adminKey),
    );
    const stopped = Date.now();
    process.kill(own.pid(), 'SIGSTOP');
    try {
      // The Kyma's state turns with its Runtime condition, in the same status write, within a minute.
      const outage = await eventually(
        'the Runtime condition to tell the outage',
        async () => {
          const k = await getKyma(klm(), name);
          return k?.status?.conditions?.some((c) => c.type === 'Runtime' && c.reason === 'TargetClusterUnreachable')
            ? k
            : undefined;
        },
        90_000,
      );
      expect(Date.now() - stopped).toBeLessThanOrEqual(60_000);
      expect(outage.status?.state).toBe('Error');
      // Its module's entry does not go on telling what it last saw there.
      expect(outage.status?.modules?.map((m) => `${m.name}=${m.state}`)).toEqual([`${mod().name}=Error`]);
      expect(outage.status?.modules?.[0]?.message).toContain('did not answer in time');
      expect(outage.status?.lastOperation?.operation).toMatch(
        /^the runtime Kyma kyma-system\/default could not be synced: .*did not answer in time/,
      );
      const i = await unreachableWithin(name, 60_000, stopped);
      expect(i.message).toContain('did not answer in time');
    } finally {
      process.kill(own.pid(), 'SIGCONT');
    }
    await kymaInState(klm(), name, 'Ready', 90_000);
    await watchedAgain(name);
  }, 240_000);

  it('shows a killed API server as TargetClusterUnreachable within 60 s and recovers once it is back', async () => {
    const name = await kymaWith(
      await own.certKubeconfig(pkiIn(stackInfo().pkiDir).adminCert, pkiIn(stackInfo().pkiDir).adminKey),
    );
    const killed = Date.now();
    process.kill(own.pid(), 'SIGKILL');
    const i = await unreachableWithin(name, 60_000, killed);
    expect(i.message).toMatch(/refused the connection|closed the connection/);
    // The Kyma's runtime side tells the outage too, and recovers with it (the runtime Kyma is this
    // Kyma's, or an earlier test's Kyma on this cluster holds it).
    const runtimeCondition = async () =>
      (await getKyma(klm(), name))?.status?.conditions?.find((c) => c.type === 'Runtime');
    await eventually(
      'the Runtime condition to tell the outage',
      async () => (await runtimeCondition())?.reason === 'TargetClusterUnreachable' || undefined,
      60_000,
    );
    await own.restart();
    await kymaInState(klm(), name, 'Ready', 90_000);
    let seen: unknown;
    await eventually(
      'the Runtime condition to recover',
      async () => {
        const c = await runtimeCondition();
        seen = c;
        return c?.reason === 'Synced' || c?.reason === 'RuntimeKymaTaken' || undefined;
      },
      60_000,
    ).catch((err: Error) => {
      throw new Error(`${err.message}; the condition: ${JSON.stringify(seen)}`);
    });
    await watchedAgain(name);
  }, 240_000);
});
