// Least privilege, proven: a control plane of the test's own (an API server with RBAC
// authorization and an audit log of every request by a ServiceAccount of klm-system) gets the
// RBAC of deploy/kustomize/base; a worker and a bridge process run with those ServiceAccounts'
// own tokens through an install (one module chosen, one mandatory), a promotion (upgrade) and a
// deletion of a Kyma whose modules go to a target cluster, and the end of the mandatory module.
// No request of theirs may be forbidden, and every right the roles grant must have been used:
// removing a rule makes a request fail, a rule nobody uses fails the test.
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { parseAllDocuments, stringify } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { kubeconfigSecret } from '../../bench/fleet';
import { API_VERSION, LABELS, ROLLOUT_POLICY_CONFIGMAP, type KubeObject } from '../../src/api/shared';
import type { Kyma } from '../../src/api/kyma';
import { installCrds } from '../../src/k8s/crds';
import { kubeConfigFromFile } from '../../src/k8s/kubeconfig';
import { KubeClient } from '../../src/k8s/rest-client';
import { startApiServer, type ApiServer } from '../../src/localstack/kube';
import { pkiIn } from '../../src/localstack/pki';
import { SampleManager } from '../../src/samples/manager';
import { moduleReleaseMeta } from '../../src/publish/module';
import { publishSamples, SAMPLE_KINDS } from '../../src/samples/modules';
import { kymaObject } from '../support/klm';
import { processEnv, startNode, type StartedProcess } from '../support/processes';
import { stackInfo, uniqueName } from '../support/stack';

const exec = promisify(execFile);
const SYSTEM = 'klm-system';
const ACCOUNTS = ['klm-worker', 'klm-bridge'];

interface Rule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
}
interface AuditEvent {
  stage: string;
  user: { username: string };
  verb: string;
  objectRef?: { apiGroup?: string; resource?: string; subresource?: string; namespace?: string };
  responseStatus?: { code?: number };
  requestURI: string;
}

/**
 * Rights granted for paths this flow does not take: the worker reads a control-plane object from
 * the API server only when its informer lacks it (absence verified), which timing decides, and
 * reads the registry credential Secret directly only while the watch on it has not listed.
 */
const NOT_IN_THIS_FLOW = new Set([
  'klm-worker core/secrets get',
  'klm-worker operator.kyma-project.io/kymas get',
  'klm-worker operator.kyma-project.io/moduletemplates get',
  'klm-worker operator.kyma-project.io/modulereleasemetas get',
  'klm-worker operator.kyma-project.io/manifests get',
]);

/** `account group/resource verb`, the unit both the roles and the audit log are compared in. */
function right(account: string, group: string, resource: string, verb: string): string {
  return `${account} ${group || 'core'}/${resource} ${verb}`;
}

/** Requests the API server refused for want of a right. */
function forbidden(events: AuditEvent[]): string[] {
  return [
    ...new Set(
      events.filter((e) => e.responseStatus?.code === 403).map((e) => `${e.user.username} ${e.verb} ${e.requestURI}`),
    ),
  ];
}

