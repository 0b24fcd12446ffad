// What a target cluster's refusals become, through the one mapping of src/activities/target.ts:
// refused credentials (401, or 403 on API discovery) are TargetCredentialsRefused whichever step
// met them (an install's apply, a read), naming the Secret and saying to renew them there; a
// 403 on one object stays ApplyRejected and names the permission missing; a kubeconfig whose
// key cannot be used is InvalidKubeconfig naming the field, never the key.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { MockActivityEnvironment } from '@temporalio/testing';
import { ApplicationFailure } from '@temporalio/common';
import { afterEach, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import type { KubeObject } from '../../src/api/shared';
import { Applier } from '../../src/activities/install/apply';
import { onTarget } from '../../src/activities/target';
import type { KubeClient } from '../../src/k8s/rest-client';
import { TargetClusters } from '../../src/k8s/target-cluster';

const MARKER = 'SECRET-MARKER-5d1e';
const KYMA = { namespace: 'kcp', name: 'k1', remote: true };
const servers: http.Server[] = [];

afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise((r) => s.close(r))));
});

function kubeconfig(server: string, user: Record<string, unknown>): string {
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'c', cluster: { server, 'insecure-skip-tls-verify': true } }],
    users: [{ name: 'u', user }],
    contexts: [{ name: 'c', context: { cluster: 'c', user: 'u' } }],
    'current-context': 'c',
  });
}

function kubeconfigSecret(config: string): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: 'kubeconfig-k1', namespace: 'kcp' },
    data: { config: Buffer.from(config).toString('base64') },
  };
}

/** Kyma kcp/k1's target cluster, reached through its Secret (the control plane answers the Secret's lookup). */
function targets(secret: KubeObject): TargetClusters {
  const controlPlane = {
    list: () => Promise.resolve({ items: [secret], resourceVersion: '1' }),
  } as unknown as KubeClient;
  return new TargetClusters(controlPlane);
}

