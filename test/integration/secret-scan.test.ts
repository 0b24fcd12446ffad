// No secret in any message: markers planted in a broken kubeconfig, in a working kubeconfig's
// client key and token, in a client key that cannot be used, in a token the API server refuses,
// in an exec plugin's environment and error output, in the token a working exec plugin hands
// out, and in the
// passwords of a registry's credential Secret (the right one, then a wrong one); then installs,
// failures and deletions with them; afterwards every Kyma and Manifest status, every Event,
// every workflow history of the run, what klm (the command line) says of those Kymas, and the
// worker's and bridge's logs are scanned for them.
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { kubeconfigSecret } from '../../bench/fleet';
import { API_VERSION, type KubeObject } from '../../src/api/shared';
import { startAuthRegistry, type AuthRegistry } from '../../src/localstack/registry-token';
import { Registries } from '../../src/oci/registries';
import { eventually, getKyma, kymaInState, kymaObject, startKlm, type Klm } from '../support/klm';
import { klmCli } from '../support/cli';
import { processEnv } from '../support/processes';
import { stackInfo, uniqueName } from '../support/stack';

const MARK = `ZZSECRET${Date.now().toString(36)}`;
const MARKERS = {
  brokenKubeconfig: `${MARK}broken`,
  clientKey: `${MARK}clientkey`,
  brokenClientKey: `${MARK}brokenkey`,
  token: `${MARK}token`,
  execEnv: `${MARK}execenv`,
  execStderr: `${MARK}execstderr`,
  execToken: `${MARK}exectoken`,
  registryPassword: `${MARK}registrypw`,
  wrongRegistryPassword: `${MARK}wrongpw`,
  /** Base64 forms: the client key travels so in the kubeconfig, passwords in Basic auth and `auth`. */
  clientKeyBase64: '',
  brokenClientKeyBase64: '',
  registryBasic: '',
  wrongRegistryBasic: '',
};
const USER = 'scan-reader';
const base64Prefix = (s: string) => Buffer.from(s.slice(0, 3 * Math.floor(s.length / 3))).toString('base64');
MARKERS.clientKeyBase64 = base64Prefix(MARKERS.clientKey);
MARKERS.brokenClientKeyBase64 = base64Prefix(MARKERS.brokenClientKey);
MARKERS.registryBasic = base64Prefix(`${USER}:${MARKERS.registryPassword}`);
MARKERS.wrongRegistryBasic = base64Prefix(`${USER}:${MARKERS.wrongRegistryPassword}`);

function dockerConfigSecret(namespace: string, name: string, registry: string, password: string): KubeObject {
  const auth = Buffer.from(`${USER}:${password}`).toString('base64');
  const json = JSON.stringify({ auths: { [registry]: { username: USER, password, auth } } });
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name, namespace },
    type: 'kubernetes.io/dockerconfigjson',
    data: { '.dockerconfigjson': Buffer.from(json).toString('base64') },
  };
}

/** Every string in a value, Uint8Arrays (payloads) decoded as UTF-8. */
function text(value: unknown): string {
  return JSON.stringify(value, (_k, v: unknown) => (v instanceof Uint8Array ? Buffer.from(v).toString('utf8') : v));
}

function found(haystack: string): string[] {
  return Object.entries(MARKERS)
    .filter(([, m]) => haystack.includes(m))
    .map(([k]) => k);
}

interface KubeconfigDoc {
  clusters: { cluster: { server: string } }[];
  users: { user: Record<string, unknown> }[];
}

