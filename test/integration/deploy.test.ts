// deploy/kustomize as an operator applies it: every overlay rendered by kubectl's kustomize and
// applied with a server-side dry run after the documented first step (the namespace); the example
// overlay checked for what a deployment needs (CRDs, non-root, read-only root, probes on the port
// the settings open, settings the processes read, monitoring that finds its targets), then applied
// for real, server-side, to the local API server, and uninstalled without its CRDs.
import { execFile, spawn } from 'node:child_process';
import { readdir, readFile } from 'node:fs/promises';
import { promisify } from 'node:util';
import { parseAllDocuments } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KubeObject } from '../../src/api/shared';
import { loadCrds } from '../../src/k8s/crds';
import { stackInfo } from '../support/stack';
import { eventually } from '../support/klm';

const exec = promisify(execFile);
const OVERLAYS = 'deploy/kustomize/overlays';
const OVERLAY = `${OVERLAYS}/example`;
/** What the product's objects carry and its CRDs do not: the uninstall that keeps the Kymas selects it. */
const PART_OF = 'app.kubernetes.io/part-of=klm';

interface Container {
  image: string;
  args: string[];
  env?: { name: string; value?: string; valueFrom?: { fieldRef?: { fieldPath: string } } }[];
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
      metadata: { labels: Record<string, string> };
      spec: {
        serviceAccountName: string;
        securityContext: { runAsNonRoot: boolean; runAsUser: number };
        containers: Container[];
        volumes: { name: string; emptyDir?: object }[];
      };
    };
  };
};
type Service = KubeObject & { spec: { selector: Record<string, string>; ports: { name: string; port: number }[] } };

async function kubectl(args: string[], input?: string): Promise<string> {
  const { tools, kubeconfig } = stackInfo();
  if (input === undefined)
    return (await exec(tools.kubectl, ['--kubeconfig', kubeconfig, ...args], { maxBuffer: 16 * 1024 * 1024 })).stdout;
  const proc = spawn(tools.kubectl, ['--kubeconfig', kubeconfig, ...args]);
  let out = '';
  let err = '';
  proc.stdout.on('data', (d: Buffer) => (out += d.toString()));
  proc.stderr.on('data', (d: Buffer) => (err += d.toString()));
  proc.stdin.end(input);
  const code = await new Promise<number | null>((r) => proc.on('close', r));
  if (code !== 0) throw new Error(`kubectl ${args.join(' ')} exited ${code}: ${err}`);
  return out;
}

async function rendered(overlay = OVERLAY): Promise<KubeObject[]> {
  return parseAllDocuments(await kubectl(['kustomize', overlay])).map((d) => d.toJS() as KubeObject);
}

/** The Prometheus Operator's kinds that the monitoring components use, as loose CRDs of this test's own. */
const MONITORING = [
  ['ServiceMonitor', 'servicemonitors'],
  ['PrometheusRule', 'prometheusrules'],
].map(([kind, plural]) => ({
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: `${plural}.monitoring.coreos.com` },
  spec: {
    group: 'monitoring.coreos.com',
    scope: 'Namespaced',
    names: { kind, plural, singular: kind!.toLowerCase(), listKind: `${kind}List` },
    versions: [
      {
        name: 'v1',
        served: true,
        storage: true,
        schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
      },
    ],
  },
}));

