// KubeClient through a cluster's proxy-url (an HTTP CONNECT proxy here) to a TLS server that asks
// for a client certificate: the certificate an exec plugin hands out reaches the server, and so
// does the next one it hands out when the first expires. client-node 2 keeps one proxy agent per
// cluster and user name in a KubeConfig, with the TLS material of the first call: the client
// must not take that agent for renewed material.
import { readFile, rm } from 'node:fs/promises';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { afterEach, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { kubeConfigFromString } from '../../src/k8s/kubeconfig';
import { KubeClient } from '../../src/k8s/rest-client';
import { generateCa, issueCert } from '../../src/localstack/pki';
import { execPlugin } from '../support/exec-plugin';

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  await Promise.all(cleanups.splice(0).map((c) => c()));
});

function listen(server: net.Server): Promise<number> {
  cleanups.push(() => new Promise((r) => server.close(r)));
  return new Promise((r) => server.listen(0, '127.0.0.1', () => r((server.address() as AddressInfo).port)));
}

/** A forward proxy that tunnels CONNECT requests and counts them. */
async function connectProxy(): Promise<{ url: string; tunnels: () => number }> {
  let tunnels = 0;
  const proxy = http.createServer((_req, res) => res.writeHead(405).end());
  const open = new Set<net.Socket>();
  proxy.on('connect', (req: http.IncomingMessage, client: net.Socket, head: Buffer) => {
    tunnels++;
    const [host, port] = (req.url ?? '').split(':');
    const upstream = net.connect(Number(port), host, () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      upstream.write(head);
      upstream.pipe(client).pipe(upstream);
    });
    for (const s of [client, upstream]) {
      open.add(s);
      s.on('error', () => undefined).on('close', () => open.delete(s));
    }
  });
  cleanups.push(() => Promise.resolve(open.forEach((s) => s.destroy())));
  return { url: `http://127.0.0.1:${await listen(proxy)}`, tunnels: () => tunnels };
}

describe('KubeClient through a proxy', () => {
  it('presents the client certificate an exec plugin hands out anew, not the first one, once the first expired', async () => {
    // The n-th run hands out client-n's certificate and key, valid for 300 ms.
    const plugin = await execPlugin(
      "{ clientCertificateData: readFileSync(dir + '/client-' + n + '.crt', 'utf8'), " +
        "clientKeyData: readFileSync(dir + '/client-' + n + '.key', 'utf8'), " +
        'expirationTimestamp: new Date(Date.now() + 300).toISOString() }',
    );
    const dir = plugin.dir;
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    const { caCert } = await generateCa(dir);
    const server = await issueCert(dir, 'server', '127.0.0.1', { serverAuth: true, sans: ['IP:127.0.0.1'] });
    for (const n of [1, 2]) await issueCert(dir, `client-${n}`, `client-${n}`, { clientAuth: true });
    const ca = await readFile(caCert);

    const seen: string[] = [];
    const api = https.createServer(
      { cert: await readFile(server.cert), key: await readFile(server.key), ca, requestCert: true },
      (req, res) => {
        seen.push(String((req.socket as TLSSocket).getPeerCertificate().subject?.CN));
        res.setHeader('Content-Type', 'application/json');
        res.end('{}');
      },
    );
    const port = await listen(api);
    const proxy = await connectProxy();

    const kubeconfig = stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [
        {
          name: 'c',
          cluster: {
            server: `https://127.0.0.1:${port}`,
            'certificate-authority-data': ca.toString('base64'),
            'proxy-url': proxy.url,
          },
        },
      ],
      users: [
        {
          name: 'u',
          user: plugin.user(),
        },
      ],
      contexts: [{ name: 'c', context: { cluster: 'c', user: 'u' } }],
      'current-context': 'c',
    });

    const c = await KubeClient.fromKubeConfig(kubeConfigFromString(kubeconfig));
    cleanups.push(() => Promise.resolve(c.close()));
    await c.request('GET', '/version');
    await new Promise((r) => setTimeout(r, 500));
    await c.request('GET', '/version');
    expect(seen).toEqual(['client-1', 'client-2']);
    expect(proxy.tunnels()).toBe(2);
  });
});
