// A stand-in API server on loopback for unit tests that count what a client asks: `handler`
// answers every request; the test gets a KubeClient for it. Servers close after each test.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach } from 'vitest';
import { stringify } from 'yaml';
import { kubeConfigFromString } from '../../src/k8s/kubeconfig';
import { KubeClient } from '../../src/k8s/rest-client';

const servers: http.Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise((r) => s.close(r))));
});

/** What API discovery of a group version answers: its resources. */
export type Discovery = Record<string, { name: string; kind: string; namespaced: boolean }[]>;

/** Serves `handler` on a loopback port, discovery from `discovery` first; a client for it. */
export async function loopbackApiServer(handler: http.RequestListener, discovery: Discovery = {}): Promise<KubeClient> {
  const server = http.createServer((req, res) => {
    const path = (req.url ?? '').split('?')[0]!;
    if (req.method === 'GET' && discovery[path]) {
      res.setHeader('content-type', 'application/json');
      return res.end(JSON.stringify({ resources: discovery[path] }));
    }
    handler(req, res);
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const config = stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [
      {
        name: 'c',
        cluster: {
          server: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
          'insecure-skip-tls-verify': true,
        },
      },
    ],
    users: [{ name: 'u', user: {} }],
    contexts: [{ name: 'c', context: { cluster: 'c', user: 'u' } }],
    'current-context': 'c',
  });
  return await KubeClient.fromKubeConfig(kubeConfigFromString(config), {});
}
