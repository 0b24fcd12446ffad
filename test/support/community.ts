// A community module of a kind of its own for tests (CRD, manager Deployment, a ConfigMap that
// 1.1.0 drops), its raw manifest served by the real registry behind a link, as community
// modules publish theirs.
import { stringify } from 'yaml';
import { API_VERSION, type KubeObject } from '../../src/api/shared';
import { Registries } from '../../src/oci/registries';

export /** A community module of a kind of its own: CRD, manager Deployment, a ConfigMap that 1.1.0 drops. */
function echoManifest(group: string, version: string): string {
  const docs: unknown[] = [
    {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: `echoes.${group}` },
      spec: {
        group,
        names: { kind: 'Echo', listKind: 'EchoList', plural: 'echoes', singular: 'echo' },
        scope: 'Namespaced',
        versions: [
          {
            name: 'v1alpha1',
            served: true,
            storage: true,
            subresources: { status: {} },
            schema: {
              openAPIV3Schema: {
                type: 'object',
                properties: {
                  spec: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
                  status: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
                },
              },
            },
          },
        ],
      },
    },
    { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'echo-manager' } },
    {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'echo-manager' },
      spec: {
        replicas: 1,
        selector: { matchLabels: { app: 'echo-manager' } },
        template: {
          metadata: { labels: { app: 'echo-manager' } },
          spec: {
            serviceAccountName: 'echo-manager',
            containers: [{ name: 'manager', image: `example.invalid/echo-manager:${version}` }],
          },
        },
      },
    },
    ...(version === '1.0.0'
      ? [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'echo-legacy' }, data: { since: '1.0.0' } }]
      : []),
  ];
  return docs.map((d) => stringify(d)).join('---\n');
}

/** The ModuleTemplates of echo 1.0.0 and 1.1.0 as a community catalog holds them; the manifests pushed to `registryHost`. */
export async function echoTemplates(
  registryHost: string,
  group: string,
  managerNamespace: string,
): Promise<KubeObject[]> {
  const oci = Registries.unconfigured().client(registryHost);
  const templates: KubeObject[] = [];
  for (const version of ['1.0.0', '1.1.0']) {
    const digest = await oci.pushBlob(`community/${group}`, Buffer.from(echoManifest(group, version)));
    templates.push({
      apiVersion: API_VERSION,
      kind: 'ModuleTemplate',
      metadata: {
        name: `echo-${version}`,
        labels: { 'operator.kyma-project.io/module-name': 'echo' },
        annotations: { source: 'test' },
      },
      spec: {
        moduleName: 'echo',
        version,
        descriptor: {},
        data: {
          apiVersion: `${group}/v1alpha1`,
          kind: 'Echo',
          metadata: { name: 'default' },
          spec: { greeting: 'hello' },
        },
        manager: {
          group: 'apps',
          version: 'v1',
          kind: 'Deployment',
          name: 'echo-manager',
          namespace: managerNamespace,
        },
        associatedResources: [{ group, version: 'v1alpha1', kind: 'Echo' }],
        resources: [{ name: 'rawManifest', link: `http://${registryHost}/v2/community/${group}/blobs/${digest}` }],
      },
    });
  }
  return templates;
}
