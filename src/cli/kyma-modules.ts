// The modules of one Kyma as klm module list|add|delete|manage|unmanage|why see and change them:
// the Kyma's spec says what is wanted, its status what the lifecycle manager did, the module's
// custom resource (in the Kyma's target cluster) what the module itself says.
import type { CustomResourcePolicy, Kyma, KymaModule, ModuleStatus } from '../api/kyma';
import type { ModuleTemplate } from '../api/moduletemplate';
import { OWNED_BY_ANNOTATION } from '../api/names';
import { CLI_FIELD_MANAGER, CLI_MANAGED_BY } from '../api/identity';
import { API_VERSION, apiVersionOf, LABELS, type KubeObject } from '../api/shared';
import type { KymaRef } from '../contract/kyma';
import type { Resolution } from '../contract/module';
import type { Readiness } from '../contract/readiness';
import { resolveModule } from '../decisions/resolution';
import { specModules } from '../decisions/runtime-kyma';
import { kymaVisibility } from '../decisions/visibility';
import { isNotFound, KubeApiError } from '../k8s/request-errors';
import { type KubeClient } from '../k8s/rest-client';
import { clientFromSecret } from '../k8s/target-cluster';
import { catalogEntries, catalogObjects, resolutionCatalog, type CatalogObjects } from './module-catalog';
import { Refused, table, WaitTimeoutError } from './output';

/** The Kyma a command names (`--kyma namespace/name`): the workflows' reference. */
export type { KymaRef } from '../contract/kyma';

type KymaObject = Kyma & KubeObject;

export async function readKyma(kube: KubeClient, ref: KymaRef): Promise<KymaObject> {
  const kyma = await kube.get<KymaObject>(API_VERSION, 'Kyma', ref.name, ref.namespace);
  if (!kyma)
    throw new Refused(`there is no Kyma ${ref.namespace}/${ref.name} (name another with --kyma namespace/name)`);
  return kyma;
}

/**
 * The cluster the Kyma's modules run in: its kubeconfig Secret's, else the one klm talks to. A
 * Secret's kubeconfig may not run commands on the machine of whoever runs klm (no exec plugins).
 */
export async function targetOf(kube: KubeClient, ref: KymaRef): Promise<KubeClient> {
  const { items } = await kube.list<KubeObject>('v1', 'Secret', {
    namespace: ref.namespace,
    labelSelector: `${LABELS.kymaName}=${ref.name}`,
  });
  return items[0] ? await clientFromSecret(items[0], { allowExec: false, fieldManager: CLI_FIELD_MANAGER }) : kube;
}

/** Where a direct install goes: the Kyma's target cluster, or, without a Kyma, the cluster klm talks to. */
export async function installTargetOf(kube: KubeClient, ref: KymaRef, kyma: Kyma | undefined): Promise<KubeClient> {
  return kyma ? await targetOf(kube, ref) : kube;
}

export interface ModuleRow {
  name: string;
  /** What runs, as the Kyma's status has it. */
  version?: string;
  /** What the Kyma wants (a pinned version, else its channel's), when it differs from what runs. */
  desiredVersion?: string;
  channel?: string;
  /** The channel of what runs, as the Kyma's status has it (the Kyma CLI shows it beside the version). */
  installedChannel?: string;
  customResourcePolicy: string;
  managed: boolean;
  /** The module's own custom resource's state (status.state), when it can be read. */
  moduleStatus: string;
  /** The lifecycle manager's state of the module (the Kyma's status.modules[].state). */
  installationStatus: string;
  message?: string;
  /** Installed by klm directly, not through the Kyma: from which template, a community module or not. */
  direct?: { template: string; community: boolean };
}

/** The module as the worker resolves it for the Kyma: its pin, else what its channel points at, or why it cannot be installed. */
export async function resolutionOf(kyma: Kyma, m: KymaModule, objects: CatalogObjects): Promise<Resolution> {
  return await resolveModule(specModules([m])[0]!, kyma.spec.channel, resolutionCatalog(objects), kymaVisibility(kyma));
}

