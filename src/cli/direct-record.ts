// What klm remembers of a direct install (a module installed without a Kyma, by klm itself): a
// ConfigMap `klm-module-<module>` in the install's namespace of the cluster, written before the
// first object is applied and again once the install is complete. It says which version is
// wanted, whether the install finished, what may have been applied (a later version prunes what
// it no longer has, a deletion deletes it, also after an interrupted run) and which default CR was created (created once: an upgrade
// leaves it as its users changed it).
import { CLI_MANAGED_BY } from '../api/identity';
import type { ObjectId } from '../api/object-id';
import { LABELS, type KubeObject } from '../api/shared';
import type { KubeClient } from '../k8s/rest-client';

export interface DirectRecord {
  module: string;
  /** The version the last `klm module add` asked for. */
  version: string;
  /** The ModuleTemplate it came from: `namespace/name`. */
  template: string;
  /** A community module (pulled from a community catalog), not one the lifecycle manager offers. */
  community: boolean;
  customResourcePolicy: 'CreateAndDelete' | 'Ignore';
  /** Installing: an install or upgrade to `version` began and has not finished. */
  phase: 'Installing' | 'Installed';
  /** What the last complete install applied, in order; while Installing, also what the unfinished run applies. */
  objects: ObjectId[];
  /** The default CR klm created, once. */
  defaultCr?: ObjectId;
  /** The module's CR kind and its associatedResources: the kinds of the resources people make. */
  kinds: { apiVersion: string; kind: string }[];
  /** The manager workload (the template's spec.manager, else the manifest's first Deployment or StatefulSet). */
  manager?: ObjectId;
}

const PREFIX = 'klm-module-';
const KEY = 'record.json';

export function recordName(module: string): string {
  return `${PREFIX}${module}`;
}

type RecordMap = KubeObject & { data?: Record<string, string> };

/** The record a ConfigMap holds, if it is one. */
export function recordOf(cm: RecordMap | undefined): DirectRecord | undefined {
  const text = cm?.data?.[KEY];
  if (!text) return undefined;
  try {
    return JSON.parse(text) as DirectRecord;
  } catch {
    return undefined;
  }
}

export async function readRecord(
  target: KubeClient,
  namespace: string,
  module: string,
): Promise<DirectRecord | undefined> {
  return recordOf(await target.get<RecordMap>('v1', 'ConfigMap', recordName(module), namespace));
}

/** Every direct install recorded in `namespace`. */
export async function listRecords(target: KubeClient, namespace: string): Promise<DirectRecord[]> {
  const { items } = await target.list<RecordMap>('v1', 'ConfigMap', {
    namespace,
    labelSelector: `${LABELS.managedBy}=${CLI_MANAGED_BY}`,
  });
  return items
    .filter((cm) => cm.metadata.name.startsWith(PREFIX))
    .map(recordOf)
    .filter((r): r is DirectRecord => r !== undefined);
}

export async function writeRecord(target: KubeClient, namespace: string, record: DirectRecord): Promise<void> {
  await target.apply<RecordMap>({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: {
      name: recordName(record.module),
      namespace,
      labels: { [LABELS.managedBy]: CLI_MANAGED_BY, [LABELS.moduleName]: record.module },
    },
    data: { [KEY]: JSON.stringify(record, null, 2) },
  });
}

export async function deleteRecord(target: KubeClient, namespace: string, module: string): Promise<void> {
  await target.delete('v1', 'ConfigMap', recordName(module), namespace);
}
