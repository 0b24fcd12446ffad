// Deleting a direct install, in the order the seed's deletion flow asks: the default CR first
// (its manager, still running, clears its finalizers), then what the manifest applied, in the
// worker's deletion order (src/manifests: ordinary objects first, CRDs last), then klm's record. Each step tolerates what is gone already, so a
// second run finishes an interrupted one. Cluster-scoped objects that something else applied
// too (the lifecycle manager installing the same module for a Kyma in this cluster) stay.
import { CLI_FIELD_MANAGER } from '../api/identity';
import { describeObject } from '../api/names';
import type { ObjectId } from '../api/object-id';
import type { KubeObject } from '../api/shared';
import type { KubeClient } from '../k8s/rest-client';
import { deletionTiers } from '../manifests/order';
import { deleteRecord, type DirectRecord } from './direct-record';
import { Refused } from './output';

function describe(o: ObjectId): string {
  return describeObject(o.kind, o.name, o.namespace);
}

/** Others that applied fields of the object: it is not only klm's direct install's to delete. */
async function sharedWith(target: KubeClient, o: ObjectId): Promise<string[]> {
  const live = await target.get<KubeObject>(o.apiVersion, o.kind, o.name, o.namespace).catch(() => undefined);
  return [
    ...new Set(
      (live?.metadata.managedFields ?? [])
        .map((f) => f.manager)
        .filter((m) => m !== CLI_FIELD_MANAGER && m !== 'kube-apiserver'),
    ),
  ];
}

async function waitGone(target: KubeClient, o: ObjectId, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const live = await target.get<KubeObject>(o.apiVersion, o.kind, o.name, o.namespace).catch(() => undefined);
    if (!live) return;
    if (Date.now() > deadline) {
      const finalizers = live.metadata.finalizers?.length
        ? ` (finalizers: ${live.metadata.finalizers.join(', ')})`
        : '';
      throw new Refused(
        `${describe(o)} is still being deleted after ${Math.round(timeoutMs / 1000)} ` +
          `s${finalizers}; its manager clears that. Run \`klm module delete\` again once it is gone`,
      );
    }
    await new Promise((r) => setTimeout(r, 500));
  }
}

export async function directDelete(
  target: KubeClient,
  namespace: string,
  record: DirectRecord,
  timeoutMs: number,
  progress: (line: string) => void,
): Promise<string> {
  if (record.defaultCr) {
    progress(`deleting the default CR ${describe(record.defaultCr)}`);
    await target
      .delete(record.defaultCr.apiVersion, record.defaultCr.kind, record.defaultCr.name, record.defaultCr.namespace)
      .catch(() => false);
    await waitGone(target, record.defaultCr, timeoutMs);
  }
  const order = deletionTiers(record.objects).flat();
  const kept: string[] = [];
  progress(`deleting ${order.length} objects of ${record.module} ${record.version}`);
  for (const o of order) {
    if (!o.namespace) {
      const others = await sharedWith(target, o);
      if (others.length) {
        kept.push(`${describe(o)} (also applied by ${others.join(', ')})`);
        continue;
      }
    }
    await target.delete(o.apiVersion, o.kind, o.name, o.namespace);
  }
  await deleteRecord(target, namespace, record.module);
  return `module ${record.module} deleted${kept.length ? `; kept, because others use them: ${kept.join(', ')}` : ''}`;
}
