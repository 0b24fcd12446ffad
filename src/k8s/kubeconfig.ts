// Loading kubeconfigs: from a file (the control plane) or from a string (a Secret's data).
import { KubeConfig } from '@kubernetes/client-node';

export function kubeConfigFromFile(file: string): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromFile(file);
  return kc;
}

export function kubeConfigFromString(yaml: string): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromString(yaml);
  return kc;
}
