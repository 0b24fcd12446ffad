// deploy/kustomize as an operator applies it: the example overlay rendered by kubectl's
// kustomize, checked for what a deployment needs (non-root, read-only root, probes on the port the
// settings open, settings the processes read), then applied for real, server-side, to the local
// API server.
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { promisify } from 'node:util';
import { parseAllDocuments } from 'yaml';
import { afterAll, describe, expect, it } from 'vitest';
import type { KubeObject } from '../../src/api/shared';
import { stackInfo } from '../support/stack';
import { eventually } from '../support/klm';

const exec = promisify(execFile);
const OVERLAY = 'deploy/kustomize/overlays/example';

interface Container {
  image: string;
  args: string[];
  ports: { name: string; containerPort: number }[];
  livenessProbe: { httpGet: { path: string; port: string } };
  readinessProbe: { httpGet: { path: string; port: string } };
  resources: { requests?: Record<string, string>; limits?: Record<string, string> };
  securityContext: {
    allowPrivilegeEscalation: boolean;
    readOnlyRootFilesystem: boolean;
    capabilities: { drop: string[] };
  };
  volumeMounts: { name: string; mountPath: string }[];
}
type Deployment = KubeObject & {
  spec: {
    template: {
      spec: { serviceAccountName: string; securityContext: { runAsNonRoot: boolean }; containers: Container[] };
    };
  };
};

async function kubectl(args: string[]): Promise<string> {
  const { tools, kubeconfig } = stackInfo();
  return (await exec(tools.kubectl, ['--kubeconfig', kubeconfig, ...args], { maxBuffer: 16 * 1024 * 1024 })).stdout;
}

async function rendered(): Promise<KubeObject[]> {
  return parseAllDocuments(await kubectl(['kustomize', OVERLAY])).map((d) => d.toJS() as KubeObject);
}

