// A direct install: klm applies a module version's manifest and its default CR itself, in a
// cluster without a Kyma (or beside one, when asked), as the Kyma CLI installs community modules.
// Idempotent: the record (direct-record.ts) is written before anything is applied, so a second
// run finishes an interrupted one; a run for another version upgrades, prunes what the new
// version no longer has and leaves the default CR as it is.
import { CLI_MANAGED_BY } from '../api/identity';
import { describeObject, MODULE_VERSION_ANNOTATION } from '../api/names';
import { idOf, idOfRef, objectKey, type ObjectId } from '../api/object-id';
import { LABELS, type KubeObject } from '../api/shared';
import { KubeApiError } from '../k8s/request-errors';
import { type KubeClient } from '../k8s/rest-client';
import { applyInOrder } from '../manifests/apply';
import { waitEstablished } from '../k8s/crds';
import { managerOf } from '../manifests/manager';
import { createNamespace } from '../manifests/namespaces';
import { deletionTiers, pruned } from '../manifests/order';
import { parseManifest, RenderError } from '../manifests/parse';
import { kindsOfTemplates } from './kyma-modules';
import { readRecord, writeRecord, type DirectRecord } from './direct-record';
import { rawManifestOf, type SourceOptions, type Template } from './module-source';
import { Refused } from './output';

export interface DirectInstallInput {
  /** Where the templates (and release metas) are. */
  kube: KubeClient;
  /** Where the module goes (writes as klm-cli). */
  target: KubeClient;
  template: Template;
  community: boolean;
  /** The namespace of namespaced objects that name none, and of the record. */
  namespace: string;
  policy: 'CreateAndDelete' | 'Ignore';
  /** Objects of --cr-path, applied after the manifest instead of the default CR. */
  crObjects?: KubeObject[];
  sources: SourceOptions;
  crdTimeoutMs: number;
  progress: (line: string) => void;
}

/** `a`, and what of `b` it lacks (in any version of its kind). */
function union(a: ObjectId[], b: ObjectId[]): ObjectId[] {
  const seen = new Set(a.map((o) => objectKey(o, true)));
  return [...a, ...b.filter((o) => !seen.has(objectKey(o, true)))];
}

function describe(o: ObjectId): string {
  return describeObject(o.kind, o.name, o.namespace);
}

/** Labels an object as klm's direct install of `module` at `version`. */
function label(o: KubeObject, module: string, version: string): KubeObject {
  o.metadata.labels = { ...o.metadata.labels, [LABELS.managedBy]: CLI_MANAGED_BY, [LABELS.moduleName]: module };
  o.metadata.annotations = { ...o.metadata.annotations, [MODULE_VERSION_ANNOTATION]: version };
  return o;
}

function refusedWrite(err: unknown, o: ObjectId): Error {
  if (err instanceof KubeApiError && err.status === 404)
    return new Refused(
      `applying ${describe(o)}: the cluster does not serve ${o.kind} in ${o.apiVersion}; the module's manifest must define it`,
    );
  if (err instanceof KubeApiError && err.status >= 400 && err.status < 500)
    return new Refused(`applying ${describe(o)}: ${err.message}`);
  return err instanceof Error ? err : new Error(String(err));
}

async function ensureNamespace(target: KubeClient, name: string): Promise<void> {
  await createNamespace(target, { apiVersion: 'v1', kind: 'Namespace', metadata: { name } }).catch((err: unknown) => {
    throw refusedWrite(err, { apiVersion: 'v1', kind: 'Namespace', name });
  });
}

/** CRDs first (established before anything uses them), then namespaces, then the rest. */
async function applyAll(target: KubeClient, objects: KubeObject[], crdTimeoutMs: number): Promise<void> {
  await applyInOrder(objects, {
    apply: (o) =>
      target.apply(o).catch((err: unknown) => {
        throw refusedWrite(err, idOf(o));
      }),
    established: (crds) =>
      waitEstablished(target, crds, {
        timeoutMs: crdTimeoutMs,
        timedOut: (pending) => {
          const which = `CustomResourceDefinition${pending.length > 1 ? 's' : ''} ${pending.join(', ')}`;
          return new Refused(
            `the ${which} ${pending.length > 1 ? 'were' : 'was'} not established within ${Math.round(crdTimeoutMs / 1000)} s; ` +
              `\`kubectl describe crd ${pending[0]}\` says why; then run the command again`,
          );
        },
      }),
    ensureNamespace: (n) => ensureNamespace(target, n),
  });
}

