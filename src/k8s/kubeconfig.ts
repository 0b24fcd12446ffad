// Loading kubeconfigs: from a file (the control plane) or from a string (a Secret's data); and
// checking their TLS material before a connection takes it, so that a broken key is named by its
// field instead of by OpenSSL's words at the first request.
import { createPrivateKey, X509Certificate } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { createSecureContext } from 'node:tls';
import { KubeConfig } from '@kubernetes/client-node';

/**
 * A kubeconfig that is not YAML a kubeconfig can be read from. The parser's own message quotes the
 * lines around the error, and those may hold a token or a key: this one says only where it is.
 */
export class KubeconfigSyntaxError extends Error {
  constructor(
    what: string,
    /** ` (line L, column C)`, or empty where the parser did not say. */
    readonly at: string,
  ) {
    super(`${what} is not YAML a kubeconfig can be read from${at}`);
    this.name = 'KubeconfigSyntaxError';
  }
}

/** Loads `load` into a new KubeConfig; a parse error becomes a KubeconfigSyntaxError about `what`. */
function loaded(what: string, load: (kc: KubeConfig) => void): KubeConfig {
  const kc = new KubeConfig();
  try {
    load(kc);
  } catch (err) {
    const mark = (err as { mark?: { line?: number; column?: number } }).mark;
    if (!mark && (err as NodeJS.ErrnoException).code) throw err; // the file cannot be read: its error names only the path
    const at = mark?.line !== undefined ? ` (line ${mark.line + 1}, column ${(mark.column ?? 0) + 1})` : '';
    throw new KubeconfigSyntaxError(what, at);
  }
  return kc;
}

export function kubeConfigFromFile(file: string): KubeConfig {
  return loaded(`the kubeconfig ${file}`, (kc) => kc.loadFromFile(file));
}

export function kubeConfigFromString(yaml: string): KubeConfig {
  return loaded('the kubeconfig', (kc) => kc.loadFromString(yaml));
}

/** Where a pod's service account token is (client-node's in-cluster configuration reads it). */
const SERVICE_ACCOUNT_TOKEN = '/var/run/secrets/kubernetes.io/serviceaccount/token';

/** There is no kubeconfig where one is looked for by default: the message names each place. */
export class NoKubeconfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'NoKubeconfigError';
  }
}

/**
 * The kubeconfig found by default, as kubectl and client-node look: the files KUBECONFIG names,
 * else ~/.kube/config, else the service account of the pod this runs in. Where there is none,
 * NoKubeconfigError says where it looked (client-node would go on with http://localhost:8080
 * and no credentials, which fails later and tells nothing of it).
 */
export function defaultKubeConfig(env: NodeJS.ProcessEnv = process.env): KubeConfig {
  const files = (env.KUBECONFIG ?? '').split(path.delimiter).filter(Boolean);
  const missing = files.filter((f) => !existsSync(f));
  if (missing.length)
    throw new NoKubeconfigError(
      `no kubeconfig: KUBECONFIG names ${missing.join(', ')}, which ${missing.length > 1 ? 'do' : 'does'} not exist`,
    );
  const home = env.HOME ? path.join(env.HOME, '.kube', 'config') : undefined;
  if (files.length === 0 && !(home && existsSync(home)) && !existsSync(SERVICE_ACCOUNT_TOKEN))
    throw new NoKubeconfigError(
      `no kubeconfig: KUBECONFIG is not set, ${home ? `${home} does not exist` : 'HOME is not set (no ~/.kube/config)'}, ` +
        `and this runs in no pod with a service account (no ${SERVICE_ACCOUNT_TOKEN})`,
    );
  return loaded(files.length ? `the kubeconfig ${files.join(', ')}` : 'the kubeconfig', (kc) => kc.loadFromDefault());
}

/** TLS material of a kubeconfig that cannot be used: where it is, what is wrong, what to do; never what it holds. */
export interface TlsProblem {
  /** The kubeconfig entry: `user "admin"`, `cluster "c"`. */
  entry: string;
  /** The field: `client-key-data`, `client-certificate`, `certificate-authority-data`, … */
  field: string;
  /** What is wrong with it, e.g. "is not PEM after base64 decoding". */
  problem: string;
  /** What to put there instead. */
  fix: string;
}

/** "user "admin" has a client-key-data that …; put …": the problem in one sentence. */
export function describeTlsProblem(p: TlsProblem): string {
  return `${p.entry} has ${/^[aeiou]/.test(p.field) ? 'an' : 'a'} ${p.field} that ${p.problem}; ${p.fix}`;
}

type Kind = 'key' | 'certificate' | 'ca';

const WHAT: Record<Kind, string> = {
  key: "the user's private key",
  certificate: "the user's client certificate",
  ca: "the certificate of the CA that signed the API server's certificate",
};

/** A `<name>-data` or `<name>` (file) field: its name, what belongs there, and its PEM or what is wrong with the field itself. */
interface Material {
  field: string;
  fix: string;
  pem?: Buffer;
  problem?: string;
}