/** Where `module list --show-errors` says what could not be read (the list shows Unknown). */
export type ErrorReport = (line: string) => void;

/**
 * A module as `klm module list -o json|yaml` prints it: the Kyma CLI's fields, named and typed as
 * its columns (`version` with the channel, `managed` a string), then klm's own.
 */
export interface ModuleListEntry {
  name: string;
  /** What runs, with the channel it came from, as the Kyma CLI shows it: `1.2.3(regular)`; `-` when nothing is installed. */
  version: string;
  crPolicy: string;
  managed: 'true' | 'false';
  moduleStatus: string;
  installationStatus: string;
  installedVersion?: string;
  desiredVersion?: string;
  channel?: string;
  message?: string;
  direct?: { template: string; community: boolean };
}

export function listEntries(rows: ModuleRow[]): ModuleListEntry[] {
  return rows.map((r) => ({
    name: r.name,
    version: r.version ? `${r.version}${r.installedChannel ? `(${r.installedChannel})` : ''}` : '-',
    crPolicy: r.customResourcePolicy,
    managed: r.managed ? 'true' : 'false',
    moduleStatus: r.moduleStatus,
    installationStatus: r.installationStatus,
    ...(r.version ? { installedVersion: r.version } : {}),
    ...(r.desiredVersion ? { desiredVersion: r.desiredVersion } : {}),
    ...(r.channel ? { channel: r.channel } : {}),
    ...(r.message ? { message: r.message } : {}),
    ...(r.direct ? { direct: r.direct } : {}),
  }));
}

/** The Kyma CLI's columns; an empty list is the header alone, as the Kyma CLI prints it. */
export function moduleTable(entries: ModuleListEntry[]): string {
  const body = table(
    ['NAME', 'VERSION', 'CR POLICY', 'MANAGED', 'MODULE STATUS', 'INSTALLATION STATUS'],
    entries.map((e) => [
      e.name,
      `${e.version}${e.desiredVersion ? ` (*${e.desiredVersion})` : ''}`,
      e.crPolicy,
      e.managed,
      e.moduleStatus,
      e.installationStatus,
    ]),
  );
  return entries.some((e) => e.desiredVersion)
    ? `${body}\n(*V): the Kyma wants version V, which is not the one running yet`
    : body;
}

/**
 * Writes the Kyma's module list, guarded by the resourceVersion it was read at, so that an edit
 * made meanwhile by someone else is not lost (one more read and try on a conflict).
 */
async function editModules(
  kube: KubeClient,
  ref: KymaRef,
  edit: (modules: KymaModule[], kyma: KymaObject) => KymaModule[] | undefined,
): Promise<boolean> {
  for (let attempt = 0; ; attempt++) {
    const kyma = await readKyma(kube, ref);
    const next = edit(structuredClone(kyma.spec.modules ?? []), kyma);
    if (!next) return false;
    try {
      await kube.mergePatch(API_VERSION, 'Kyma', ref.name, ref.namespace, {
        metadata: { resourceVersion: kyma.metadata.resourceVersion },
        spec: { modules: next },
      });
      return true;
    } catch (err) {
      if (!(err instanceof KubeApiError && err.status === 409) || attempt > 0) throw err;
    }
  }
}

export interface AddOptions {
  channel?: string;
  version?: string;
  policy?: CustomResourcePolicy;
  /** The policy of a module the Kyma does not have yet when none is asked (`klm module add`: Ignore, as the Kyma CLI). */
  newPolicy?: CustomResourcePolicy;
}

/** Why the worker would not install the module as asked, and what to do about it. */
function refusalOf(f: Readiness, ref: KymaRef): string {
  if (f.reason === 'ModuleNotVisible')
    return `${f.message}: label Kyma ${ref.namespace}/${ref.name} so to use it, or choose another --channel or --version`;
  return `${f.message}; \`klm module catalog --kyma ${ref.namespace}/${ref.name}\` shows what this Kyma can use (--channel, --version)`;
}