describe('deploy/kustomize', () => {
  afterAll(async () => {
    await kubectl(['delete', '-k', OVERLAY, '--ignore-not-found', '--wait=false']).catch(() => undefined);
  });

  it('renders worker and bridge to run non-root on a read-only root, probed on the port their settings open', async () => {
    const objects = await rendered();
    const config = objects.find((o) => o.kind === 'ConfigMap' && o.metadata.name === 'klm-config') as KubeObject & {
      data: Record<string, string>;
    };
    const deployments = objects.filter((o): o is Deployment => o.kind === 'Deployment');
    expect(deployments.map((d) => d.metadata.name).sort()).toEqual(['klm-bridge', 'klm-worker']);
    const entry = { 'klm-worker': 'dist/workers/main.js', 'klm-bridge': 'dist/starter/main.js' } as Record<
      string,
      string
    >;
    // Three bridges share the shards' Leases in their namespace, each under its pod's name.
    const bridge = deployments.find((d) => d.metadata.name === 'klm-bridge')!;
    expect((bridge.spec as { replicas?: number }).replicas).toBe(3);
    const env = (
      bridge.spec.template.spec.containers[0] as unknown as {
        env: { name: string; value?: string; valueFrom?: { fieldRef?: { fieldPath: string } } }[];
      }
    ).env;
    expect(env.find((e) => e.name === 'KLM_LEADER_ELECTION_LEASE')?.value).toBe('$(POD_NAMESPACE)/klm-bridge');
    expect(env.find((e) => e.name === 'POD_NAME')?.valueFrom?.fieldRef?.fieldPath).toBe('metadata.name');
    expect(env.findIndex((e) => e.name === 'POD_NAMESPACE')).toBeLessThan(
      env.findIndex((e) => e.name === 'KLM_LEADER_ELECTION_LEASE'),
    );
    for (const d of deployments) {
      const pod = d.spec.template.spec;
      const [c] = pod.containers;
      expect(pod.securityContext.runAsNonRoot).toBe(true);
      expect(c!.securityContext).toMatchObject({
        allowPrivilegeEscalation: false,
        readOnlyRootFilesystem: true,
        capabilities: { drop: ['ALL'] },
      });
      expect(c!.image).toBe('registry.example.com/kyma/klm:0.1.0');
      // What `npm run build` writes (scripts/build.mjs), from the process entry points.
      expect(c!.args).toEqual([entry[d.metadata.name]]);
      expect(await readFile(entry[d.metadata.name]!.replace(/^dist/, 'src').replace(/\.js$/, '.ts'), 'utf8')).toContain(
        'main()',
      );
      const metrics = c!.ports.find((p) => p.name === 'metrics');
      expect(String(metrics?.containerPort)).toBe(config.data.KLM_METRICS_PORT);
      expect(c!.livenessProbe.httpGet).toEqual({ path: '/healthz', port: 'metrics' });
      expect(c!.readinessProbe.httpGet).toEqual({ path: '/readyz', port: 'metrics' });
      expect(c!.resources.requests).toHaveProperty('memory');
      expect(c!.resources.limits).toHaveProperty('memory');
      // The client certificate the TLS settings point at is mounted where they say.
      expect(c!.volumeMounts.find((m) => m.name === 'temporal-tls')?.mountPath).toBe('/etc/klm/temporal');
      expect(config.data.TEMPORAL_TLS_CLIENT_CERT_PATH).toMatch(/^\/etc\/klm\/temporal\//);
    }
    // Every setting is one the processes read: a misspelt variable would silently do nothing.
    // KLM_* are read in src/infra/config.ts, TEMPORAL_* by the SDK's environment configuration.
    const ours = await readFile('src/infra/config.ts', 'utf8');
    const sdk = await readFile('node_modules/@temporalio/envconfig/lib/envconfig-toml.js', 'utf8');
    for (const key of Object.keys(config.data)) {
      if (key.startsWith('TEMPORAL_')) expect(sdk, key).toContain(`envProvider['${key}']`);
      else expect(ours, key).toContain(`env.${key}`);
    }
  });

  it('applies server-side to an API server, the ServiceAccounts bound to their roles', async () => {
    // The namespace of the Kymas exists before the product is deployed.
    await kubectl(['create', 'namespace', 'kcp-system']).catch((e: { stderr?: string }) => {
      if (!e.stderr?.includes('AlreadyExists')) throw e;
    });
    await kubectl(['apply', '-k', OVERLAY, '--server-side', '--field-manager', 'klm-deploy-test']);
    const get = async (kind: string, name: string, ns = ['-n', 'klm-system']) =>
      JSON.parse(await kubectl(['get', kind, name, ...ns, '-o', 'json'])) as KubeObject & Record<string, unknown>;
    for (const name of ['klm-worker', 'klm-bridge']) {
      expect((await get('deployment', name)).metadata.name).toBe(name);
      expect((await get('serviceaccount', name)).metadata.name).toBe(name);
      expect((await get('service', `${name}-metrics`)).metadata.name).toBe(`${name}-metrics`);
      const binding = (await get('clusterrolebinding', name, [])) as unknown as {
        subjects: { name: string; namespace: string }[];
        roleRef: { name: string };
      };
      expect(binding.subjects).toEqual([expect.objectContaining({ name, namespace: 'klm-system' })]);
      expect(binding.roleRef.name).toBe(name);
    }
    // The API server's own check of the worker's rights: it may patch Kyma status, and may not delete Kymas.
    const can = async (verb: string, resource: string) =>
      (
        await kubectl(['auth', 'can-i', verb, resource, '--as', 'system:serviceaccount:klm-system:klm-worker']).catch(
          (e: { stdout?: string }) => e.stdout ?? '',
        )
      ).trim();
    await eventually(
      'the bindings to take effect',
      async () => (await can('patch', 'kymas.operator.kyma-project.io/status')) === 'yes' || undefined,
      30_000,
    );
    expect(await can('delete', 'kymas.operator.kyma-project.io')).toBe('no');
    expect(await can('create', 'secrets')).toBe('no');
    // Secrets: readable where the Kymas are (kcp-system), not elsewhere, not across the cluster.
    const secrets = async (who: string, ns: string[]) =>
      (
        await kubectl([
          'auth',
          'can-i',
          'list',
          'secrets',
          ...ns,
          '--as',
          `system:serviceaccount:klm-system:${who}`,
        ]).catch((e: { stdout?: string }) => e.stdout ?? '')
      ).trim();
    for (const who of ['klm-worker', 'klm-bridge']) {
      await eventually(
        `${who} to read Secrets in kcp-system`,
        async () => (await secrets(who, ['-n', 'kcp-system'])) === 'yes' || undefined,
        30_000,
      );
      expect(await secrets(who, ['-n', 'default'])).toBe('no');
      expect(await secrets(who, ['--all-namespaces'])).toBe('no');
    }
    // The bridges' Leases: theirs to list, write and delete in their own namespace, nowhere else.
    const bridgeCan = async (verb: string, ns: string) =>
      (
        await kubectl([
          'auth',
          'can-i',
          verb,
          'leases.coordination.k8s.io',
          '-n',
          ns,
          '--as',
          'system:serviceaccount:klm-system:klm-bridge',
        ]).catch((e: { stdout?: string }) => e.stdout ?? '')
      ).trim();
    await eventually(
      'the Lease binding to take effect',
      async () => (await bridgeCan('update', 'klm-system')) === 'yes' || undefined,
      30_000,
    );
    for (const verb of ['list', 'create', 'delete']) expect(await bridgeCan(verb, 'klm-system'), verb).toBe('yes');
    expect(await bridgeCan('update', 'default')).toBe('no');
  });
});
