// The benchmark's fleet: M bench modules (each a CRD, RBAC, a manager Deployment and a default
// CR, like the samples) and N Kymas that each want all M, each with a kubeconfig Secret for
// its target cluster. Several Kymas share a cluster; every Kyma's namespaced objects go to a
// namespace of its own (the default-namespace setting "{kyma}", KLM_DEFAULT_NAMESPACE).
import { moduleReleaseMeta, moduleTemplate, pushModuleVersion, type ModuleVersion } from '../src/publish/module';
import { loadSamples } from '../src/samples/modules';
import { API_VERSION, LABELS } from '../src/api/shared';
import type { KubeObject } from '../src/api/shared';
import type { KubeClient } from '../src/k8s/rest-client';

export interface BenchModule {
  name: string;
  apiVersion: string;
  kind: string;
}

function letterName(i: number): string {
  return `bench-${'abcdefghijklmnopqrstuvwxyz'[i % 26]!.repeat(3)}${i >= 26 ? `-${'abcdefghijklmnopqrstuvwxyz'[Math.floor(i / 26) % 26]!.repeat(3)}` : ''}`;
}

/**
 * Publishes M bench modules at 1.0.0 (and 1.1.0, 1.2.0, 1.3.0 for the promotions), regular → 1.0.0.
 * `offset`: the first module's index (other names, kinds and CRDs than the first M's).
 */
export async function publishBenchModules(
  kcp: KubeClient,
  registry: string,
  namespace: string,
  count: number,
  offset = 0,
): Promise<BenchModule[]> {
  const { versions } = await loadSamples();
  const greeter = versions.find((v) => v.name === 'greeter' && v.version === '1.0.0')!;
  const modules: BenchModule[] = [];
  for (let i = offset; i < offset + count; i++) {
    const name = letterName(i);
    const plain = name.replaceAll('-', '');
    const kind = plain[0]!.toUpperCase() + plain.slice(1);
    const group = `${plain}.bench.example.io`;
    const manifest = greeter.manifest
      .replaceAll('greeter.example.io', group)
      .replaceAll('Greeter', kind)
      .replaceAll('greeters', `${plain}s`)
      .replaceAll('greeter', name);
    for (const version of ['1.0.0', '1.1.0', '1.2.0', '1.3.0']) {
      const m: ModuleVersion = {
        ...greeter,
        name,
        component: `kyma-project.io/module/${name}`,
        version,
        manifest: manifest.replace(/:1\.0\.0$/m, `:${version}`),
        defaultCR: { apiVersion: `${group}/v1alpha1`, kind, metadata: { name: 'default' }, spec: {} },
      };
      const descriptor = await pushModuleVersion(registry, m);
      await kcp.apply(moduleTemplate(m, namespace, descriptor));
    }
    await kcp.apply(
      moduleReleaseMeta(name, `kyma-project.io/module/${name}`, namespace, { regular: '1.0.0', fast: '1.1.0' }),
    );
    modules.push({ name, apiVersion: `${group}/v1alpha1`, kind });
  }
  return modules;
}

export function benchKyma(namespace: string, name: string, modules: BenchModule[]): KubeObject {
  return {
    apiVersion: API_VERSION,
    kind: 'Kyma',
    metadata: { name, namespace },
    spec: { channel: 'regular', modules: modules.map((m) => ({ name: m.name })) },
  };
}

/** The Kyma's kubeconfig Secret, as upstream: labelled with the Kyma's name, key "config". */
export function kubeconfigSecret(namespace: string, kyma: string, kubeconfig: string): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: `kubeconfig-${kyma}`, namespace, labels: { [LABELS.kymaName]: kyma } },
    data: { config: Buffer.from(kubeconfig).toString('base64') },
  };
}
