import type { CustomResourcePolicy } from './kyma';
import type { Condition, LastOperation, ObjectMeta, ObjectRef, State } from './shared';

/** An entry of upstream's Manifest status.synced: a reference with its namespace. */
export type InventoryEntry = Required<ObjectRef>;

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
