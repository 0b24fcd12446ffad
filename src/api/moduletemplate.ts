import type { ObjectMeta, ObjectRef, State } from './shared';

export interface CustomStateCheck {
  jsonPath: string;
  value: string;
  mappedState: State;
}

export interface ModuleTemplateSpec {
  moduleName?: string;
  version?: string;
  /** Deprecated upstream: channels are assigned by ModuleReleaseMeta. */
  channel?: string;
  mandatory?: boolean;
  requiresDowntime?: boolean;
  /** The module's default custom resource. */
  data?: Record<string, unknown>;
  /** The OCM component descriptor, inline, or a reference to it in the registry. */
  descriptor: Record<string, unknown>;
  manager?: ObjectRef;
  customStateCheck?: CustomStateCheck[];
  associatedResources?: { group: string; version: string; kind: string }[];
  resources?: { name: string; link: string }[];
  info?: { documentation: string; repository: string; icons?: { name: string; link: string }[] };
}

export interface ModuleTemplate {
  apiVersion: 'operator.kyma-project.io/v1beta2';
  kind: 'ModuleTemplate';
  metadata: ObjectMeta;
  spec: ModuleTemplateSpec;
}
