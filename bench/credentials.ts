// --distinct-credentials: every Kyma is a simulated runtime. Its kubeconfig Secret carries a
// client certificate of its own (CN = the Kyma, group system:masters, EC P-256 from the stack's
// CA via openssl), so that worker and bridge, which key their clients by the kubeconfig's
// content, hold one client and one set of watches per Kyma against the few API servers, as they
// would per real cluster; and its context names the Kyma's namespace (where its objects go, the
// default-namespace setting "{kyma}"), which the bench has the bridges watch alone
// (KLM_TARGET_WATCH_SCOPE=context-namespace), so that each simulated runtime's watches see its own
// objects, as a cluster of its own would, and not every runtime's on that server.
import { copyFile, mkdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { stringify } from 'yaml';
import { issueCert } from '../src/localstack/pki';
import { Progress } from './progress';

const b64 = async (file: string) => (await readFile(file)).toString('base64');

const LANES = 4;

/** A kubeconfig per Kyma name for the server `server(name)`, issued a few at a time. */
export async function distinctKubeconfigs(
  pkiDir: string,
  names: string[],
  server: (name: string) => string,
): Promise<Map<string, string>> {
  const ca = await b64(path.join(pkiDir, 'ca.crt'));
  const out = new Map<string, string>();
  const progress = new Progress('client certificates issued', names.length);
  // issueCert wants the CA next to what it issues and keeps a serial file there: each lane of
  // openssl runs gets a directory (and a copy of the stack's CA) of its own.
  await Promise.all(
    Array.from({ length: LANES }, async (_, lane) => {
      const dir = path.join(pkiDir, 'kymas', String(lane));
      await mkdir(dir, { recursive: true });
      await Promise.all(['ca.crt', 'ca.key'].map((f) => copyFile(path.join(pkiDir, f), path.join(dir, f))));
      for (let i = lane; i < names.length; i += LANES) await issue(dir, names[i]!);
    }),
  );
  progress.finish();
  return out;

  async function issue(dir: string, name: string): Promise<void> {
    const { cert, key } = await issueCert(dir, name, name, { clientAuth: true, group: 'system:masters' });
    out.set(
      name,
      stringify({
        apiVersion: 'v1',
        kind: 'Config',
        clusters: [{ name: 'target', cluster: { server: server(name), 'certificate-authority-data': ca } }],
        users: [{ name, user: { 'client-certificate-data': await b64(cert), 'client-key-data': await b64(key) } }],
        contexts: [{ name: 'target', context: { cluster: 'target', user: name, namespace: name } }],
        'current-context': 'target',
      }),
    );
    progress.update(out.size);
  }
}