describe('the deployed roles, used by the processes with their own tokens', () => {
  const info = stackInfo();
  let api: ApiServer;
  let admin: KubeClient;
  let target: KubeClient;
  let manager: SampleManager;
  let auditLog: string;
  const procs: StartedProcess[] = [];
  const granted = new Set<string>();
  /** The deployed settings (ConfigMap klm-config). */
  let settings: Record<string, string>;

  /** The audit log so far: what the ServiceAccounts asked, and the answers. */
  async function audit(): Promise<AuditEvent[]> {
    const text = await readFile(auditLog, 'utf8').catch(() => '');
    return text
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as AuditEvent)
      .filter((e) => e.stage === 'ResponseComplete' || e.stage === 'ResponseStarted');
  }

  beforeAll(async () => {
    const dir = path.join(info.dir, uniqueName('rbac'));
    await mkdir(dir, { recursive: true });
    auditLog = path.join(dir, 'audit.log');
    const policy = path.join(dir, 'audit-policy.yaml');
    await writeFile(
      policy,
      stringify({
        apiVersion: 'audit.k8s.io/v1',
        kind: 'Policy',
        omitStages: ['RequestReceived'],
        rules: [{ level: 'Metadata', userGroups: [`system:serviceaccounts:${SYSTEM}`] }, { level: 'None' }],
      }),
    );
    const pki = pkiIn(info.pkiDir);
    api = await startApiServer(info.tools.kubeApiserver, dir, info.etcdUrl, pki, `/${path.basename(dir)}`, {
      supervised: false,
      extraArgs: [`--audit-policy-file=${policy}`, `--audit-log-path=${auditLog}`, '--audit-log-mode=blocking'],
    });
    admin = await KubeClient.fromKubeConfig(kubeConfigFromFile(api.kubeconfig));
    await installCrds(admin);

    // The base's namespace and RBAC, as kustomize renders them.
    const rendered = parseAllDocuments(
      (await exec(info.tools.kubectl, ['kustomize', 'deploy/kustomize/base'])).stdout,
    ).map((d) => d.toJS() as KubeObject);
    // The namespace of the Kymas exists before the product is deployed.
    await admin.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'kcp-system' } });
    const rbac = rendered.filter((o) =>
      ['Namespace', 'ServiceAccount', 'ClusterRole', 'ClusterRoleBinding', 'Role', 'RoleBinding'].includes(o.kind),
    );
    for (const o of rbac) await admin.apply(o);
    // Who holds which role: the bindings' ServiceAccounts.
    const holders = new Map<string, string[]>();
    for (const b of rbac.filter((r) => r.kind.endsWith('Binding')) as unknown as {
      roleRef: { name: string };
      subjects: { name: string }[];
    }[]) {
      holders.set(b.roleRef.name, [...(holders.get(b.roleRef.name) ?? []), ...b.subjects.map((x) => x.name)]);
    }
    for (const o of rbac.filter((r) => r.kind === 'ClusterRole' || r.kind === 'Role')) {
      for (const account of holders.get(o.metadata.name) ?? []) {
        for (const r of (o as unknown as { rules: Rule[] }).rules)
          for (const g of r.apiGroups)
            for (const res of r.resources) for (const v of r.verbs) granted.add(right(account, g, res, v));
      }
    }
    settings = (
      rendered.find((o) => o.kind === 'ConfigMap' && o.metadata.name === 'klm-config') as unknown as {
        data: Record<string, string>;
      }
    ).data;

    // Each process's kubeconfig: the API server, its CA, and the ServiceAccount's own token.
    const ca = (await readFile(pki.caCert)).toString('base64');
    const kubeconfigs: Record<string, string> = {};
    for (const account of ACCOUNTS) {
      const tr = await admin.request<{ status: { token: string } }>(
        'POST',
        `/api/v1/namespaces/${SYSTEM}/serviceaccounts/${account}/token`,
        { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds: 7200 } },
      );
      kubeconfigs[account] = path.join(dir, `${account}.kubeconfig`);
      await writeFile(
        kubeconfigs[account],
        stringify({
          apiVersion: 'v1',
          kind: 'Config',
          clusters: [{ name: 'kcp', cluster: { server: api.url, 'certificate-authority-data': ca } }],
          users: [{ name: account, user: { token: tr.status.token } }],
          contexts: [{ name: 'kcp', context: { cluster: 'kcp', user: account } }],
          'current-context': 'kcp',
        }),
      );
    }

    // The modules go to the shared cluster (controllers, kwok), reported Ready by a sample manager there.
    target = await KubeClient.fromKubeConfig(kubeConfigFromFile(info.kubeconfig));
    manager = new SampleManager({ client: target, kinds: SAMPLE_KINDS });
    manager.start();

    const taskQueue = uniqueName('klm');
    // The deployed settings' namespace of the Kymas, whose Secrets alone the roles let them read.
    const common = {
      KLM_DEFAULT_NAMESPACE: '{kyma}-system',
      KLM_CRD_ESTABLISHED_TIMEOUT: '20s',
      KLM_KYMA_NAMESPACES: settings.KLM_KYMA_NAMESPACES,
    };
    procs.push(
      startNode(
        ['--import', 'tsx', 'src/workers/main.ts'],
        processEnv(taskQueue, {
          ...common,
          KUBECONFIG: kubeconfigs['klm-worker'],
          KLM_BLOB_CACHE_DIR: await mkdtemp(path.join(tmpdir(), 'klm-blobs-')),
          KLM_OCI_REGISTRY_CRED_SECRET: 'kcp-system/klm-registry',
        }),
      ),
    );
    procs.push(
      startNode(
        ['--import', 'tsx', 'src/starter/main.ts'],
        processEnv(taskQueue, {
          ...common,
          KUBECONFIG: kubeconfigs['klm-bridge'],
          KLM_LEADER_ELECTION_LEASE: `${SYSTEM}/klm-bridge`,
          POD_NAME: 'klm-bridge-0',
        }),
      ),
    );
  });

  afterAll(async () => {
    for (const p of procs) p.proc.kill('SIGKILL');
    manager?.stop();
    target?.close();
    admin?.close();
    await api?.process.stop();
  });

  it(
    'installs, upgrades by promotion and deletes a Kyma without one forbidden request, leaves a ' +
      'Kyma outside its namespaces alone, and uses every right it is granted',
    async () => {
      const ns = 'kcp-system';
      expect(settings.KLM_KYMA_NAMESPACES).toBe(ns);
      await admin.create({
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: ROLLOUT_POLICY_CONFIGMAP, namespace: ns },
        data: { default: 'waves: []\nsoak: 0s' },
      });
      await publishSamples(admin, info.registryHost, ns);
      // The worker reads its registry credentials from a Secret (the local registry takes any).
      const auths = { auths: { [info.registryHost]: { auth: Buffer.from('klm:any').toString('base64') } } };
      await admin.create({
        apiVersion: 'v1',
        kind: 'Secret',
        type: 'kubernetes.io/dockerconfigjson',
        metadata: { name: 'klm-registry', namespace: ns },
        data: { '.dockerconfigjson': Buffer.from(JSON.stringify(auths)).toString('base64') },
      });
      // counter is mandatory: on every Kyma, behind the bridge's finalizer on its ModuleReleaseMeta.
      await admin.mergePatch(API_VERSION, 'ModuleReleaseMeta', 'counter', ns, {
        spec: { channels: null, mandatory: { version: '1.0.0' } },
      });
      // A Kyma where the installation does not serve (its Secret there is not readable): left alone.
      const stray = uniqueName('stray');
      await admin.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'elsewhere' } });
      await admin.create(kubeconfigSecret('elsewhere', stray, await readFile(info.kubeconfig, 'utf8')));
      await admin.create(kymaObject('elsewhere', stray, { channel: 'regular', modules: [{ name: 'greeter' }] }));
      const name = uniqueName('kyma');
      await admin.create(kubeconfigSecret(ns, name, await readFile(info.kubeconfig, 'utf8')));
      await admin.create(kymaObject(ns, name, { channel: 'regular', modules: [{ name: 'greeter' }] }));
      const module = async () =>
        (await admin.get<Kyma & KubeObject>(API_VERSION, 'Kyma', name, ns))?.status?.modules?.find(
          (m) => m.name === 'greeter',
        );
      /** Waits for `check`; a request the roles forbid ends the wait at once. */
      const until = async (what: string, check: () => Promise<boolean>) => {
        const deadline = Date.now() + 180_000;
        for (;;) {
          const refused = forbidden(await audit());
          if (refused.length) throw new Error(`forbidden while waiting for ${what}: ${refused.join('; ')}`);
          if (await check().catch(() => false)) return;
          if (Date.now() > deadline)
            throw new Error(
              `timed out after 180 s waiting for ${what}; the processes said:\n${procs.map((p) => p.out()).join('\n')}`,
            );
          await new Promise((r) => setTimeout(r, 250));
        }
      };

      await until('greeter 1.0.0 to be Ready', async () => {
        const m = await module();
        return m?.state === 'Ready' && m.version === '1.0.0';
      });
      await until('the mandatory counter to be Ready', async () => {
        const { items } = await admin.list<KubeObject & { status?: { state?: string } }>(API_VERSION, 'Manifest', {
          namespace: ns,
          labelSelector: `${LABELS.kymaName}=${name},${LABELS.moduleName}=counter`,
        });
        return items[0]?.status?.state === 'Ready';
      });
      // The regular channel moves to 1.1.0: a promotion, rolled out by the rollout workflow.
      await admin.apply(
        moduleReleaseMeta('greeter', 'kyma-project.io/module/greeter', ns, { regular: '1.1.0', fast: '1.1.0' }),
      );
      await until('greeter 1.1.0 to be Ready', async () => {
        const m = await module();
        return m?.state === 'Ready' && m.version === '1.1.0';
      });
      await admin.delete(API_VERSION, 'Kyma', name, ns);
      await until('the Kyma to be gone', async () => (await admin.get(API_VERSION, 'Kyma', name, ns)) === undefined);
      expect(await target.get('apps/v1', 'Deployment', 'greeter-manager', `${name}-system`)).toBeUndefined();
      expect(await target.get('apps/v1', 'Deployment', 'counter-manager', `${name}-system`)).toBeUndefined();
      // No longer mandatory anywhere: the bridge drops its finalizer and the ModuleReleaseMeta goes.
      await admin.delete(API_VERSION, 'ModuleReleaseMeta', 'counter', ns);
      await until(
        'the mandatory ModuleReleaseMeta to be gone',
        async () => (await admin.get(API_VERSION, 'ModuleReleaseMeta', 'counter', ns)) === undefined,
      );

      // The stray Kyma was never reconciled, and the bridge said why.
      expect((await admin.get<Kyma & KubeObject>(API_VERSION, 'Kyma', stray, 'elsewhere'))?.status).toBeUndefined();
      expect(procs[1]!.out()).toContain(
        `Kyma elsewhere/${stray} is in a namespace this installation does not serve (KLM_KYMA_NAMESPACES: kcp-system): left alone`,
      );

      // The bridge stops as its pod would (SIGTERM): it frees its shards' Leases and deletes its own.
      const bridge = procs[1]!.proc;
      const exited = new Promise((resolve) => bridge.once('exit', resolve));
      bridge.kill('SIGTERM');
      await until(
        'the bridge to exit',
        async () =>
          (await Promise.race([exited.then(() => true), new Promise((r) => setTimeout(() => r(false), 1000))])) ===
          true,
      );
      const leases = (await admin.list('coordination.k8s.io/v1', 'Lease', { namespace: SYSTEM }))
        .items as (KubeObject & {
        spec?: { holderIdentity?: string };
      })[];
      expect(
        leases.filter((l) => l.metadata.name.startsWith('klm-bridge-member-')).map((l) => l.metadata.name),
        'presence Leases left',
      ).toEqual([]);
      // As many as it took meanwhile (a replica takes one a round in its first lease duration).
      const shards = leases.filter((l) => l.metadata.name.startsWith('klm-bridge-shard-'));
      expect(shards.length).toBeGreaterThan(0);
      expect(shards.map((l) => l.spec?.holderIdentity ?? '').filter(Boolean), 'shards still held').toEqual([]);

      const events = await audit();
      expect(forbidden(events), 'requests the roles forbid').toEqual([]);
      const used = new Set<string>();
      for (const e of events) {
        const account = e.user.username.split(':').pop()!;
        const o = e.objectRef;
        if (!o?.resource || !ACCOUNTS.includes(account)) continue;
        const resource = o.subresource ? `${o.resource}/${o.subresource}` : o.resource;
        used.add(right(account, o.apiGroup ?? '', resource, e.verb));
        // A server-side apply that made the object was authorized for create as well.
        if (e.verb === 'patch' && e.responseStatus?.code === 201)
          used.add(right(account, o.apiGroup ?? '', resource, 'create'));
      }
      expect(
        [...granted].filter((g) => !used.has(g) && !NOT_IN_THIS_FLOW.has(g)).sort(),
        'rights granted and never used',
      ).toEqual([]);
      expect(
        [...NOT_IN_THIS_FLOW].filter((g) => !granted.has(g)),
        'exemptions that are not granted',
      ).toEqual([]);
    },
    600_000,
  );
});
