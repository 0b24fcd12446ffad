// klm module list: the modules of the Kyma, and the modules klm installed directly (beside the
// Kyma, or in a cluster without one), each by the rules of its kind.
import type { Kyma } from '../api/kyma';
import { API_VERSION, type KubeObject } from '../api/shared';
import type { KubeClient } from '../k8s/rest-client';
import { listRecords, type DirectRecord } from './direct-record';
import { directState } from './direct-status';
import { kymaRows, targetOf, type KymaRef, type ModuleRow } from './kyma-modules';

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

/** The rows, and whether the Kyma exists (without one, only direct installs are listed). */
export async function moduleRows(kube: KubeClient, ref: KymaRef, directNamespace: string): Promise<{ rows: ModuleRow[]; kyma: boolean }> {
  const kyma = await kube.get<Kyma & KubeObject>(API_VERSION, 'Kyma', ref.name, ref.namespace);
  const target = kyma ? await targetOf(kube, ref).catch(() => undefined) : kube;
  const direct = target ? await Promise.all((await listRecords(target, directNamespace)).map((r) => directRow(target, r))) : [];
  const managed = kyma ? await kymaRows(kube, ref, kyma) : [];
  return { rows: [...managed, ...direct.sort((a, b) => a.name.localeCompare(b.name))], kyma: !!kyma };
}