/** The module's entry as the add writes it among `modules`, and the one it replaces. */
function added(modules: KymaModule[], module: string, o: AddOptions): { before?: KymaModule; wanted: KymaModule } {
  const before = modules.find((m) => m.name === module);
  const wanted: KymaModule = { ...(before ?? {}), name: module };
  if (o.channel) wanted.channel = o.channel;
  if (o.version) wanted.version = o.version;
  const policy = o.policy ?? (before ? undefined : o.newPolicy);
  if (policy) wanted.customResourcePolicy = policy;
  return { ...(before ? { before } : {}), wanted };
}

/**
 * Adds `module` to the Kyma, or changes how it is added; refuses what the catalog does not offer,
 * and what the worker's resolution says it could not install (a template the Kyma may not see, a
 * channel without a version or whose version has no template).
 */
export async function addModule(kube: KubeClient, ref: KymaRef, module: string, o: AddOptions): Promise<string> {
  const objects = await catalogObjects(kube, ref.namespace);
  // Every module of the namespace: one the Kyma may not see is refused below, naming the label it lacks.
  const entry = (await catalogEntries(objects)).find((e) => e.name === module);
  if (!entry)
    throw new Refused(
      `module "${module}" is not in the catalog of namespace ${ref.namespace}; \`klm module catalog\` lists what is`,
    );
  if (o.channel && !(o.channel in entry.channels))
    throw new Refused(
      `module ${module} has no channel "${o.channel}"; it has: ${Object.keys(entry.channels).join(', ') || 'none'}`,
    );
  if (o.version && !entry.versions.includes(o.version))
    throw new Refused(`module ${module} has no version "${o.version}"; it has: ${entry.versions.join(', ')}`);
  const kyma = await readKyma(kube, ref);
  const r = await resolutionOf(kyma, added(kyma.spec.modules ?? [], module, o).wanted, objects);
  if (r.failure) throw new Refused(refusalOf(r.failure, ref));
  let replaced: KymaModule | undefined;
  let written: KymaModule | undefined;
  const changed = await editModules(kube, ref, (modules) => {
    const { before, wanted } = added(modules, module, o);
    replaced = before;
    written = wanted;
    if (before && JSON.stringify(before) === JSON.stringify(wanted)) return undefined;
    return before ? modules.map((m) => (m === before ? wanted : m)) : [...modules, wanted];
  });
  if (!changed) return `module ${module} is already in Kyma ${ref.namespace}/${ref.name} as asked`;
  if (replaced) return `module ${module} changed in Kyma ${ref.namespace}/${ref.name}`;
  const cr =
    written?.customResourcePolicy === 'Ignore'
      ? 'without its default CR (CR policy Ignore; --default-config-cr creates it)'
      : 'with its default CR (CR policy CreateAndDelete)';
  return `module ${module} added to Kyma ${ref.namespace}/${ref.name} ${cr}`;
}

/** Sets the module's `managed` flag, and its CR policy when one is given; refuses a module the Kyma does not list. */
export async function setManaged(
  kube: KubeClient,
  ref: KymaRef,
  module: string,
  managed: boolean,
  policy?: CustomResourcePolicy,
): Promise<string> {
  const changed = await editModules(kube, ref, (modules) => {
    const m = modules.find((x) => x.name === module);
    if (!m)
      throw new Refused(
        `module ${module} is not in Kyma ${ref.namespace}/${ref.name}; add it first with \`klm module add ${module}\``,
      );
    if ((m.managed ?? true) === managed && (!policy || (m.customResourcePolicy ?? 'CreateAndDelete') === policy))
      return undefined;
    if (managed) delete m.managed;
    else m.managed = false;
    if (policy) m.customResourcePolicy = policy;
    return modules;
  });
  const what = managed ? 'managed' : 'unmanaged (its objects keep running, no longer reconciled)';
  const withPolicy = policy ? ` (CR policy ${policy})` : '';
  return changed
    ? `module ${module} is now ${what}${withPolicy}`
    : `module ${module} is already ${managed ? 'managed' : 'unmanaged'}${withPolicy}`;
}