/** Creates the template's default CR once; an existing one is left as its users made it. */
async function createDefaultCr(
  target: KubeClient,
  template: Template,
  module: string,
  version: string,
  namespace: string,
): Promise<ObjectId | undefined> {
  const data = structuredClone(template.spec.data) as KubeObject | undefined;
  if (!data?.apiVersion || !data.kind || !data.metadata?.name) return undefined;
  let namespaced: boolean;
  try {
    namespaced = await target.isNamespaced(data.apiVersion, data.kind);
  } catch (err) {
    throw refusedWrite(err, idOf(data));
  }
  if (namespaced) {
    data.metadata.namespace ??= namespace;
    await ensureNamespace(target, data.metadata.namespace);
  } else delete data.metadata.namespace;
  await target.create(label(data, module, version)).catch((err: unknown) => {
    if (!(err instanceof KubeApiError && err.status === 409)) throw refusedWrite(err, idOf(data));
  });
  return idOf(data);
}

/** Installs, finishes or upgrades the module; returns what it did, in a sentence. */
export async function directInstall(i: DirectInstallInput): Promise<string> {
  const module = i.template.spec.moduleName!;
  const version = i.template.spec.version!;
  const where = `ModuleTemplate ${i.template.metadata.namespace}/${i.template.metadata.name}`;
  const before = await readRecord(i.target, i.namespace, module);
  i.progress(`fetching the manifest of ${module} ${version}`);
  const manifest = await rawManifestOf(i.kube, i.template, i.sources);
  let objects: KubeObject[];
  try {
    objects = parseManifest(manifest, i.namespace).map((o) => label(o, module, version));
  } catch (err) {
    if (err instanceof RenderError) throw new Refused(`the raw manifest of ${where}: ${err.message}`);
    throw err;
  }
  const ref = managerOf(objects, i.template.spec.manager, i.namespace);
  const manager = ref && idOfRef(ref);
  await ensureNamespace(i.target, i.namespace);
  const record: DirectRecord = {
    module,
    version,
    template: `${i.template.metadata.namespace}/${i.template.metadata.name}`,
    community: i.community,
    customResourcePolicy: i.policy,
    phase: 'Installing',
    // What may exist once this run is cut short: what was there, and what it applies. A deletion
    // then misses nothing, and the next run prunes what the new version no longer has.
    objects: union(before?.objects ?? [], objects.map(idOf)),
    ...(before?.defaultCr ? { defaultCr: before.defaultCr } : {}),
    kinds: kindsOfTemplates([i.template]),
    ...(manager ? { manager } : {}),
  };
  await writeRecord(i.target, i.namespace, record);
  i.progress(`applying ${objects.length} objects of ${module} ${version}`);
  await applyAll(i.target, objects, i.crdTimeoutMs);
  if (i.crObjects?.length) {
    i.progress(`applying ${i.crObjects.length} objects of --cr-path`);
    await applyAll(
      i.target,
      i.crObjects.map((o) => ({ ...o, metadata: { ...o.metadata, namespace: o.metadata.namespace ?? i.namespace } })),
      i.crdTimeoutMs,
    );
  } else if (i.policy === 'CreateAndDelete' && !record.defaultCr) {
    const cr = await createDefaultCr(i.target, i.template, module, version, i.namespace);
    if (cr) record.defaultCr = cr;
  }
  const gone = deletionTiers(pruned(record.objects, objects.map(idOf), (o) => o)).flat();
  for (const o of gone) {
    // A CRD the new version dropped may still have resources people rely on: it stays.
    if (o.kind === 'CustomResourceDefinition') {
      i.progress(`kept ${describe(o)}, which ${version} no longer has: delete it once nothing uses it`);
      continue;
    }
    await i.target.delete(o.apiVersion, o.kind, o.name, o.namespace);
  }
  await writeRecord(i.target, i.namespace, { ...record, phase: 'Installed', objects: objects.map(idOf) });
  if (!before) return `module ${module} ${version} installed directly into namespace ${i.namespace}`;
  if (before.version !== version)
    return (
      `module ${module} upgraded directly from ${before.version} to ` +
      `${version}${gone.length ? ` (${gone.length} objects ${before.version} had removed)` : ''}; ` +
      `its default CR was left as it is`
    );
  return before.phase === 'Installing'
    ? `module ${module} ${version}: the interrupted install is finished`
    : `module ${module} ${version} is installed already; its objects were applied again`;
}
