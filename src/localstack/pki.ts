// A throw-away PKI for the local API server: a CA, the server's serving certificate,
// an admin client certificate (group system:masters) and the service-account key pair.
// Generated with the openssl CLI, which Debian ships on every machine of this kind.
import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';

const exec = promisify(execFile);

export interface Pki {
  caCert: string;
  caKey: string;
  serverCert: string;
  serverKey: string;
  adminCert: string;
  adminKey: string;
  saPub: string;
  saKey: string;
}

async function openssl(args: string[], cwd: string): Promise<void> {
  await exec('openssl', args, { cwd });
}

async function issue(dir: string, name: string, subject: string, ext: string, days = 365): Promise<void> {
  await writeFile(path.join(dir, `${name}.ext`), ext);
  // The names are ours (no spaces): the words split at spaces, the subject kept whole.
  const req = `req -new -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout ${name}.key -out ${name}.csr`;
  await openssl([...req.split(' '), '-subj', subject], dir);
  const sign = `x509 -req -in ${name}.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days ${days} -out ${name}.crt`;
  await openssl([...sign.split(' '), '-extfile', `${name}.ext`], dir);
}

/** The PKI that generatePki wrote into `dir`. */
export function pkiIn(dir: string): Pki {
  const p = (f: string) => path.join(dir, f);
  return {
    caCert: p('ca.crt'),
    caKey: p('ca.key'),
    serverCert: p('server.crt'),
    serverKey: p('server.key'),
    adminCert: p('admin.crt'),
    adminKey: p('admin.key'),
    saPub: p('sa.pub'),
    saKey: p('sa.key'),
  };
}

/** A CA of its own in `dir` (ca.crt, ca.key), for `issueCert`. */
export async function generateCa(dir: string, cn = 'klm-local-ca'): Promise<{ caCert: string; caKey: string }> {
  await openssl(
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-days',
      '365',
      '-keyout',
      'ca.key',
      '-out',
      'ca.crt',
      '-subj',
      `/CN=${cn}`,
      '-addext',
      'basicConstraints=critical,CA:TRUE',
      '-addext',
      'keyUsage=critical,keyCertSign,cRLSign',
    ],
    dir,
  );
  return { caCert: path.join(dir, 'ca.crt'), caKey: path.join(dir, 'ca.key') };
}

/**
 * An EC P-256 certificate `<name>.crt` / `<name>.key` issued by the CA in `dir`: for a server
 * (`serverAuth`, `sans`) or a client (`clientAuth`; `group` becomes its O, a Kubernetes group).
 * Valid for a year, or `days` (-1: it expired a day ago, for tests).
 */
export async function issueCert(
  dir: string,
  name: string,
  cn: string,
  opts: { serverAuth?: boolean; clientAuth?: boolean; group?: string; sans?: string[]; days?: number } = {},
): Promise<{ cert: string; key: string }> {
  const usage = [...(opts.serverAuth ? ['serverAuth'] : []), ...(opts.clientAuth ? ['clientAuth'] : [])];
  await issue(
    dir,
    name,
    `${opts.group ? `/O=${opts.group}` : ''}/CN=${cn}`,
    [
      'basicConstraints=CA:FALSE',
      'keyUsage=critical,digitalSignature,keyEncipherment',
      ...(usage.length ? [`extendedKeyUsage=${usage.join(',')}`] : []),
      ...(opts.sans?.length ? [`subjectAltName=${opts.sans.join(',')}`] : []),
      '',
    ].join('\n'),
    opts.days,
  );
  return { cert: path.join(dir, `${name}.crt`), key: path.join(dir, `${name}.key`) };
}

export async function generatePki(dir: string): Promise<Pki> {
  await generateCa(dir);
  await issue(
    dir,
    'server',
    '/CN=kube-apiserver',
    [
      'basicConstraints=CA:FALSE',
      'keyUsage=critical,digitalSignature,keyEncipherment',
      'extendedKeyUsage=serverAuth',
      'subjectAltName=IP:127.0.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,IP:10.0.0.1',
      '',
    ].join('\n'),
  );
  await issue(
    dir,
    'admin',
    '/O=system:masters/CN=klm-admin',
    [
      'basicConstraints=CA:FALSE',
      'keyUsage=critical,digitalSignature,keyEncipherment',
      'extendedKeyUsage=clientAuth',
      '',
    ].join('\n'),
  );
  await openssl(['genpkey', '-algorithm', 'RSA', '-pkeyopt', 'rsa_keygen_bits:2048', '-out', 'sa.key'], dir);
  await openssl(['pkey', '-in', 'sa.key', '-pubout', '-out', 'sa.pub'], dir);
  return pkiIn(dir);
}
