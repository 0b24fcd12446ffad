// The rows of `klm module list` for a Kyma's modules: the Kyma's spec says what is wanted, its
// status what the lifecycle manager did, the module's custom resources (in the Kyma's target
// cluster) what the module itself says, read as the Kyma CLI reads them; an unmanaged module's
// version is read from its manager when its status entry has none.
import type { Kyma, KymaModule, ModuleStatus } from '../api/kyma';
import type { ModuleTemplate } from '../api/moduletemplate';
import { OWNED_BY_ANNOTATION, ownedBy } from '../api/names';
import type { KubeObject } from '../api/shared';
import type { Resolution } from '../contract/module';
import { moduleVersions } from '../decisions/module-versions';
import { isNotFound } from '../k8s/request-errors';
import type { KubeClient } from '../k8s/rest-client';
import { runningVersionOf, type Manager } from './direct-status';
import { resolutionOf, targetOf, type ErrorReport, type KymaRef, type ModuleRow } from './kyma-modules';
import { catalogObjects, type CatalogObjects } from './module-catalog';

/** The Kyma CLI's order of CR states: of several CRs of a module's kind, the first of these any has is shown. */
const STATE_PRECEDENCE = ['Ready', 'Processing', 'Deleting', 'Error', 'Warning'];

/** The state the Kyma CLI shows of several CRs: the first known one by precedence, else the first of any other. */
export function highestState(states: string[]): string | undefined {
  return STATE_PRECEDENCE.find((s) => states.includes(s)) ?? states[0];
}

type Cr = KubeObject & { status?: { state?: string } };

/** The module's default CR, as its status entry tracks it (policy CreateAndDelete). */
async function trackedCrState(
  target: KubeClient,
  module: string,
  r: NonNullable<ModuleStatus['resource']>,
  report: ErrorReport,
): Promise<string> {
  try {
    const cr = await target.get<Cr>(r.apiVersion!, r.kind!, r.metadata!.name!, r.metadata!.namespace);
    return cr ? (cr.status?.state ?? 'Unknown') : 'NotFound';
  } catch (err) {
    report(
      `module ${module}: its custom resource ${r.kind} ` +
        `${r.metadata!.namespace ? `${r.metadata!.namespace}/` : ''}${r.metadata!.name} cannot be ` +
        `read: ${(err as Error).message}`,
    );
    return 'Unknown';
  }
}

/**
 * The state of the CRs of the kind of the module's default CR (its template's spec.data), in all
 * namespaces, as the Kyma CLI reads a module's: for a module whose CR the lifecycle manager does
 * not track (policy Ignore: the user makes it, from --config-cr-path or by hand). `-`: none yet;
 * NotRunning: the kind is not served (as the Kyma CLI says).
 */
async function kindCrState(
  target: KubeClient,
  module: string,
  data: { apiVersion?: string; kind?: string },
  report: ErrorReport,
): Promise<string> {
  if (!data.apiVersion || !data.kind) return '-';
  try {
    const { items } = await target.list<Cr>(data.apiVersion, data.kind);
    if (!items.length) return '-';
    return highestState(items.map((i) => i.status?.state).filter((x): x is string => !!x)) ?? 'Unknown';
  } catch (err) {
    if (isNotFound(err)) return 'NotRunning';
    report(
      `module ${module}: the custom resources of its kind ${data.kind} cannot be listed: ${(err as Error).message}`,
    );
    return 'Unknown';
  }
}

/** The template a module's row reads its CR's kind from: the one its status names, else the one it resolves to. */
function templateOf(
  objects: CatalogObjects,
  status: ModuleStatus | undefined,
  resolution: Resolution | undefined,
): ModuleTemplate | undefined {
  const name = status?.template?.metadata?.name ?? resolution?.module?.template.name;
  return name ? objects.templates.find((t) => t.metadata.name === name) : undefined;
}

/**
 * The versions unmanaged modules run, read from their managers in the Kyma's cluster: the workloads
 * the lifecycle manager applied for them (its owned-by annotation stays when a module is released),
 * told as direct installs tell theirs (klm's stamp, app.kubernetes.io/version, the manager's tag).
 */
