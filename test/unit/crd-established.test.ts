// waitEstablished watches each applied CRD from the version its apply answered and is done with
// the event that says Established: one request, where reading every 200 ms took two or three. A
// watch whose version is too old starts again without one; an identity that may not watch CRDs
// reads them; one that never becomes Established fails with its name once the time is up.
import type http from 'node:http';
import { describe, expect, it } from 'vitest';
import { waitEstablished } from '../../src/k8s/crds';
import { loopbackApiServer } from '../support/loopback-api';

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
  const client = await loopbackApiServer(
    (req, res) => {
      const url = new URL(req.url ?? '/', 'http://x');
      res.setHeader('content-type', 'application/json');
      const watch = url.searchParams.get('watch')
        ? ` watch from ${url.searchParams.get('resourceVersion') ?? '-'}`
        : '';
      requests.push(`${req.method} ${url.pathname}${watch}`);
      answer(url, res);
    },
    {
      '/apis/apiextensions.k8s.io/v1': [
        { name: 'customresourcedefinitions', kind: 'CustomResourceDefinition', namespaced: false },
      ],
    },
  );
  return { client, requests };
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

  it('does not take a CRD deleted meanwhile for Established', async () => {
    const { client } = await apiServer((_url, res) => event(res, 'DELETED', crd('11', true)));
    await expect(waitEstablished(client, [crd('10', false)], wait(1_000))).rejects.toThrow(`pending: ${NAME}`);
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
