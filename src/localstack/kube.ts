// kube-apiserver on etcd, with client-certificate auth from a generated CA, and for the full
// profile kube-controller-manager and kube-scheduler, so that Deployments really roll out.
import { readFile, writeFile } from 'node:fs/promises';
import https from 'node:https';
import path from 'node:path';
import { stringify } from 'yaml';
import type { Pki } from './pki';
import { freePort } from './ports';
import { startProcess, waitUntil, type ManagedProcess } from './process';
import { supervise } from './supervise';

export interface ApiServer {
  url: string;
  kubeconfig: string;
  process: ManagedProcess;
}

async function b64(file: string): Promise<string> {
  return (await readFile(file)).toString('base64');
}

/** A self-contained kubeconfig (certificates embedded), usable from a Secret as well. */
export async function writeKubeconfig(file: string, server: string, pki: Pki, name = 'klm-local'): Promise<void> {
  const doc = {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name, cluster: { server, 'certificate-authority-data': await b64(pki.caCert) } }],
    users: [
      {
        name: 'admin',
        user: { 'client-certificate-data': await b64(pki.adminCert), 'client-key-data': await b64(pki.adminKey) },
      },
    ],
    contexts: [{ name, context: { cluster: name, user: 'admin' } }],
    'current-context': name,
  };
  await writeFile(file, stringify(doc), { mode: 0o600 });
}

/** GET on the API server with the admin client certificate. */
export async function apiGet(url: string, pki: Pki, p: string): Promise<{ status: number; body: string }> {
  const [ca, cert, key] = await Promise.all([readFile(pki.caCert), readFile(pki.adminCert), readFile(pki.adminKey)]);
  return await new Promise((resolve, reject) => {
    const req = https.get(`${url}${p}`, { ca, cert, key, timeout: 5000 }, (res) => {
      let body = '';
      res.on('data', (d: Buffer) => (body += d.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.on('timeout', () => req.destroy(new Error('timeout')));
  });
}

export interface ApiServerOptions {
  /** The port to serve on (a restarted server keeps its address); a free one by default. */
  port?: number;
  /** Further flags (an authentication webhook, say). */
  extraArgs?: string[];
  /** Restart the server when it exits on its own (default); tests that kill it on purpose say false. */
  supervised?: boolean;
}

/** An API server on the shared etcd; `etcdPrefix` keeps further clusters' data apart. */
export async function startApiServer(
  binary: string,
  dir: string,
  etcdUrl: string,
  pki: Pki,
  etcdPrefix = '/registry',
  opts: ApiServerOptions = {},
): Promise<ApiServer> {
  const port = opts.port ?? (await freePort());
  const url = `https://127.0.0.1:${port}`;
  const spawn = () =>
    startProcess(
      'kube-apiserver',
      binary,
      [
        `--etcd-servers=${etcdUrl}`,
        `--etcd-prefix=${etcdPrefix}`,
        '--bind-address=127.0.0.1',
        '--advertise-address=127.0.0.1',
        `--secure-port=${port}`,
        `--cert-dir=${path.join(dir, 'apiserver-certs')}`,
        `--tls-cert-file=${pki.serverCert}`,
        `--tls-private-key-file=${pki.serverKey}`,
        `--client-ca-file=${pki.caCert}`,
        `--service-account-key-file=${pki.saPub}`,
        `--service-account-signing-key-file=${pki.saKey}`,
        '--service-account-issuer=https://kubernetes.default.svc.cluster.local',
        '--service-cluster-ip-range=10.0.0.0/24',
        '--authorization-mode=RBAC',
        '--allow-privileged=true',
        // Pods in the local cluster are simulated by kwok: no token volume is needed, and a
        // module's pods must not be refused while its ServiceAccount is still being applied.
        '--disable-admission-plugins=ServiceAccount',
        '--enable-priority-and-fairness=false',
        '--max-requests-inflight=2000',
        '--max-mutating-requests-inflight=1000',
        '--v=0',
        ...(opts.extraArgs ?? []),
      ],
      { logFile: path.join(dir, 'kube-apiserver.log') },
    );
  const ready = (p: ManagedProcess) =>
    waitUntil(p, 'ready', async () => (await apiGet(url, pki, '/readyz')).status === 200, 120_000);
  let proc: ManagedProcess;
  if (opts.supervised === false) {
    proc = spawn();
    await ready(proc).catch(async (err: unknown) => {
      await proc.stop();
      throw err;
    });
  } else {
    proc = await supervise(spawn, ready);
  }
  const kubeconfig = path.join(dir, 'kubeconfig');
  await writeKubeconfig(kubeconfig, url, pki);
  return { url, kubeconfig, process: proc };
}

/** Flags the controller-manager and the scheduler share: the API server, loopback serving. */
function componentFlags(api: ApiServer, port: number): string[] {
  return [
    `--kubeconfig=${api.kubeconfig}`,
    `--authentication-kubeconfig=${api.kubeconfig}`,
    `--authorization-kubeconfig=${api.kubeconfig}`,
    '--bind-address=127.0.0.1',
    `--secure-port=${port}`,
    '--leader-elect=false',
  ];
}

export async function startControllerManager(
  binary: string,
  dir: string,
  api: ApiServer,
  pki: Pki,
): Promise<ManagedProcess> {
  const port = await freePort();
  const spawn = () =>
    startProcess(
      'kube-controller-manager',
      binary,
      [
        ...componentFlags(api, port),
        `--service-account-private-key-file=${pki.saKey}`,
        `--root-ca-file=${pki.caCert}`,
        '--use-service-account-credentials=false',
        // Controllers for clouds, nodes' networks and volumes: none here.
        '--controllers=*,-nodeipam,-cloud-node-lifecycle,-service-lb-controller,-node-route-controller,' +
          '-persistentvolume-binder,-attachdetach,-persistentvolume-expander',
        // Defaults (20 QPS, 5 Deployment syncs at a time) would make the simulated cluster's own
        // rollouts, not the lifecycle manager, the limit of a fleet benchmark.
        '--kube-api-qps=500',
        '--kube-api-burst=1000',
        '--concurrent-deployment-syncs=20',
        '--concurrent-replicaset-syncs=20',
        '--v=0',
      ],
      { logFile: path.join(dir, 'kube-controller-manager.log') },
    );
  return await supervise(spawn, (p) => waitUntil(p, 'healthy', async () => (await selfSignedHealth(port)) === 200));
}

export async function startScheduler(binary: string, dir: string, api: ApiServer): Promise<ManagedProcess> {
  const port = await freePort();
  return await supervise(
    () =>
      startProcess(
        'kube-scheduler',
        binary,
        [...componentFlags(api, port), '--kube-api-qps=500', '--kube-api-burst=1000', '--v=0'],
        { logFile: path.join(dir, 'kube-scheduler.log') },
      ),
    (p) => waitUntil(p, 'healthy', async () => (await selfSignedHealth(port)) === 200),
  );
}

/** The controller-manager and scheduler serve /healthz on loopback with a self-signed certificate. */
async function selfSignedHealth(port: number): Promise<number> {
  return await new Promise((resolve, reject) => {
    const req = https.get(`https://127.0.0.1:${port}/healthz`, { rejectUnauthorized: false, timeout: 5000 }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
  });
}
