// Debian's docker-registry (the CNCF distribution registry 2.8) on a loopback port: plain HTTP
// by default; with `tls`, HTTPS with a certificate from a local CA; with `tokenAuth`, the
// distribution token flow against a token service (src/localstack/registry-token.ts).
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import https from 'node:https';
import path from 'node:path';
import { freePort } from './ports';
import { startProcess, waitUntil, type ManagedProcess } from './process';
import { supervise } from './supervise';

export interface Registry {
  /** host:port, as used in OCI references. */
  host: string;
  url: string;
  process: ManagedProcess;
}

export interface RegistryOptions {
  /** Serve HTTPS with this certificate and key (PEM files). */
  tls?: { cert: string; key: string; ca: string };
  /** Require tokens from this service: `realm` is its token URL; tokens must chain to `rootCertBundle`. */
  tokenAuth?: { realm: string; service: string; issuer: string; rootCertBundle: string };
  /** Subdirectory of `dir` for config, data and log (several registries in one dir). */
  name?: string;
}

/** GET /v2/ over HTTPS trusting `ca`: a status code, or an error. */
async function httpsStatus(url: string, ca: string): Promise<number> {
  return await new Promise((resolve, reject) => {
    https
      .get(url, { ca }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      })
      .on('error', reject);
  });
}

export async function startRegistry(binary: string, dir: string, opts: RegistryOptions = {}): Promise<Registry> {
  const port = await freePort();
  const base = opts.name ? path.join(dir, opts.name) : dir;
  const root = path.join(base, 'registry-data');
  await mkdir(root, { recursive: true });
  const config = path.join(base, 'registry.yml');
  await writeFile(
    config,
    [
      'version: 0.1',
      'log:',
      '  level: warn',
      'storage:',
      '  filesystem:',
      `    rootdirectory: ${root}`,
      '  delete:',
      '    enabled: true',
      'http:',
      `  addr: 127.0.0.1:${port}`,
      ...(opts.tls ? ['  tls:', `    certificate: ${opts.tls.cert}`, `    key: ${opts.tls.key}`] : []),
      ...(opts.tokenAuth
        ? [
            'auth:',
            '  token:',
            `    realm: ${opts.tokenAuth.realm}`,
            `    service: ${opts.tokenAuth.service}`,
            `    issuer: ${opts.tokenAuth.issuer}`,
            `    rootcertbundle: ${opts.tokenAuth.rootCertBundle}`,
          ]
        : []),
      '',
    ].join('\n'),
  );
  const host = `127.0.0.1:${port}`;
  const url = `${opts.tls ? 'https' : 'http'}://${host}`;
  const ca = opts.tls ? await readFile(opts.tls.ca, 'utf8') : '';
  // With token auth, /v2/ answers 401 until a token is shown: serving all the same.
  const serving = async () => {
    const status = opts.tls ? await httpsStatus(`${url}/v2/`, ca) : (await fetch(`${url}/v2/`)).status;
    return status === 200 || (status === 401 && !!opts.tokenAuth);
  };
  const proc = await supervise(
    () => startProcess('registry', binary, ['serve', config], { logFile: path.join(base, 'registry.log') }),
    (p) => waitUntil(p, 'serving /v2/', serving),
  );
  return { host, url, process: proc };
}
