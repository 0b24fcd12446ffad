// waitEstablished watches each applied CRD from the version its apply answered and is done with
// the event that says Established: one request, where reading every 200 ms took two or three. A
// watch whose version is too old starts again without one; an identity that may not watch CRDs
// reads them; one that never becomes Established fails with its name once the time is up.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { waitEstablished } from '../../src/k8s/crds';
import { kubeConfigFromString } from '../../src/k8s/kubeconfig';
import { KubeClient } from '../../src/k8s/rest-client';

const servers: http.Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise((r) => s.close(r))));
});

const CRDS = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';
const NAME = 'greeters.example.io';
const crd = (resourceVersion: string, established: boolean) => ({
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: NAME, resourceVersion },
  status: { conditions: established ? [{ type: 'Established', status: 'True' }] : [] },
});

type Answer = (url: URL, res: http.ServerResponse) => void;

/** An API server whose watches and reads of CRDs `answer` answers; every request is noted. */
async function apiServer(answer: Answer) {
  const requests: string[] = [];
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    res.setHeader('content-type', 'application/json');
    if (url.pathname === '/apis/apiextensions.k8s.io/v1')
      return res.end(
        JSON.stringify({
          resources: [{ name: 'customresourcedefinitions', kind: 'CustomResourceDefinition', namespaced: false }],
        }),
      );
    const watch = url.searchParams.get('watch') ? ` watch from ${url.searchParams.get('resourceVersion') ?? '-'}` : '';
    requests.push(`${req.method} ${url.pathname}${watch}`);
    answer(url, res);
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
  return { client: await KubeClient.fromKubeConfig(kubeConfigFromString(config), {}), requests };
}

const event = (res: http.ServerResponse, type: string, object: unknown) =>
  res.write(`${JSON.stringify({ type, object })}\n`);
const wait = (timeoutMs: number) => ({
  timeoutMs,
  timedOut: (pending: string[]) => new Error(`pending: ${pending.join(', ')}`),
});

describe('waitEstablished', () => {
  it('watches the CRD from its applied version and is done with the event that says Established', async () => {
    const { client, requests } = await apiServer((_url, res) => {
      event(res, 'MODIFIED', crd('11', false));
      setTimeout(() => event(res, 'MODIFIED', crd('12', true)), 50);
    });
    await waitEstablished(client, [crd('10', false)], wait(5_000));
    expect(requests).toEqual([`GET ${CRDS} watch from 10`]);
  });

  it('does not wait for a CRD whose apply answer says Established', async () => {
    const { client, requests } = await apiServer((_url, res) => res.end());
    await waitEstablished(client, [crd('10', true)], wait(5_000));
    expect(requests).toEqual([]);
  });

  it('starts again without a version when the server has none that old (410 Gone)', async () => {
    const { client, requests } = await apiServer((url, res) => {
      if (url.searchParams.get('resourceVersion'))
        return event(res, 'ERROR', { kind: 'Status', code: 410, reason: 'Expired', metadata: {} });
      event(res, 'ADDED', crd('20', true));
    });
    await waitEstablished(client, [crd('10', false)], wait(5_000));
    expect(requests).toEqual([`GET ${CRDS} watch from 10`, `GET ${CRDS} watch from -`]);
  });

  it('reads the CRD where the identity may not watch CRDs', async () => {
    let reads = 0;
    const { client, requests } = await apiServer((url, res) => {
      if (url.searchParams.get('watch')) {
        res.statusCode = 403;
        return res.end(JSON.stringify({ kind: 'Status', code: 403, reason: 'Forbidden', message: 'no watch' }));
      }
      res.end(JSON.stringify(crd('12', ++reads > 1)));
    });
    await waitEstablished(client, [crd('10', false)], wait(5_000));
    expect(requests).toEqual([`GET ${CRDS} watch from 10`, `GET ${CRDS}/${NAME}`, `GET ${CRDS}/${NAME}`]);
  });

  it('fails naming the CRD that did not become Established in time, and heartbeats meanwhile', async () => {
    const { client } = await apiServer((_url, res) => event(res, 'MODIFIED', crd('11', false)));
    let beats = 0;
    const started = Date.now();
    await expect(
      waitEstablished(client, [crd('10', false)], { ...wait(1_500), onWait: () => beats++ }),
    ).rejects.toThrow(`pending: ${NAME}`);
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(beats).toBeGreaterThanOrEqual(1);
  });
});
