// The cluster klm talks to: a kubeconfig (--kubeconfig, else KUBECONFIG or ~/.kube/config, else
// in-cluster) and one of its contexts (--context, else its current one), through client-node.
import { KubeConfig } from '@kubernetes/client-node';
import { CLI_FIELD_MANAGER } from '../api/identity';
import { defaultKubeConfig, kubeConfigFromFile, NoKubeconfigError } from '../k8s/kubeconfig';
import { KubeClient } from '../k8s/rest-client';
import { UsageError } from './output';

export interface ClusterOptions {
  kubeconfig?: string;
  context?: string;
}

export async function clusterClient(o: ClusterOptions): Promise<KubeClient> {
  const kc = o.kubeconfig ? kubeConfigFromFile(o.kubeconfig) : defaultKubeConfigOrSay();
  if (o.context) {
    if (!kc.getContextObject(o.context))
      throw new UsageError(
        `the kubeconfig has no context "${o.context}"; it has: ${
          kc
            .getContexts()
            .map((c) => c.name)
            .join(', ') || 'none'
        }`,
      );
    kc.setCurrentContext(o.context);
  }
  return await KubeClient.fromKubeConfig(kc, { fieldManager: CLI_FIELD_MANAGER });
}

/** The default kubeconfig, or what to give instead when there is none. */
function defaultKubeConfigOrSay(): KubeConfig {
  try {
    return defaultKubeConfig();
  } catch (err) {
    if (err instanceof NoKubeconfigError)
      throw new UsageError(`${err.message}; name one with --kubeconfig or KUBECONFIG`);
    throw err;
  }
}

/** `namespace/name` of a Kyma, given as `what` (an option or an argument). */
export function kymaRefOf(value: string, what = '--kyma'): { namespace: string; name: string } {
  const [namespace, name, ...rest] = value.split('/');
  if (!namespace || !name || rest.length) throw new UsageError(`${what} takes namespace/name, not "${value}"`);
  return { namespace, name };
}