/** The kinds of the resources of a module people make: its default CR's and its associatedResources, of any version. */
export function kindsOfTemplates(templates: ModuleTemplate[]): { apiVersion: string; kind: string }[] {
  const kinds = new Map<string, { apiVersion: string; kind: string }>();
  for (const template of templates) {
    const data = template.spec.data as { apiVersion?: string; kind?: string } | undefined;
    if (data?.apiVersion && data.kind)
      kinds.set(`${data.apiVersion}/${data.kind}`, { apiVersion: data.apiVersion, kind: data.kind });
    for (const a of template.spec.associatedResources ?? []) {
      const apiVersion = apiVersionOf(a);
      kinds.set(`${apiVersion}/${a.kind}`, { apiVersion, kind: a.kind });
    }
  }
  return [...kinds.values()];
}

/**
 * Resources of `kinds` in the cluster that people made: those the lifecycle manager made
 * (default CRs, this Kyma's or another's sharing the cluster, carry its owned-by annotation) and
 * those klm's direct installs made (its managed-by label) do not count.
 */
export async function resourcesOfKinds(
  target: KubeClient,
  kinds: { apiVersion: string; kind: string }[],
): Promise<KubeObject[]> {
  const resources: KubeObject[] = [];
  for (const k of kinds) {
    try {
      resources.push(
        ...(await target.list<KubeObject>(k.apiVersion, k.kind)).items.filter(
          (o) =>
            !o.metadata.annotations?.[OWNED_BY_ANNOTATION] && o.metadata.labels?.[LABELS.managedBy] !== CLI_MANAGED_BY,
        ),
      );
    } catch (err) {
      // A kind nobody serves any more has no resources left.
      if (!isNotFound(err)) throw err;
    }
  }
  return resources;
}

/** The kinds of the module's resources people make, of every version its namespace's templates offer (so none is missed). */
export async function moduleKinds(
  kube: KubeClient,
  namespace: string,
  module: string,
): Promise<{ apiVersion: string; kind: string }[]> {
  const { items: templates } = await kube.list<ModuleTemplate & KubeObject>(API_VERSION, 'ModuleTemplate', {
    namespace,
  });
  return kindsOfTemplates(templates.filter((t) => t.spec.moduleName === module));
}

/** Removes the module from the Kyma (the lifecycle manager then deletes it); nothing to do when it is not listed. */
export async function removeModule(kube: KubeClient, ref: KymaRef, module: string): Promise<boolean> {
  return await editModules(kube, ref, (modules) => {
    const next = modules.filter((m) => m.name !== module);
    return next.length === modules.length ? undefined : next;
  });
}

/**
 * Waits until `done` says the module is where it should be; a module in Error ends the wait as a
 * failure with its message, unless it is the very Error of `stale` (its entry before the change
 * asked for: a module removed while in Error shows it until the lifecycle manager takes it out).
 * Progress lines go to `progress` when the state changes.
 */
export async function waitForModule(
  kube: KubeClient,
  ref: KymaRef,
  module: string,
  done: (status: ModuleStatus | undefined) => boolean,
  timeoutMs: number,
  progress: (line: string) => void,
  stale?: ModuleStatus,
): Promise<ModuleStatus | undefined> {
  const deadline = Date.now() + timeoutMs;
  let said = '';
  for (;;) {
    const status = (await readKyma(kube, ref)).status?.modules?.find((m) => m.name === module);
    if (done(status)) return status;
    const now = status
      ? `${module}: ${status.state ?? 'Unknown'}${status.version ? ` ${status.version}` : ''}${status.message ? ` (${status.message})` : ''}`
      : `${module}: waiting for the lifecycle manager`;
    if (now !== said) progress((said = now));
    if (status?.state === 'Error' && !(stale?.state === 'Error' && stale.message === status.message))
      throw new Refused(
        `module ${module} is in Error: ${status.message ?? 'no message'}; \`klm module why ${module}\` tells more`,
      );
    if (Date.now() > deadline)
      throw new WaitTimeoutError(
        `timed out after ${Math.round(timeoutMs / 1000)} s waiting for module ${module}; last: ${said}`,
      );
    await new Promise((r) => setTimeout(r, 500));
  }
}
