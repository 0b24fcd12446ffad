// Before its first apply, each object of a manifest is looked for (an object found there is
// recorded as someone else's and never deleted), except in a namespace the same apply found
// absent and so creates: nothing in it can be anyone else's.
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
};

/** An API server that has the objects at `existing` (paths) and notes every read. */
async function apiServer(existing: string[]) {
  const reads: string[] = [];
  const client = await loopbackApiServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      const path = (req.url ?? '').split('?')[0]!;
      res.setHeader('content-type', 'application/json');
      if (req.method === 'GET') {
        reads.push(path);
        if (!existing.includes(path)) {
          res.statusCode = 404;
          return res.end(JSON.stringify({ kind: 'Status', code: 404, reason: 'NotFound', message: 'not found' }));
        }
        const name = path.split('/').pop()!;
        return res.end(JSON.stringify({ metadata: { name, resourceVersion: '3', labels: { team: 'a' } } }));
      }
      const sent = body ? (JSON.parse(body) as KubeObject) : ({ metadata: {} } as KubeObject);
      res.end(JSON.stringify({ ...sent, metadata: { ...sent.metadata, resourceVersion: '7' } }));
    });
  }, DISCOVERY);
  return { client, reads };
}

const objects = (ns: string): KubeObject[] => [
  { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } },
  { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a', namespace: ns } },
  { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'b', namespace: ns } },
];

function install(client: KubeClient, ns: string): Promise<unknown> {
  return new MockActivityEnvironment().run(() =>
    new Applier().apply(client, objects(ns), { kymaNamespace: 'kcp', kymaName: 'k', module: 'greeter' }, 5_000),
  );
}

describe('the objects of a manifest before their first apply', () => {
  it('are not looked for in a namespace the apply found absent and creates', async () => {
    const { client, reads } = await apiServer([]);
    await install(client, 'fresh-system');
    expect(reads).toEqual(['/api/v1/namespaces/fresh-system']);
  });

  it('are each looked for in a namespace that was there', async () => {
    const { client, reads } = await apiServer(['/api/v1/namespaces/users']);
    await install(client, 'users');
    expect(reads.sort()).toEqual([
      '/api/v1/namespaces/users',
      '/api/v1/namespaces/users/configmaps/a',
      '/api/v1/namespaces/users/configmaps/b',
    ]);
  });
});
