// A target cluster of a test's own: a kube-apiserver on the shared etcd (under a key prefix of
// its own), not supervised, so that a test may stop, kill and restart it; it accepts client
// certificates from the stack's CA and bearer tokens of the form `klmexec.<expiry ms>.<hmac>`
// through a token webhook that refuses them once they expired. A sample manager reports the
// module CRs Ready there.
import { createHmac, randomBytes } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { stringify } from 'yaml';
import { kubeConfigFromFile } from '../../src/k8s/kubeconfig';
import { KubeClient } from '../../src/k8s/rest-client';
import { startApiServer, type ApiServer } from '../../src/localstack/kube';
import { pkiIn } from '../../src/localstack/pki';
import { SampleManager } from '../../src/samples/manager';
import { stackInfo, uniqueName } from './stack';

export interface OwnCluster {
  url: string;
  client: KubeClient;
  manager: SampleManager;
  /** The server's pid, for signals. */
  pid(): number;
  /** Starts it again on the same port and data, after it was killed. */
  restart(): Promise<void>;
  /** How many tokens the webhook accepted and refused. */
  tokens: { accepted: number; refused: number };
  /** A token that expired already, as the exec plugin issues them. */
  expiredToken(): string;
  /** A kubeconfig with a client certificate, or with an exec plugin issuing tokens valid for `ttlMs`. */
  certKubeconfig(cert: string, key: string): Promise<string>;
  execKubeconfig(ttlMs: number, countFile: string): Promise<string>;
  /** A kubeconfig whose user entry is `user` (a static token, a client key of one's own). */
  userKubeconfig(user: Record<string, unknown>): string;
  stop(): Promise<void>;
}

const PLUGIN = `import { createHmac } from 'node:crypto';
import { appendFileSync } from 'node:fs';
const exp = Date.now() + Number(process.env.KLM_TEST_TTL_MS);
const sig = createHmac('sha256', process.env.KLM_TEST_KEY).update(String(exp)).digest('hex');
appendFileSync(process.env.KLM_TEST_COUNT_FILE, 'x');
const status = { token: 'klmexec.' + exp + '.' + sig, expirationTimestamp: new Date(exp).toISOString() };
process.stdout.write(JSON.stringify({ apiVersion: 'client.authentication.k8s.io/v1', kind: 'ExecCredential', status }));
`;

function token(key: string, exp: number): string {
  return `klmexec.${exp}.${createHmac('sha256', key).update(String(exp)).digest('hex')}`;
}

export async function startOwnCluster(): Promise<OwnCluster> {
  const info = stackInfo();
  const pki = pkiIn(info.pkiDir);
  const name = uniqueName('own');
  const dir = path.join(info.dir, name);
  await mkdir(dir, { recursive: true });
  const key = randomBytes(16).toString('hex');
  const tokens = { accepted: 0, refused: 0 };
  const webhook = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      const review = JSON.parse(body) as { spec: { token: string } };
      const [, exp] = review.spec.token.split('.');
      const ok = review.spec.token === token(key, Number(exp)) && Number(exp) > Date.now();
      if (ok) tokens.accepted++;
      else tokens.refused++;
      res.setHeader('content-type', 'application/json');
      res.end(
        JSON.stringify({
          apiVersion: 'authentication.k8s.io/v1',
          kind: 'TokenReview',
          status: ok
            ? { authenticated: true, user: { username: 'klm-exec', groups: ['system:masters'] } }
            : { authenticated: false },
        }),
      );
    });
  });
  await new Promise<void>((r) => webhook.listen(0, '127.0.0.1', r));
  const webhookConfig = path.join(dir, 'token-webhook.yaml');
  await writeFile(
    webhookConfig,
    stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [
        { name: 'webhook', cluster: { server: `http://127.0.0.1:${(webhook.address() as AddressInfo).port}/` } },
      ],
      users: [{ name: 'apiserver', user: {} }],
      contexts: [{ name: 'webhook', context: { cluster: 'webhook', user: 'apiserver' } }],
      'current-context': 'webhook',
    }),
  );
  const flags = [
    `--authentication-token-webhook-config-file=${webhookConfig}`,
    '--authentication-token-webhook-cache-ttl=1s',
    '--authentication-token-webhook-version=v1',
  ];
  const start = (port?: number) =>
    startApiServer(info.tools.kubeApiserver, dir, info.etcdUrl, pki, `/${name}`, {
      supervised: false,
      extraArgs: flags,
      ...(port ? { port } : {}),
    });
  let api: ApiServer = await start();
  const port = Number(new URL(api.url).port);
  const client = await KubeClient.fromKubeConfig(kubeConfigFromFile(api.kubeconfig));
  const manager = new SampleManager({ client, kinds: [] });
  manager.start();
  const ca = (await readFile(pki.caCert)).toString('base64');
  const cluster = { name, cluster: { server: api.url, 'certificate-authority-data': ca } };
  const kubeconfig = (user: Record<string, unknown>) =>
    stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [cluster],
      users: [{ name: 'user', user }],
      contexts: [{ name, context: { cluster: name, user: 'user' } }],
      'current-context': name,
    });
  const plugin = path.join(dir, 'exec-plugin.mjs');
  await writeFile(plugin, PLUGIN);
  return {
    url: api.url,
    client,
    manager,
    tokens,
    pid: () => api.process.pid()!,
    async restart() {
      api = await start(port);
    },
    expiredToken: () => token(key, Date.now() - 1000),
    async certKubeconfig(cert, certKey) {
      return kubeconfig({
        'client-certificate-data': (await readFile(cert)).toString('base64'),
        'client-key-data': (await readFile(certKey)).toString('base64'),
      });
    },
    userKubeconfig: kubeconfig,
    execKubeconfig(ttlMs, countFile) {
      return Promise.resolve(
        kubeconfig({
          exec: {
            apiVersion: 'client.authentication.k8s.io/v1',
            command: process.execPath,
            args: [plugin],
            env: [
              { name: 'KLM_TEST_TTL_MS', value: String(ttlMs) },
              { name: 'KLM_TEST_KEY', value: key },
              { name: 'KLM_TEST_COUNT_FILE', value: countFile },
            ],
            interactiveMode: 'Never',
          },
        }),
      );
    },
    async stop() {
      manager.stop();
      client.close();
      if (!api.process.hasExited()) await api.process.stop();
      await new Promise((r) => webhook.close(r));
    },
  };
}
