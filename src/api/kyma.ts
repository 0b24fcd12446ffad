import type { Condition, ConditionInput, LastOperation, ObjectMeta, State, TrackingObject } from './shared';

export type CustomResourcePolicy = 'CreateAndDelete' | 'Ignore';

export interface KymaModule {
  name: string;
  channel?: string;
  /** Explicit version pin; an extension of this implementation (disabled upstream). */
  version?: string;
  controller?: string;
  remoteModuleTemplateRef?: string;
  customResourcePolicy?: CustomResourcePolicy;
  managed?: boolean;
}

export interface KymaSpec {
  channel: string;
  skipMaintenanceWindows?: boolean;
  modules?: KymaModule[];
}

export interface ModuleStatus {
  name: string;
  fqdn?: string;
  ocmComponentName?: string;
  channel?: string;
  version?: string;
  message?: string;
  state: State;
  maintenance?: boolean;
  manifest?: TrackingObject;
  resource?: TrackingObject;
  template?: TrackingObject;
}

export interface KymaStatus {
  state?: State;
  activeChannel?: string;
  lastOperation?: LastOperation;
  conditions?: Condition[];
  modules?: ModuleStatus[];
}

export interface Kyma {
  apiVersion: 'operator.kyma-project.io/v1beta2';
  kind: 'Kyma';
  metadata: ObjectMeta;
  spec: KymaSpec;
  status?: KymaStatus;
}

/** Kyma status as the workflow computes it: conditions without times (the writer adds them). */
export type KymaStatusInput = Omit<KymaStatus, 'conditions'> & { conditions?: ConditionInput[] };
