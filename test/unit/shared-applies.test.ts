// Installs of modules into one cluster share its cluster-scoped objects (CRDs, ClusterRoles) and
// the namespaces they need: a burst of installs that start together applies each such object
// once per worker, the others joining the apply under way (a CRD's until it is Established),
// instead of one apply (and one poll of the CRD) per install before the first of them ends. A
// failed apply is not remembered: the next install applies again.
import { MockActivityEnvironment } from '@temporalio/testing';
import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../../src/api/shared';
import { Applier } from '../../src/activities/install/apply';
import type { KubeClient } from '../../src/k8s/rest-client';
import { loopbackApiServer, type Discovery } from '../support/loopback-api';

const DISCOVERY: Discovery = {
  '/api/v1': [
    { name: 'configmaps', kind: 'ConfigMap', namespaced: true },
    { name: 'namespaces', kind: 'Namespace', namespaced: false },
  ],
  '/apis/apiextensions.k8s.io/v1': [
    { name: 'customresourcedefinitions', kind: 'CustomResourceDefinition', namespaced: false },
  ],
  '/apis/rbac.authorization.k8s.io/v1': [{ name: 'clusterroles', kind: 'ClusterRole', namespaced: false }],
};

/** A target API server that counts writes by method and path; `fail(path)` answers a write 500. */
async function apiServer(fail: (path: string) => boolean = () => false) {
  const writes: string[] = [];
  const client = await loopbackApiServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      const path = (req.url ?? '').split('?')[0]!;
      const reply = (status: number, answer: unknown) => {
        res.statusCode = status;
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify(answer));
      };
      // None of the objects is there before (the install looks before its first apply of each).
      if (req.method === 'GET')
        return reply(404, { kind: 'Status', code: 404, reason: 'NotFound', message: 'not found' });
      writes.push(`${req.method} ${path}`);
      if (fail(path)) return reply(500, { kind: 'Status', code: 500, reason: 'InternalError', message: 'boom' });
      const sent = body ? (JSON.parse(body) as KubeObject) : ({ metadata: {} } as KubeObject);
      const answer = {
        ...sent,
        metadata: { ...sent.metadata, resourceVersion: '7' },
        // A CRD becomes Established a moment after its apply, as on a real API server.
        ...(sent.kind === 'CustomResourceDefinition'
          ? { status: { conditions: [{ type: 'Established', status: 'True' }] } }
          : {}),
      };
      setTimeout(() => reply(req.method === 'POST' ? 201 : 200, answer), 50);
    });
  }, DISCOVERY);
  const count = (write: string) => writes.filter((w) => w === write).length;
  return { client, count };
}

const crd: KubeObject = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'greeters.example.io' },
};
const clusterRole: KubeObject = {
  apiVersion: 'rbac.authorization.k8s.io/v1',
  kind: 'ClusterRole',
  metadata: { name: 'greeter-manager' },
};
const configMap = (kyma: string): KubeObject => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name: `settings-${kyma}`, namespace: 'greeter-system' },
});

/** The install of Kyma `kyma`'s module: its manifest's objects, applied as the install activity does. */
function install(client: KubeClient, kyma: string): Promise<unknown> {
  const objects = [structuredClone(crd), structuredClone(clusterRole), configMap(kyma)];
  return new MockActivityEnvironment().run(() =>
    new Applier().apply(client, objects, { kymaNamespace: 'kcp', kymaName: kyma, module: 'greeter' }, 5_000),
  );
}

const CRD_PATH = 'PATCH /apis/apiextensions.k8s.io/v1/customresourcedefinitions/greeters.example.io';
const ROLE_PATH = 'PATCH /apis/rbac.authorization.k8s.io/v1/clusterroles/greeter-manager';

describe('installs into one cluster that start together', () => {
  it('apply its CRD, ClusterRole and the namespace they need once, and each its own namespaced objects', async () => {
    const { client, count } = await apiServer();
    const kymas = Array.from({ length: 20 }, (_, i) => `kyma-${i}`);
    await Promise.all(kymas.map((k) => install(client, k)));
    expect(count(CRD_PATH)).toBe(1);
    expect(count(ROLE_PATH)).toBe(1);
    expect(count('POST /api/v1/namespaces')).toBe(1);
    for (const k of kymas) expect(count(`PATCH /api/v1/namespaces/greeter-system/configmaps/settings-${k}`)).toBe(1);
  });

  it('all fail with an apply that fails, and the next install applies again', async () => {
    let failing = true;
    const { client, count } = await apiServer((path) => failing && path.includes('customresourcedefinitions'));
    const results = await Promise.allSettled(['a', 'b', 'c'].map((k) => install(client, k)));
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected', 'rejected']);
    expect(count(CRD_PATH)).toBe(1);
    failing = false;
    await install(client, 'd');
    expect(count(CRD_PATH)).toBe(2);
    expect(count(ROLE_PATH)).toBe(1);
  });
});