describe('secrets in kubeconfig Secrets', () => {
  let klm: Klm;
  let worker: ChildProcess;
  let workerLog: string;
  const bridgeLog: string[] = [];
  let local: KubeconfigDoc;
  let registry: AuthRegistry;
  let registryDir: string;
  const credentials = { namespace: uniqueName('kcp'), name: 'registry-cred' };

  beforeAll(async () => {
    const info = stackInfo();
    registryDir = await mkdtemp(path.join(tmpdir(), 'klm-scan-registry-'));
    registry = await startAuthRegistry(info.tools.registry, registryDir, {
      user: { username: USER, password: MARKERS.registryPassword },
    });
    const publisher = new Registries({
      caFile: registry.caCert,
      credentials: {
        describe: 'the test publisher',
        credentialsFor: () => Promise.resolve({ username: USER, password: MARKERS.registryPassword }),
      },
    });
    klm = await startKlm({
      worker: false,
      bridgeLog: (l) => bridgeLog.push(l),
      samples: { registryHost: registry.registry.host, client: publisher.client(registry.registry.host) },
    });
    await klm.kube.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: credentials.namespace } });
    await klm.kube.create(
      dockerConfigSecret(credentials.namespace, credentials.name, registry.registry.host, MARKERS.registryPassword),
    );
    workerLog = path.join(await mkdtemp(path.join(tmpdir(), 'klm-scan-')), 'worker.log');
    const out = createWriteStream(workerLog);
    await new Promise((r) => out.once('open', r));
    worker = spawn(process.execPath, ['--import', 'tsx', 'src/workers/main.ts'], {
      env: processEnv(klm, {
        KLM_BLOB_CACHE_DIR: path.dirname(workerLog),
        KLM_OCI_REGISTRY_HOST: registry.registry.host,
        KLM_REGISTRY_CA_FILE: registry.caCert,
        KLM_OCI_REGISTRY_CRED_SECRET: `${credentials.namespace}/${credentials.name}`,
      }),
      stdio: ['ignore', out, out],
    });
    local = parse(await readFile(info.kubeconfig, 'utf8')) as KubeconfigDoc;
  });

  afterAll(async () => {
    worker?.kill('SIGTERM');
    await klm?.stop();
    await registry?.stop();
    if (registryDir) await rm(registryDir, { recursive: true, force: true });
  });

  /** The local cluster's kubeconfig with `edit` applied to its user. */
  function kubeconfig(edit: (user: Record<string, unknown>, doc: KubeconfigDoc) => void): string {
    const doc = structuredClone(local);
    edit(doc.users[0]!.user, doc);
    return stringify(doc);
  }

  async function kyma(secret: string | undefined, modules = [{ name: 'greeter' }]): Promise<string> {
    const name = uniqueName('kyma');
    if (secret !== undefined) await klm.kube.create(kubeconfigSecret(klm.namespace, name, secret));
    await klm.kube.create(kymaObject(klm.namespace, name, { channel: 'regular', modules }));
    return name;
  }

  async function moduleReason(name: string, module: string, reason: string, timeoutMs = 90_000): Promise<void> {
    await eventually(
      `${module} of ${name} with reason ${reason}`,
      async () => {
        const m = await klm.kube.get(API_VERSION, 'Manifest', `${name}-${module}`, klm.namespace);
        return (m as { status?: { conditions?: { reason?: string }[] } } | undefined)?.status?.conditions?.some(
          (c) => c.reason === reason,
        );
      },
      timeoutMs,
    );
  }

  it('finds none of the planted markers in statuses, Events, histories or logs', async () => {
    const keyPem = Buffer.from(local.users[0]!.user['client-key-data'] as string, 'base64').toString('utf8');
    // 1. A kubeconfig that is not YAML, the marker on the offending line.
    const broken = await kyma(
      `apiVersion: v1\nusers:\n- name: u\n  user:\n    token: ${MARKERS.brokenKubeconfig}: : [\n`,
    );
    // 2. A working kubeconfig whose client key and token carry markers: install, then delete.
    const working = await kyma(
      kubeconfig((u) => {
        u['client-key-data'] = Buffer.from(`${MARKERS.clientKey}\n${keyPem}`).toString('base64');
        u.token = MARKERS.token;
      }),
    );
    // 3. The same credentials against a server that refuses connections.
    const unreachable = await kyma(
      kubeconfig((u, doc) => {
        u.token = MARKERS.token;
        doc.clusters[0]!.cluster.server = 'https://127.0.0.1:1';
      }),
    );
    // 4. An exec plugin whose environment carries a marker and which fails, printing another.
    const dir = await mkdtemp(path.join(tmpdir(), 'klm-scan-exec-'));
    const plugin = path.join(dir, 'plugin.mjs');
    await writeFile(
      plugin,
      `process.stderr.write('failed for ' + process.env.SECRET_ENV + ' ${MARKERS.execStderr}'); process.exit(1);\n`,
    );
    const exec = await kyma(
      kubeconfig((u) => {
        delete u['client-certificate-data'];
        delete u['client-key-data'];
        u.exec = {
          apiVersion: 'client.authentication.k8s.io/v1',
          command: process.execPath,
          args: [plugin],
          env: [{ name: 'SECRET_ENV', value: MARKERS.execEnv }],
          interactiveMode: 'Never',
        };
      }),
    );

    // 5. A working exec plugin: it hands out the client certificate and key, and a token with a marker.
    const workingPlugin = path.join(dir, 'working-plugin.mjs');
    const status = {
      token: MARKERS.execToken,
      clientCertificateData: Buffer.from(local.users[0]!.user['client-certificate-data'] as string, 'base64').toString(
        'utf8',
      ),
      clientKeyData: keyPem,
      expirationTimestamp: '',
    };
    await writeFile(
      workingPlugin,
      `const status = ${JSON.stringify(status)};
status.expirationTimestamp = new Date(Date.now() + 3000).toISOString();
process.stdout.write(JSON.stringify({ apiVersion: 'client.authentication.k8s.io/v1', kind: 'ExecCredential', status }));
`,
    );
    const execWorking = await kyma(
      kubeconfig((u) => {
        delete u['client-certificate-data'];
        delete u['client-key-data'];
        u.exec = {
          apiVersion: 'client.authentication.k8s.io/v1',
          command: process.execPath,
          args: [workingPlugin],
          interactiveMode: 'Never',
        };
      }),
    );

    // 6. A client key that cannot be used (OpenSSL: DECODER routines::unsupported), the marker before its PEM block.
    const brokenKey = await kyma(
      kubeconfig((u) => {
        u['client-key-data'] = Buffer.from(
          `${MARKERS.brokenClientKey}\n-----BEGIN PRIVATE KEY-----\nAAAA${MARKERS.brokenClientKey}\n-----END PRIVATE KEY-----\n`,
        ).toString('base64');
      }),
    );
    // 7. A token the API server refuses, and no client certificate.
    const refusedToken = await kyma(
      kubeconfig((u) => {
        delete u['client-certificate-data'];
        delete u['client-key-data'];
        u.token = MARKERS.token;
      }),
    );

    await moduleReason(broken, 'greeter', 'InvalidKubeconfig');
    await moduleReason(brokenKey, 'greeter', 'InvalidKubeconfig');
    await moduleReason(refusedToken, 'greeter', 'TargetCredentialsRefused');
    await kymaInState(klm, execWorking, 'Ready', 120_000);
    await kymaInState(klm, working, 'Ready', 120_000);
    await moduleReason(unreachable, 'greeter', 'TargetClusterUnreachable');
    await moduleReason(exec, 'greeter', 'InvalidKubeconfig');
    await klm.kube.delete(API_VERSION, 'Kyma', working, klm.namespace);
    await eventually('the working Kyma to be gone', async () => (await getKyma(klm, working)) === undefined, 120_000);
    // 5. The registry's credential Secret with a wrong password: a module not pulled yet is refused.
    await klm.kube.apply(
      dockerConfigSecret(
        credentials.namespace,
        credentials.name,
        registry.registry.host,
        MARKERS.wrongRegistryPassword,
      ),
    );
    const refused = await kyma(undefined, [{ name: 'counter' }]);
    await moduleReason(refused, 'counter', 'RegistryCredentialsRefused');

    // The scanner finds what it looks for: the Secrets hold every kubeconfig marker.
    const secrets = [
      ...(await klm.kube.list('v1', 'Secret', { namespace: klm.namespace })).items,
      ...(await klm.kube.list('v1', 'Secret', { namespace: credentials.namespace })).items,
    ];
    const secretText = secrets
      .map((s) =>
        Object.values((s as { data?: Record<string, string> }).data ?? {})
          .map((d) => Buffer.from(d, 'base64').toString('utf8'))
          .join('\n'),
      )
      .join('\n');
    expect(found(secretText).sort()).toEqual([
      'brokenClientKeyBase64',
      'brokenKubeconfig',
      'clientKeyBase64',
      'execEnv',
      'token',
      'wrongRegistryBasic',
      'wrongRegistryPassword',
    ]);
    // The working plugin's token is in no Secret: it is in the plugin file.
    expect(found(await readFile(workingPlugin, 'utf8'))).toContain('execToken');

    const places: Record<string, string> = {};
    places.kymas = text((await klm.kube.list(API_VERSION, 'Kyma', { namespace: klm.namespace })).items);
    places.manifests = text((await klm.kube.list(API_VERSION, 'Manifest', { namespace: klm.namespace })).items);
    places.events = text((await klm.kube.list('v1', 'Event')).items);
    const histories: string[] = [];
    for await (const wf of klm.client.workflow.list({ query: `TaskQueue = '${klm.taskQueue}'` })) {
      histories.push(text(await klm.client.workflow.getHandle(wf.workflowId, wf.runId).fetchHistory()));
    }
    places.histories = histories.join('\n');
    // What klm (the command line) says of these Kymas: every command that reads them and their Secrets.
    const cli: string[] = [];
    for (const name of [broken, unreachable, exec, brokenKey, refusedToken]) {
      const at = ['--kubeconfig', stackInfo().kubeconfig, '--kyma', `${klm.namespace}/${name}`];
      // list and status read the Kyma and its status; delete reads its Secret and the cluster.
      for (const args of [
        ['module', 'list', ...at, '-o', 'json'],
        ['module', 'delete', 'greeter', ...at],
        ['kyma', 'status', `${klm.namespace}/${name}`, '--kubeconfig', stackInfo().kubeconfig],
      ]) {
        const r = await klmCli(args);
        cli.push(r.stdout, r.stderr);
      }
    }
    places.cli = cli.join('\n');
    places.workerLog = await readFile(workerLog, 'utf8');
    places.bridgeLog = bridgeLog.join('\n');
    // Not vacuous: the failures were written, recorded and logged.
    expect(places.kymas).toContain('InvalidKubeconfig');
    expect(places.histories).toContain('TargetClusterUnreachable');
    expect(places.kymas).toContain('TargetCredentialsRefused');
    expect(places.kymas).toContain('has a client-key-data that is not a private key that can be read');
    expect(places.manifests).toContain('RegistryCredentialsRefused');
    expect(histories.length).toBeGreaterThanOrEqual(8);
    expect(places.workerLog).toContain('task queue');
    expect(places.cli).toContain('does not hold a valid kubeconfig');
    expect(places.cli).toContain('runs a command for its credential');
    const leaks = Object.fromEntries(Object.entries(places).map(([where, t]) => [where, found(t)]));
    expect(leaks).toEqual({
      kymas: [],
      manifests: [],
      events: [],
      histories: [],
      cli: [],
      workerLog: [],
      bridgeLog: [],
    });
  }, 300_000);
});
