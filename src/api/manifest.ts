import type { CustomResourcePolicy } from './kyma';
import type { Condition, LastOperation, ObjectMeta, ObjectRef, State } from './shared';

export interface InventoryEntry {
  group: string;
  version: string;
  kind: string;
  name: string;
  namespace: string;
}

export interface ManifestSpec {
  remote: boolean;
  version?: string;
  customResourcePolicy?: CustomResourcePolicy;
  install: { name: string; source: Record<string, unknown> };
  resource?: Record<string, unknown> | null;
  manager?: ObjectRef;
  config?: { name?: string; ref?: string; repo?: string; type?: 'helm-chart' | 'oci-ref' | 'kustomize' | '' };
  localizedImages?: string[];
}

export interface ManifestStatus {
  state: State;
  lastOperation?: LastOperation;
  conditions?: Condition[];
  /** The inventory of objects applied for this module. */
  synced?: InventoryEntry[];
}

export interface Manifest {
  apiVersion: 'operator.kyma-project.io/v1beta2';
  kind: 'Manifest';
  metadata: ObjectMeta;
  spec: ManifestSpec;
  status?: ManifestStatus;
}