/** A target API server: discovery of v1 serves ConfigMaps; `answer` decides everything else (undefined: the default). */
async function apiServer(
  answer: (req: http.IncomingMessage) => { status: number; body: unknown } | undefined,
): Promise<string> {
  const server = http.createServer((req, res) => {
    req.resume();
    const a =
      answer(req) ??
      (req.url === '/api/v1'
        ? {
            status: 200,
            body: {
              resources: [
                { name: 'configmaps', kind: 'ConfigMap', namespaced: true },
                { name: 'namespaces', kind: 'Namespace', namespaced: false },
              ],
            },
          }
        : {
            status: 200,
            body: {
              apiVersion: 'v1',
              kind: 'ConfigMap',
              metadata: { name: 'settings', namespace: 'k1-system', resourceVersion: '5' },
            },
          });
    res.statusCode = a.status;
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify(a.body));
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

const status = (code: number, reason: string, message: string, details: Record<string, string> = {}) => ({
  status: code,
  body: { kind: 'Status', apiVersion: 'v1', status: 'Failure', code, reason, message, details },
});
const configMap: KubeObject = {
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name: 'settings', namespace: 'k1-system' },
};
const who = { kymaNamespace: 'kcp', kymaName: 'k1', module: 'greeter' };

/** An install's apply of one ConfigMap, as the install activity runs it. */
async function install(t: TargetClusters): Promise<ApplicationFailure> {
  const err = await new MockActivityEnvironment()
    .run(() => onTarget(t, KYMA, (client) => new Applier().apply(client, [configMap], who, 1000)))
    .then(
      () => undefined,
      (e: unknown) => e,
    );
  expect(err).toBeInstanceOf(ApplicationFailure);
  return err as ApplicationFailure;
}

describe('refused credentials, whichever step meets them', () => {
  const renew =
    'renew the credentials (a new token, or a new client certificate and key) in Secret ' +
    'kcp/kubeconfig-k1, data key "config"; checked again on the retry backoff';

  it('is TargetCredentialsRefused when an install is refused 401 (after the reload), not ApplyRejected', async () => {
    const url = await apiServer(() => status(401, 'Unauthorized', 'Unauthorized'));
    const f = await install(targets(kubeconfigSecret(kubeconfig(url, { token: MARKER }))));
    expect(f.type).toBe('TargetCredentialsRefused');
    expect(f.nonRetryable).toBe(true);
    expect(f.message).toBe(
      `the target cluster of Kyma kcp/k1 (kubeconfig Secret kcp/kubeconfig-k1) refused the ` +
        `credentials of its kubeconfig (HTTP 401 Unauthorized: the token or client certificate is ` +
        `not accepted, has expired or was revoked): ${renew}`,
    );
    expect(f.message).not.toContain(MARKER);
  });

  it('is TargetCredentialsRefused when only the apply itself is refused 401', async () => {
    const url = await apiServer((req) =>
      req.method === 'PATCH' ? status(401, 'Unauthorized', 'Unauthorized') : undefined,
    );
    expect((await install(targets(kubeconfigSecret(kubeconfig(url, { token: MARKER }))))).type).toBe(
      'TargetCredentialsRefused',
    );
  });

  it('is TargetCredentialsRefused when API discovery answers 403 (the server lets the identity do nothing)', async () => {
    const url = await apiServer((req) =>
      req.url === '/api/v1'
        ? status(403, 'Forbidden', 'forbidden: User "system:anonymous" cannot get path "/api/v1"')
        : undefined,
    );
    const f = await install(targets(kubeconfigSecret(kubeconfig(url, {}))));
    expect(f.type).toBe('TargetCredentialsRefused');
    expect(f.message).toContain('lets the identity of its kubeconfig do nothing at all (HTTP 403 on API discovery');
    expect(f.message).toContain(renew);
  });

  it('is TargetCredentialsRefused for a read (a readiness check, a removal step) too', async () => {
    const url = await apiServer(() => status(401, 'Unauthorized', 'Unauthorized'));
    const err = await onTarget(targets(kubeconfigSecret(kubeconfig(url, { token: MARKER }))), KYMA, (client) =>
      client.get('v1', 'ConfigMap', 'settings', 'k1-system'),
    ).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect((err as ApplicationFailure).type).toBe('TargetCredentialsRefused');
  });
});

describe('a 403 on one object of an install', () => {
  it('stays ApplyRejected and names the object, the verb, the resource and how to grant it', async () => {
    const said =
      'configmaps "settings" is forbidden: User "deployer" cannot patch resource "configmaps" in API group "" in the namespace "k1-system"';
    const url = await apiServer((req) =>
      req.method === 'PATCH' ? status(403, 'Forbidden', said, { name: 'settings', kind: 'configmaps' }) : undefined,
    );
    const f = await install(targets(kubeconfigSecret(kubeconfig(url, { token: 't' }))));
    expect(f.type).toBe('ApplyRejected');
    expect(f.message).toBe(
      `applying ConfigMap k1-system/settings: the identity of the target cluster's kubeconfig may ` +
        `not patch configmaps of the core API group in namespace k1-system (server-side apply needs ` +
        `create and patch): grant it with a Role or ClusterRole bound to that identity, or use a ` +
        `kubeconfig whose identity may install modules (the API server said: ${said})`,
    );
  });

  it('names the verb the server refused (create, for a new object)', async () => {
    const said =
      'deployments.apps "manager" is forbidden: User "deployer" cannot create resource "deployments" in API group "apps" in the namespace "k1-system"';
    const url = await apiServer((req) => {
      if (req.url === '/apis/apps/v1')
        return { status: 200, body: { resources: [{ name: 'deployments', kind: 'Deployment', namespaced: true }] } };
      return req.method === 'PATCH'
        ? status(403, 'Forbidden', said, { name: 'manager', group: 'apps', kind: 'deployments' })
        : undefined;
    });
    const deployment: KubeObject = {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'manager', namespace: 'k1-system' },
    };
    const t = targets(kubeconfigSecret(kubeconfig(url, { token: 't' })));
    const err = await new MockActivityEnvironment()
      .run(() => onTarget(t, KYMA, (client) => new Applier().apply(client, [deployment], who, 1000)))
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect((err as ApplicationFailure).type).toBe('ApplyRejected');
    expect((err as ApplicationFailure).message).toContain(
      'may not create deployments of API group "apps" in namespace k1-system',
    );
  });
});

describe('a kubeconfig whose client key cannot be used', () => {
  it("is InvalidKubeconfig naming the Secret, its data key, the user and the field; never the key or OpenSSL's words", async () => {
    const key = Buffer.from(
      `-----BEGIN PRIVATE KEY-----\n${Buffer.from(MARKER).toString('base64')}\n-----END PRIVATE KEY-----\n`,
    ).toString('base64');
    const config = kubeconfig('https://127.0.0.1:1', { 'client-key-data': key });
    const err = await onTarget(targets(kubeconfigSecret(config)), KYMA, () => Promise.resolve()).then(
      () => undefined,
      (e: unknown) => e,
    );
    const f = err as ApplicationFailure;
    expect(f.type).toBe('InvalidKubeconfig');
    expect(f.message).toBe(
      'Secret kcp/kubeconfig-k1 (data key "config"): in its kubeconfig, user "u" has a ' +
        'client-key-data that is not a private key that can be read (damaged, truncated or of an ' +
        "unsupported type); put the user's private key there (PEM, unencrypted, then " +
        'base64-encoded), and update the Secret',
    );
    expect(f.message).not.toMatch(/DECODER|routines|error:/);
    expect(f.message).not.toContain(MARKER);
  });
});