function material(kind: Kind, name: string, data: string | undefined, file: string | undefined): Material | undefined {
  if (file) {
    const m = {
      field: name,
      fix: `make it name a file holding ${WHAT[kind]} (PEM${kind === 'key' ? ', unencrypted' : ''})`,
    };
    try {
      return { ...m, pem: readFileSync(file) };
    } catch (err) {
      return { ...m, problem: `names a file that cannot be read (${(err as { code?: string }).code ?? 'error'})` };
    }
  }
  if (!data) return undefined;
  const m = {
    field: `${name}-data`,
    fix: `put ${WHAT[kind]} there (PEM${kind === 'key' ? ', unencrypted' : ''}, then base64-encoded)`,
  };
  if (data.includes('-----BEGIN')) return { ...m, problem: 'holds PEM text, where the field takes it base64-encoded' };
  const pem = Buffer.from(data, 'base64');
  if (!pem.includes('-----BEGIN ')) return { ...m, problem: 'is not PEM after base64 decoding' };
  return { ...m, pem };
}

/** What is wrong with PEM material of one kind, if anything (OpenSSL's words are not used: they name no field). */
function pemProblem(kind: Kind, pem: Buffer): string | undefined {
  if (kind === 'key' && /-----BEGIN ENCRYPTED PRIVATE KEY-----|Proc-Type: 4,ENCRYPTED/.test(pem.toString('latin1'))) {
    return 'is an encrypted private key (a kubeconfig has no passphrase for it)';
  }
  try {
    if (kind === 'key') createSecureContext({ key: pem });
    else if (kind === 'certificate') createSecureContext({ cert: pem });
    else {
      const blocks =
        pem.toString('latin1').match(/-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g) ?? [];
      if (blocks.length === 0) return 'holds no PEM certificate';
      for (const b of blocks) new X509Certificate(b);
    }
    return undefined;
  } catch {
    return kind === 'key'
      ? 'is not a private key that can be read (damaged, truncated or of an unsupported type)'
      : 'holds a certificate that cannot be read (damaged or truncated)';
  }
}

/** Whether a client certificate and key are of one key pair. */
function belong(cert: Buffer | string, key: Buffer | string): boolean {
  try {
    return new X509Certificate(cert).checkPrivateKey(createPrivateKey(key));
  } catch {
    return false;
  }
}

/**
 * What is wrong with the TLS material of a kubeconfig's current cluster and user (the CA, the
 * client certificate and key, and whether they belong together), if anything. What an exec
 * plugin hands out is checked by `pluginTlsProblem` when it comes.
 */
export function tlsMaterialProblem(kc: KubeConfig): TlsProblem | undefined {
  const cluster = kc.getCurrentCluster();
  if (!cluster || cluster.server.startsWith('http:')) return undefined;
  const user = kc.getCurrentUser();
  const entry = `user "${user?.name ?? ''}"`;
  const ca = cluster.skipTLSVerify
    ? undefined
    : material('ca', 'certificate-authority', cluster.caData, cluster.caFile);
  const cert = !user ? undefined : material('certificate', 'client-certificate', user.certData, user.certFile);
  const key = !user ? undefined : material('key', 'client-key', user.keyData, user.keyFile);
  const fields: [Kind, string, Material | undefined][] = [
    ['ca', `cluster "${cluster.name}"`, ca],
    ['certificate', entry, cert],
    ['key', entry, key],
  ];
  for (const [kind, where, m] of fields) {
    if (!m) continue;
    const problem = m.problem ?? pemProblem(kind, m.pem!);
    if (problem) return { entry: where, field: m.field, problem, fix: m.fix };
  }
  if (cert?.pem && key?.pem && !belong(cert.pem, key.pem)) {
    return {
      entry,
      field: key.field,
      problem: `does not belong to the certificate in its ${cert.field}`,
      fix: 'put the key and the certificate of one key pair there',
    };
  }
  return undefined;
}

/**
 * Why a client certificate (PEM) is not valid at `now`, in words a refusal can end with: "expired
 * at <time>" or "is not valid before <time>"; undefined when it is valid then, or cannot be read.
 */
export function certificateTimeProblem(pem: Buffer | string | undefined, now = Date.now()): string | undefined {
  if (!pem) return undefined;
  let cert: X509Certificate;
  try {
    cert = new X509Certificate(pem);
  } catch {
    return undefined;
  }
  const [from, to] = [Date.parse(cert.validFrom), Date.parse(cert.validTo)];
  if (now > to) return `expired at ${new Date(to).toISOString()}`;
  if (now < from) return `is not valid before ${new Date(from).toISOString()}`;
  return undefined;
}

/** What is wrong with the client certificate and key an exec credential plugin handed out, if anything. */
export function pluginTlsProblem(
  kc: KubeConfig,
  cert: Buffer | string | undefined,
  key: Buffer | string | undefined,
): TlsProblem | undefined {
  if (!cert || !key) return undefined;
  try {
    createSecureContext({ cert, key });
    if (belong(cert, key)) return undefined;
  } catch {
    // said below
  }
  return {
    entry: `user "${kc.getCurrentUser()?.name ?? ''}"`,
    field: 'exec credential plugin',
    problem: 'hands out a client certificate and key that cannot be used (damaged, or not of one key pair)',
    fix: 'fix the plugin or the credentials it hands out (clientCertificateData, clientKeyData)',
  };
}
