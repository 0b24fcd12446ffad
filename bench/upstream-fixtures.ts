// What upstream lifecycle-manager 1.20.4 needs on a plain kube-apiserver beside its own CRDs
// (see bench/UPSTREAM.md): stub CRDs for what Istio and cert-manager would bring (open schemas),
// the Istio Gateway it reads at startup, the gateway's CA Secret, and per Kyma its kubeconfig
// Secret and the TLS Secret cert-manager would issue. Its Kymas live in kcp-system, as in
// production.
import type { KubeObject } from '../src/api/shared';
import { LABELS } from '../src/api/shared';
import type { Crd } from '../src/k8s/crds';

/** Upstream's control-plane namespace (hard-coded for kubeconfig Secrets, its cache's namespace). */
export const KCP_NAMESPACE = 'kcp-system';
/** Where upstream puts the per-Kyma Certificates and reads the gateway's CA Secret. */
export const ISTIO_NAMESPACE = 'istio-system';
/** Upstream's CRDs in its source tree (config/crd/kustomization.yaml lists these). */
export const UPSTREAM_CRD_FILES = ['kymas', 'manifests', 'moduletemplates', 'modulereleasemetas', 'watchers'].map(
  (x) => `config/crd/bases/operator.kyma-project.io_${x}.yaml`,
);

function stubCrd(group: string, kind: string, plural: string, versions: string[]): Crd {
  const open = { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } };
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${plural}.${group}` },
    spec: {
      group,
      names: { kind, listKind: `${kind}List`, plural, singular: kind.toLowerCase() },
      scope: 'Namespaced',
      versions: versions.map((name, i) => ({
        name,
        served: true,
        storage: i === 0,
        subresources: { status: {} },
        schema: open,
      })),
    },
  };
}

/** Istio's Gateway (read at startup) and VirtualService (Watcher CRs only); cert-manager's Certificate and Issuer. */
export function stubCrds(): Crd[] {
  return [
    stubCrd('networking.istio.io', 'Gateway', 'gateways', ['v1beta1', 'v1']),
    stubCrd('networking.istio.io', 'VirtualService', 'virtualservices', ['v1beta1', 'v1']),
    stubCrd('cert-manager.io', 'Certificate', 'certificates', ['v1']),
    stubCrd('cert-manager.io', 'Issuer', 'issuers', ['v1']),
  ];
}

export function namespaces(): KubeObject[] {
  return [KCP_NAMESPACE, ISTIO_NAMESPACE].map((name) => ({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } }));
}

/** The Gateway `kcp-system/klm-watcher`: one server, one host (only written into the SKR watcher's KCP_ADDR). */
export function gateway(): KubeObject {
  return {
    apiVersion: 'networking.istio.io/v1beta1',
    kind: 'Gateway',
    metadata: { name: 'klm-watcher', namespace: KCP_NAMESPACE },
    spec: {
      selector: { istio: 'ingressgateway' },
      servers: [
        {
          hosts: ['listener.kcp.local'],
          port: { name: 'https', number: 443, protocol: 'HTTPS' },
          tls: { mode: 'MUTUAL', credentialName: 'klm-istio-gateway' },
        },
      ],
    },
  };
}

export interface Pem {
  cert: string;
  key: string;
}

const b64 = (s: string) => Buffer.from(s).toString('base64');

/** A TLS Secret (`tls.crt`, `tls.key`, `ca.crt`), as cert-manager issues it; self-signed here. */
export function tlsSecret(name: string, namespace: string, pem: Pem, annotations?: Record<string, string>): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    type: 'kubernetes.io/tls',
    metadata: { name, namespace, ...(annotations ? { annotations } : {}) },
    data: { 'tls.crt': b64(pem.cert), 'tls.key': b64(pem.key), 'ca.crt': b64(pem.cert) },
  };
}

/** The gateway's CA Secret: without it (and its `caAddedToBundleAt`) a Kyma errors "failed to get gateway certificate secret". */
export function gatewaySecret(pem: Pem): KubeObject {
  return tlsSecret('klm-istio-gateway', ISTIO_NAMESPACE, pem, {
    caAddedToBundleAt: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
  });
}

/** A KCP Kyma as upstream wants it: the runtime-id label, the skr-domain annotation, its modules. */
export function upstreamKyma(name: string, modules: string[]): KubeObject {
  return {
    apiVersion: 'operator.kyma-project.io/v1beta2',
    kind: 'Kyma',
    metadata: {
      name,
      namespace: KCP_NAMESPACE,
      labels: { 'kyma-project.io/runtime-id': name, 'kyma-project.io/instance-id': name },
      annotations: { 'skr-domain': `${name}.skr.local` },
    },
    spec: { channel: 'regular', modules: modules.map((m) => ({ name: m })) },
  };
}

/** The Kyma's kubeconfig Secret in kcp-system, found by its label alone, key `config`. */
export function upstreamKubeconfigSecret(kyma: string, kubeconfig: string): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: `kubeconfig-${kyma}`, namespace: KCP_NAMESPACE, labels: { [LABELS.kymaName]: kyma } },
    data: { config: b64(kubeconfig) },
  };
}
