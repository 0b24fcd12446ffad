// klm module list and why: the modules of the Kyma, and the modules klm installed directly
// (beside the Kyma, or in a cluster without one), each by the rules of its kind.
import type { Kyma } from '../api/kyma';
import { API_VERSION, type KubeObject } from '../api/shared';
import type { KubeClient } from '../k8s/rest-client';
import { listRecords, readRecord, type DirectRecord } from './direct-record';
import { directState } from './direct-status';
import { why, type Why } from './kyma-module-why';
import { kymaRows } from './kyma-module-rows';
import { installTargetOf, type ErrorReport, type KymaRef, type ModuleRow } from './kyma-modules';
import { Refused } from './output';

async function directRow(target: KubeClient, r: DirectRecord): Promise<ModuleRow> {
  const s = await directState(target, r);
  const version = s.runningVersion ?? (r.phase === 'Installed' ? r.version : undefined);
  return {
    name: r.module,
    ...(version ? { version } : {}),
    ...(version !== r.version ? { desiredVersion: r.version } : {}),
    customResourcePolicy: r.customResourcePolicy,
    managed: false,
    moduleStatus: s.crState ?? (r.defaultCr ? 'NotFound' : '-'),
    installationStatus: s.state,
    message: s.message,
    direct: { template: r.template, community: r.community },
  };
}

/**
 * The rows, and whether the Kyma exists (without one, only direct installs are listed); what
 * cannot be read goes to `report` (`--show-errors`).
 */
export async function moduleRows(
  kube: KubeClient,
  ref: KymaRef,
  directNamespace: string,
  report: ErrorReport = () => undefined,
): Promise<{ rows: ModuleRow[]; kyma: boolean }> {
  const kyma = await kube.get<Kyma & KubeObject>(API_VERSION, 'Kyma', ref.name, ref.namespace);
  const target = await installTargetOf(kube, ref, kyma).catch((err: Error) => {
    report(
      `the cluster of Kyma ${ref.namespace}/${ref.name} cannot be reached, so its direct installs are not listed: ${err.message}`,
    );
    return undefined;
  });
  const direct = target
    ? await Promise.all((await listRecords(target, directNamespace)).map((r) => directRow(target, r)))
    : [];
  const managed = kyma ? await kymaRows(kube, ref, kyma, report) : [];
  return { rows: [...managed, ...direct.sort((a, b) => a.name.localeCompare(b.name))], kyma: !!kyma };
}

/**
 * Why the module is where it is: as the Kyma has it, else as klm installed it directly (the Kyma
 * is read first, so that a Kyma whose Secret is broken still explains its modules).
 */
export async function whyModule(
  kube: KubeClient,
  ref: KymaRef,
  module: string,
  directNamespace: string,
  temporalUi?: string,
  temporalNamespace?: string,
): Promise<Why> {
  const kyma = await kube.get<Kyma & KubeObject>(API_VERSION, 'Kyma', ref.name, ref.namespace);
  if (kyma?.spec.modules?.some((m) => m.name === module) || kyma?.status?.modules?.some((m) => m.name === module))
    return await why(kube, ref, module, temporalUi, temporalNamespace);
  const target = await installTargetOf(kube, ref, kyma);
  const record = await readRecord(target, directNamespace, module);
  const where = kyma ? `Kyma ${ref.namespace}/${ref.name}` : `a Kyma (there is no Kyma ${ref.namespace}/${ref.name})`;
  if (!record)
    throw new Refused(`module ${module} is neither in ${where} nor installed directly in namespace ${directNamespace}`);
  const row = await directRow(target, record);
  return {
    module,
    kyma: kyma ? `${ref.namespace}/${ref.name}` : '-',
    state: row.installationStatus,
    ...(row.message ? { message: row.message } : {}),
    ...(row.version ? { installedVersion: row.version } : {}),
    desiredVersion: record.version,
    direct: { template: record.template, community: record.community, namespace: directNamespace },
    events: [],
  };
}
