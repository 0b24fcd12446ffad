// The control-plane client: from a kubeconfig file, else in-cluster or ~/.kube/config.
import { defaultKubeConfig, kubeConfigFromFile } from './kubeconfig';
import { KubeClient } from './rest-client';

export async function controlPlaneClient(kubeconfig?: string): Promise<KubeClient> {
  if (kubeconfig) return await KubeClient.fromKubeConfig(kubeConfigFromFile(kubeconfig), { cluster: 'control-plane' });
  return await KubeClient.fromKubeConfig(defaultKubeConfig(), { cluster: 'control-plane' });
}
