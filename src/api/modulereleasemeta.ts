import type { ObjectMeta } from './shared';

export interface ChannelVersionAssignment {
  channel: string;
  version: string;
}

export interface ModuleReleaseMetaSpec {
  moduleName: string;
  ocmComponentName?: string;
  beta?: boolean;
  internal?: boolean;
  /** Exactly one of channels and mandatory is set (enforced by the CRD). */
  channels?: ChannelVersionAssignment[];
  mandatory?: { version: string };
  kymaSelector?: {
    matchLabels?: Record<string, string>;
    matchExpressions?: { key: string; operator: string; values?: string[] }[];
  };
}

export interface ModuleReleaseMeta {
  apiVersion: 'operator.kyma-project.io/v1beta2';
  kind: 'ModuleReleaseMeta';
  metadata: ObjectMeta;
  spec: ModuleReleaseMetaSpec;
}
