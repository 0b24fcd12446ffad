// klm module delete: the seed's deletion flow, for a module of the Kyma and for a direct install
// alike. While resources people made of the module's kinds exist it refuses and lists them, or,
// asked to (--delete-resources, confirmed or --auto-approve), deletes them first; then it
// removes the module from the Kyma (the lifecycle manager deletes it) or deletes the direct
// install itself. Idempotent: nothing there, nothing to do.
import type { Kyma } from '../api/kyma';
import type { ModuleTemplate } from '../api/moduletemplate';
import { API_VERSION, type KubeObject } from '../api/shared';
import type { KubeClient } from '../k8s/rest-client';
import { directDelete } from './direct-delete';
import { listRecords, readRecord, type DirectRecord } from './direct-record';
import {
  installTargetOf,
  moduleKinds,
  removeModule,
  resourcesOfKinds,
  targetOf,
  waitForModule,
  type KymaRef,
} from './kyma-modules';
import { isCommunityName } from './module-templates';
import { Refused } from './output';

export interface DeleteInput {
  module: string;
  ref: KymaRef;
  directNamespace: string;
  deleteResources?: boolean;
  autoApprove?: boolean;
  wait: boolean;
  timeoutMs: number;
  confirm: (question: string) => Promise<boolean>;
  say: (line: string) => void;
  progress: (line: string) => void;
}

/** Refuses while `resources` exist, unless asked to delete them (and confirmed). */
async function clearResources(
  target: KubeClient,
  module: string,
  resources: KubeObject[],
  d: DeleteInput,
): Promise<void> {
  if (!resources.length) return;
  const list = resources
    .map((r) => `  ${r.kind} ${r.metadata.namespace ? `${r.metadata.namespace}/` : ''}${r.metadata.name}`)
    .join('\n');
  if (!d.deleteResources)
    throw new Refused(
      `module ${module} still has resources of its kinds; delete them, or run again with --delete-resources:\n${list}`,
    );
  if (!d.autoApprove && !(await d.confirm(`delete these ${resources.length} resources?\n${list}\n`)))
    throw new Refused('not confirmed: nothing deleted (--auto-approve skips the question)');
  for (const r of resources) await target.delete(r.apiVersion, r.kind, r.metadata.name, r.metadata.namespace);
  d.say(`deleted ${resources.length} resources of module ${module}`);
}

/**
 * The direct install a name means: a module's, or a community module's by `namespace/template`
 * (any version of its module: the install may have been upgraded from another template since).
 */
async function directRecordOf(kube: KubeClient, target: KubeClient, d: DeleteInput): Promise<DirectRecord | undefined> {
  if (!isCommunityName(d.module)) return await readRecord(target, d.directNamespace, d.module);
  const [namespace, name] = d.module.split('/');
  const template = await kube.get<ModuleTemplate & KubeObject>(API_VERSION, 'ModuleTemplate', name!, namespace);
  if (template?.spec.moduleName) return await readRecord(target, d.directNamespace, template.spec.moduleName);
  return (await listRecords(target, d.directNamespace)).find((r) => r.template === d.module);
}

export async function deleteModule(kube: KubeClient, d: DeleteInput): Promise<void> {
  const kyma = await kube.get<Kyma & KubeObject>(API_VERSION, 'Kyma', d.ref.name, d.ref.namespace);
  const where = `Kyma ${d.ref.namespace}/${d.ref.name}`;
  if (kyma?.spec.modules?.some((m) => m.name === d.module)) {
    const target = await targetOf(kube, d.ref);
    await clearResources(
      target,
      d.module,
      await resourcesOfKinds(target, await moduleKinds(kube, d.ref.namespace, d.module)),
      d,
    );
    d.say(
      (await removeModule(kube, d.ref, d.module))
        ? `module ${d.module} removed from ${where}`
        : `module ${d.module} is not in ${where}: nothing to do`,
    );
    if (d.wait) {
      // Gone is done, whatever state it was in before (an Error it had then does not end the wait).
      await waitForModule(
        kube,
        d.ref,
        d.module,
        (s) => s === undefined,
        d.timeoutMs,
        d.progress,
        kyma.status?.modules?.find((m) => m.name === d.module),
      );
      d.say(`module ${d.module} is gone`);
    }
    return;
  }
  const target = await installTargetOf(kube, d.ref, kyma);
  const record = await directRecordOf(kube, target, d);
  if (!record) {
    d.say(
      `module ${d.module} is neither in ${where} nor installed directly in namespace ${d.directNamespace}: nothing to do`,
    );
    return;
  }
  await clearResources(target, record.module, await resourcesOfKinds(target, record.kinds), d);
  d.say(await directDelete(target, d.directNamespace, record, d.timeoutMs, d.progress));
}
