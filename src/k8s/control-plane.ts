// The control-plane client: from a kubeconfig file, else in-cluster or ~/.kube/config.
import { KubeConfig } from '@kubernetes/client-node';
import { kubeConfigFromFile } from './kubeconfig';
import { KubeClient } from './rest-client';

export async function controlPlaneClient(kubeconfig?: string): Promise<KubeClient> {
  if (kubeconfig) return await KubeClient.fromKubeConfig(kubeConfigFromFile(kubeconfig), { cluster: 'control-plane' });
  const kc = new KubeConfig();
  kc.loadFromDefault();
  return await KubeClient.fromKubeConfig(kc, { cluster: 'control-plane' });
}
