// A runtime's bootstrap (kyma-system and our CRDs) is applied once per ten minutes; a full sync
// applies it again, unless it was applied within the last 30 s: an install's first full catalog
// sync follows the runtime Kyma's sync, which applied it a moment before.
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { KubeObject } from '../../src/api/shared';
import { RuntimeBootstrap } from '../../src/activities/runtime-bootstrap';
import { loopbackApiServer } from '../support/loopback-api';

afterEach(() => {
  vi.useRealTimers();
});

/** A runtime's API server that has nothing yet, answers every apply as Established, and notes each apply. */
async function runtime() {
  const applies: string[] = [];
  const client = await loopbackApiServer(
    (req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        res.setHeader('content-type', 'application/json');
        if (req.method === 'GET') {
          res.statusCode = 404;
          return res.end(JSON.stringify({ kind: 'Status', code: 404, reason: 'NotFound', message: 'not found' }));
        }
        applies.push((req.url ?? '').split('?')[0]!);
        const sent = JSON.parse(body) as KubeObject;
        res.end(JSON.stringify({ ...sent, status: { conditions: [{ type: 'Established', status: 'True' }] } }));
      });
    },
    {
      '/api/v1': [{ name: 'namespaces', kind: 'Namespace', namespaced: false }],
      '/apis/apiextensions.k8s.io/v1': [
        { name: 'customresourcedefinitions', kind: 'CustomResourceDefinition', namespaced: false },
      ],
    },
  );
  return { client, applies };
}

describe("a runtime's bootstrap", () => {
  it('is not applied again by a full sync right after it, and is 30 s later', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const { client, applies } = await runtime();
    const setup = new RuntimeBootstrap(client);
    await setup.bootstrap(client);
    const once = applies.length;
    expect(applies).toContain('/api/v1/namespaces/kyma-system');
    expect(applies.filter((p) => p.includes('customresourcedefinitions'))).toHaveLength(3);

    await setup.bootstrap(client, true);
    expect(applies).toHaveLength(once);

    vi.setSystemTime(Date.now() + 31_000);
    await setup.bootstrap(client);
    expect(applies).toHaveLength(once);
    await setup.bootstrap(client, true);
    expect(applies).toHaveLength(2 * once);
  });
});