describe('deploy/kustomize', () => {
  beforeAll(async () => {
    await kubectl(['apply', '--server-side', '-f', '-'], MONITORING.map((c) => JSON.stringify(c)).join('\n'));
    await kubectl(['wait', '--for=condition=Established', ...MONITORING.map((c) => `crd/${c.metadata.name}`)]);
    // The namespace of the Kymas exists before the product is deployed.
    await kubectl(['create', 'namespace', 'kcp-system']).catch((e: { stderr?: string }) => {
      if (!e.stderr?.includes('AlreadyExists')) throw e;
    });
  });
  afterAll(async () => {
    // Never the CRDs of operator.kyma-project.io: the other files' Kymas live in them.
    await kubectl(['delete', '-k', OVERLAY, '-l', PART_OF, '--ignore-not-found', '--wait=false']).catch(
      () => undefined,
    );
    for (const c of MONITORING)
      await kubectl(['delete', 'crd', c.metadata.name, '--ignore-not-found', '--wait=false']).catch(() => undefined);
  });

  it('renders every overlay and applies it with a server-side dry run after the documented first step', async () => {
    const overlays = (await readdir(OVERLAYS, { withFileTypes: true })).filter((d) => d.isDirectory());
    expect(overlays.map((d) => d.name)).toContain('example');
    // Step 3 of docs/operator/deploy.md, Step by step: the namespace alone, so that Secrets can go in before the rest.
    await kubectl(['apply', '--server-side', '-f', 'deploy/kustomize/base/system/namespace.yaml']);
    for (const { name } of overlays) {
      const yaml = await kubectl(['kustomize', `${OVERLAYS}/${name}`]);
      const objects = parseAllDocuments(yaml).map((d) => d.toJS() as KubeObject);
      const applied = await kubectl(
        ['apply', '--server-side', '--dry-run=server', '--field-manager', 'klm-deploy-test', '-o', 'name', '-f', '-'],
        yaml,
      );
      expect(applied.trim().split('\n').length, name).toBe(objects.length);
      // One apply gives everything: the CRDs, the namespace, RBAC, both processes.
      const kinds = new Set(objects.map((o) => o.kind));
      for (const kind of ['CustomResourceDefinition', 'Namespace', 'ClusterRole', 'Deployment', 'ConfigMap'])
        expect(kinds.has(kind), `${name}: ${kind}`).toBe(true);
    }
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
    const dockerfile = await readFile('Dockerfile', 'utf8');
    for (const d of deployments) {
      const pod = d.spec.template.spec;
      const [c] = pod.containers;
      expect(pod.securityContext.runAsNonRoot).toBe(true);
      // The image's user, by number (runAsNonRoot can only check a numeric USER).
      expect(`USER ${pod.securityContext.runAsUser}:`).toBe(/^USER \d+:/m.exec(dockerfile)?.[0]);
      // The read-only root's one writable place besides the worker's cache: /tmp, an emptyDir.
      const tmp = c!.volumeMounts.find((m) => m.mountPath === '/tmp')?.name;
      expect(pod.volumes.find((v) => v.name === tmp)?.emptyDir, d.metadata.name).toBeDefined();
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

  it('includes the CRDs, a PodDisruptionBudget per process, leader-election timings, and monitoring that finds its targets', async () => {
    const objects = await rendered();
    const named = <T extends KubeObject>(kind: string, name: string) =>
      objects.find((o) => o.kind === kind && o.metadata.name === name) as T | undefined;
    // The CRDs as deploy/crds has them, without the label an uninstall selects.
    const crds = objects.filter((o) => o.kind === 'CustomResourceDefinition');
    expect(crds.map((c) => c.metadata.name).sort()).toEqual((await loadCrds()).map((c) => c.metadata.name).sort());
    for (const c of crds) expect(c.metadata.labels?.['app.kubernetes.io/part-of'], c.metadata.name).toBeUndefined();
    // Everything else is the product's, and every namespaced object names its namespace (none lands
    // in whatever namespace kubectl's context has).
    const cluster = new Set(['Namespace', 'CustomResourceDefinition', 'ClusterRole', 'ClusterRoleBinding']);
    for (const o of objects.filter((x) => x.kind !== 'CustomResourceDefinition')) {
      expect(o.metadata.labels?.['app.kubernetes.io/part-of'], `${o.kind} ${o.metadata.name}`).toBe('klm');
      if (!cluster.has(o.kind))
        expect(o.metadata.namespace, `${o.kind} ${o.metadata.name}`).toMatch(/^(klm|kcp)-system$/);
    }
    const deployments = objects.filter((o): o is Deployment => o.kind === 'Deployment');
    for (const d of deployments) {
      const pdb = named<KubeObject & { spec: { maxUnavailable: number; selector: { matchLabels: object } } }>(
        'PodDisruptionBudget',
        d.metadata.name,
      );
      expect(pdb?.spec.maxUnavailable, d.metadata.name).toBe(1);
      expect(d.spec.template.metadata.labels).toMatchObject(pdb!.spec.selector.matchLabels);
    }
    // The bridges' Lease timings: upstream's defaults, settings an overlay merges its own into.
    const config = named<KubeObject & { data: Record<string, string> }>('ConfigMap', 'klm-config')!;
    expect(config.data).toMatchObject({
      KLM_LEADER_ELECTION_LEASE_DURATION: '180s',
      KLM_LEADER_ELECTION_RENEW_DEADLINE: '120s',
      KLM_LEADER_ELECTION_RETRY_PERIOD: '3s',
    });
    // The worker exports the SDK's metrics (the dashboard's temporal_* panels) on a port its Service
    // names, and the ServiceMonitor scrapes both ports of the Services it selects, in their namespace.
    const worker = deployments.find((d) => d.metadata.name === 'klm-worker')!.spec.template.spec.containers[0]!;
    const sdk = worker.env?.find((e) => e.name === 'KLM_SDK_METRICS_ADDRESS')?.value;
    expect(sdk).toMatch(/^0\.0\.0\.0:\d+$/);
    expect(worker.ports.find((p) => p.name === 'sdk-metrics')?.containerPort).toBe(Number(sdk!.split(':')[1]));
    // The worker's Runtime (its process's and klm run's) binds the SDK's metrics where that variable says.
    expect(await readFile('src/workers/start-worker.ts', 'utf8')).toContain('bindAddress: env.KLM_SDK_METRICS_ADDRESS');
    const monitor = named<
      KubeObject & { spec: { selector: { matchExpressions: { values: string[] }[] }; endpoints: { port: string }[] } }
    >('ServiceMonitor', 'klm')!;
    expect(monitor.metadata.namespace).toBe('klm-system');
    expect(monitor.spec.endpoints.map((e) => e.port).sort()).toEqual(['metrics', 'sdk-metrics']);
    const services = objects.filter((o): o is Service => o.kind === 'Service');
    const selected = services.filter((svc) =>
      monitor.spec.selector.matchExpressions[0]!.values.includes(svc.metadata.labels?.['app.kubernetes.io/name'] ?? ''),
    );
    expect(selected.map((svc) => svc.metadata.name).sort()).toEqual(['klm-bridge-metrics', 'klm-worker-metrics']);
    expect(services.find((svc) => svc.metadata.name === 'klm-worker-metrics')!.spec.ports.map((p) => p.name)).toEqual([
      'metrics',
      'sdk-metrics',
    ]);
    expect(named('PrometheusRule', 'klm')?.metadata.namespace).toBe('klm-system');
    // The dashboard, as Grafana's sidecar picks it up: a labelled ConfigMap with the JSON file.
    const dashboard = named<KubeObject & { data: Record<string, string> }>('ConfigMap', 'klm-dashboard')!;
    expect(dashboard.metadata.labels?.grafana_dashboard).toBe('1');
    expect(dashboard.data['klm-dashboard.json']).toBe(await readFile('deploy/grafana/klm-dashboard.json', 'utf8'));
  });

  it('applies server-side to an API server, the ServiceAccounts bound to their roles', async () => {
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
    // The dashboard and the monitoring objects are there too.
    expect((await get('configmap', 'klm-dashboard')).metadata.labels).toMatchObject({ grafana_dashboard: '1' });
    expect((await get('servicemonitor', 'klm')).metadata.name).toBe('klm');
  });

  it('uninstalls by its label without the CRDs, so that the Kymas stay', async () => {
    const deleted = await kubectl(['delete', '-k', OVERLAY, '-l', PART_OF, '--wait=false', '-o', 'name']);
    expect(deleted).toContain('deployment.apps/klm-worker');
    expect(deleted).not.toContain('customresourcedefinition');
    expect(await kubectl(['get', 'crd', 'kymas.operator.kyma-project.io', '-o', 'name'])).toContain('kymas');
  });
});
