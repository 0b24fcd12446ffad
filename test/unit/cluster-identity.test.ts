// Which cluster a kubeconfig reaches: the uid of its kube-system namespace, read once per client
// (the URL alone where the credentials may not read it), so that another URL of the same cluster
// is no switch; and a Secret read as of the version a signal told of.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { clusterKey, describeCluster, sameCluster, serverOf } from '../../src/api/cluster-identity';
import type { KubeObject } from '../../src/api/shared';
import type { KubeClient } from '../../src/k8s/rest-client';
import { TargetClusters } from '../../src/k8s/target-cluster';

const servers: http.Server[] = [];

afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise((r) => s.close(r))));
});

/** An API server whose kube-system namespace answers `status` (200: with uid `uid`); counts its reads. */
async function apiServer(status: () => number, uid = 'uid-1'): Promise<{ url: string; reads: () => number }> {
  let reads = 0;
  const server = http.createServer((req, res) => {
    req.resume();
    res.setHeader('content-type', 'application/json');
    if (req.url === '/api/v1') {
      res.end(JSON.stringify({ resources: [{ name: 'namespaces', kind: 'Namespace', namespaced: false }] }));
      return;
    }
    reads++;
    const code = status();
    res.statusCode = code;
    res.end(
      JSON.stringify(
        code === 200
          ? { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'kube-system', uid } }
          : { kind: 'Status', apiVersion: 'v1', status: 'Failure', code, reason: 'Forbidden', message: 'no' },
      ),
    );
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, reads: () => reads };
}

function secret(server: string, resourceVersion = '1'): KubeObject {
  const config = stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'c', cluster: { server, 'insecure-skip-tls-verify': true } }],
    users: [{ name: 'u', user: { token: 't' } }],
    contexts: [{ name: 'c', context: { cluster: 'c', user: 'u' } }],
    'current-context': 'c',
  });
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: 'kubeconfig-k1', namespace: 'kcp', resourceVersion },
    data: { config: Buffer.from(config).toString('base64') },
  };
}

/** Kyma kcp/k1's clusters, its Secret listed by the control plane (`lists` counts the lookups). */
function targets(s: () => KubeObject): { t: TargetClusters; lists: () => number } {
  let lists = 0;
  const controlPlane = {
    list: () => {
      lists++;
      return Promise.resolve({ items: [s()], resourceVersion: '1' });
    },
  } as unknown as KubeClient;
  return { t: new TargetClusters(controlPlane), lists: () => lists };
}

describe('a cluster identity', () => {
  it('tells clusters apart by their kube-system uid, else by URL; names them without user info', () => {
    const a = { server: 'https://127.0.0.1:6443', uid: 'u1' };
    expect(sameCluster(a, { server: 'https://localhost:6443', uid: 'u1' })).toBe(true);
    expect(sameCluster(a, { server: 'https://127.0.0.1:6443', uid: 'u2' })).toBe(false);
    expect(sameCluster({ server: 'https://x' }, { server: 'https://x', uid: 'u1' })).toBe(true);
    expect(clusterKey(a)).toBe('u1');
    expect(clusterKey({ server: 'https://x' })).toBe('https://x');
    expect(describeCluster(a)).toBe('https://127.0.0.1:6443 (kube-system uid u1)');
    expect(serverOf('https://admin:s3cret@api.example:6443/prefix/?token=abc#x')).toBe(
      'https://api.example:6443/prefix',
    );
  });

  it('is read once per client; a 403 on kube-system makes the URL stand for it; a failure is not taken for one', async () => {
    let code = 200;
    const api = await apiServer(() => code);
    const { t } = targets(() => secret(api.url));
    const client = await t.clientOf('kcp', 'k1', await t.secretOf('kcp', 'k1'));
    expect(await t.identityOf(client)).toEqual({ server: api.url, uid: 'uid-1' });
    expect(await t.identityOf(client)).toEqual({ server: api.url, uid: 'uid-1' });
    expect(api.reads()).toBe(1);

    code = 403;
    const forbidden = await apiServer(() => code);
    const other = targets(() => secret(forbidden.url));
    expect(await other.t.identityOf(await other.t.clientOf('kcp', 'k1', await other.t.secretOf('kcp', 'k1')))).toEqual({
      server: forbidden.url,
    });

    code = 500;
    const failing = await apiServer(() => code);
    const third = targets(() => secret(failing.url));
    const failingClient = await third.t.clientOf('kcp', 'k1', await third.t.secretOf('kcp', 'k1'));
    await expect(third.t.identityOf(failingClient)).rejects.toThrow();
    // Not read again at once: a cluster in trouble is not asked on every load.
    await expect(third.t.identityOf(failingClient)).rejects.toThrow();
    expect(failing.reads()).toBe(1);
  });

  it("reads a Kyma's Secret afresh when a signal told of a newer version than the lookup it has", async () => {
    let version = '5';
    const { t, lists } = targets(() => secret('http://127.0.0.1:1', version));
    await t.secretOf('kcp', 'k1');
    await t.secretOf('kcp', 'k1');
    expect(lists()).toBe(1);
    version = '6';
    expect((await t.secretOf('kcp', 'k1', undefined, '6'))?.metadata.resourceVersion).toBe('6');
    expect(lists()).toBe(2);
  });
});