async function releasedVersions(
  target: KubeClient,
  ref: KymaRef,
  modules: string[],
  report: ErrorReport,
): Promise<Map<string, string>> {
  const found = new Map<string, string>();
  if (!modules.length) return found;
  const owners = new Map(modules.map((m) => [ownedBy(ref.namespace, ref.name, m), m]));
  try {
    for (const kind of ['Deployment', 'StatefulSet']) {
      for (const w of (await target.list<Manager>('apps/v1', kind)).items) {
        const module = owners.get(w.metadata.annotations?.[OWNED_BY_ANNOTATION] ?? '');
        const version = module && runningVersionOf(w);
        if (module && version && !found.has(module)) found.set(module, version);
      }
    }
  } catch (err) {
    report(
      `the managers of unmanaged modules cannot be listed, so their versions are not shown: ${(err as Error).message}`,
    );
  }
  return found;
}

/** The rows of the modules the Kyma has. */
export async function kymaRows(
  kube: KubeClient,
  ref: KymaRef,
  kyma: Kyma,
  report: ErrorReport = () => undefined,
): Promise<ModuleRow[]> {
  const objects = await catalogObjects(kube, ref.namespace);
  const target = await targetOf(kube, ref).catch((err: Error) => {
    report(
      `the cluster of Kyma ${ref.namespace}/${ref.name} cannot be reached, so its modules' CRs are not read: ${err.message}`,
    );
    return undefined;
  });
  const specs = new Map((kyma.spec.modules ?? []).map((m) => [m.name, m]));
  const statuses = new Map((kyma.status?.modules ?? []).map((m) => [m.name, m]));
  const names = [...new Set([...specs.keys(), ...statuses.keys()])].sort();
  const unmanaged = names.filter((n) => specs.get(n)?.managed === false && !statuses.get(n)?.version);
  const released = target ? await releasedVersions(target, ref, unmanaged, report) : new Map<string, string>();
  return await Promise.all(
    names.map(async (name) => {
      const spec = specs.get(name);
      const status = statuses.get(name);
      const resolution = spec ? await resolutionOf(kyma, spec, objects) : undefined;
      const data = templateOf(objects, status, resolution)?.spec.data ?? {};
      const r = status?.resource;
      const moduleStatus = !target
        ? 'Unknown'
        : r?.apiVersion && r.kind && r.metadata?.name
          ? await trackedCrState(target, name, r, report)
          : spec
            ? await kindCrState(target, name, data, report)
            : '-';
      const row = kymaRow(name, spec, status, resolution, moduleStatus);
      if (spec?.managed !== false) return row;
      // Unmanaged: the lifecycle manager moves it nowhere, so no version is wanted; what runs is
      // its status entry's version, else its manager's, with the channel it was on.
      const { desiredVersion: _wanted, ...rest } = row;
      const version = row.version ?? released.get(name);
      const channel = row.installedChannel ?? spec.channel ?? kyma.spec.channel;
      return { ...rest, ...(version ? { version } : {}), ...(version && channel ? { installedChannel: channel } : {}) };
    }),
  );
}

/** The row of module `name` of a Kyma: its entry in the spec and in the status (either may lack), what its spec resolves to. */
function kymaRow(
  name: string,
  spec: KymaModule | undefined,
  status: ModuleStatus | undefined,
  resolution: Resolution | undefined,
  moduleStatus: string,
): ModuleRow {
  const v = moduleVersions(status, resolution);
  const channel = spec?.channel ?? status?.channel;
  return {
    name,
    ...(v.installed ? { version: v.installed } : {}),
    ...(v.wanted && v.wanted !== v.installed ? { desiredVersion: v.wanted } : {}),
    ...(channel ? { channel } : {}),
    ...(status?.channel ? { installedChannel: status.channel } : {}),
    customResourcePolicy: spec?.customResourcePolicy ?? 'CreateAndDelete',
    managed: spec?.managed ?? true,
    moduleStatus,
    installationStatus: status?.state ?? (spec ? 'Pending' : '-'),
    ...(status?.message ? { message: status.message } : {}),
  };
}
