// A module's whole install, one step: fetch → render → apply → default CR → prune → readiness
// check. Its steps are idempotent, so an attempt after a failed one, or after a lost worker,
// simply runs them again. The installs a Kyma starts together run in one activity
// (./install-batch.ts), each attempt of each module observed as an `installModule` of its own.
import { ApplicationFailure, CancelledFailure, heartbeat } from '@temporalio/activity';
import type { RenderedRef, RenderParams } from '../../contract/artifacts';
import type { KymaRef } from '../../contract/kyma';
import type { ReadinessCheck } from '../../contract/readiness';
import type { Installed, InstallResult, ResolvedModule } from '../../contract/module';
import type { ObjectCache } from '../../k8s/object-cache';
import type { TargetClusters } from '../../k8s/target-cluster';
import type { OcmRegistry } from '../../oci/ocm';
import { managedDefaultCr } from '../../decisions/module-state';
import type { BlobCache } from '../blob-cache';
import type { CheckReadinessInput } from '../readiness';
import { heartbeating } from '../heartbeating';
import { onTarget } from '../target';
import { pruneObjects } from '../uninstall';
import { Applier } from './apply';
import { ensureDefaultCr } from './default-cr';
import { ModuleFetcher } from './fetch';
import { loadRendered, renderLayer } from './render';
import { clusterKey } from '../../api/cluster-identity';
import { idOf, idOfRef, objectKey } from '../../api/object-id';

export interface InstallModuleInput {
  kyma: KymaRef;
  module: ResolvedModule;
  params: Omit<RenderParams, 'manager'>;
  crdTimeoutMs: number;
  /** What the installed version rendered: an upgrade prunes what it had and the new one has not. */
  previous?: RenderedRef;
  /**
   * The cluster `previous` was applied to (its `clusterKey`; absent: installed before this was
   * recorded, taken for the same). Its objects are known to be ours only there: in another
   * cluster (the Kyma's Secret switched) each object is looked at before its first apply.
   */
  previousCluster?: string;
  /** Check the module's readiness right after (`check` in the result), sparing the workflow a step of its own. */
  check?: boolean;
}

/**
 * A failed install's failure carries what it was installing once it had rendered it (its
 * `details[0]`): the version's objects may be in the cluster in part, and a removal must know
 * them. Names and digests only, as every reference in history.
 */
function withAttempt(err: unknown, attempt: Installed): unknown {
  if (err instanceof CancelledFailure) return err;
  return ApplicationFailure.fromError(err, { details: [attempt] });
}

/** The readiness check (`checkReadiness`), as an install runs it after its apply. */
export type CheckReadiness = (input: CheckReadinessInput) => Promise<ReadinessCheck>;

/** The module's version fetched from its template and rendered, heartbeating while each step runs. */
async function fetchAndRender(
  fetcher: ModuleFetcher,
  cache: BlobCache,
  module: ResolvedModule,
  params: InstallModuleInput['params'],
) {
  const { fetched, template, manifest } = await heartbeating(fetcher.fetch(module, params.defaultNamespace));
  heartbeat();
  const where = `ModuleTemplate ${module.template.namespace}/${module.template.name}`;
  const rendered = await heartbeating(
    renderLayer(
      cache,
      fetched.layer,
      manifest,
      { ...params, ...(fetched.manager ? { manager: fetched.manager } : {}) },
      where,
    ),
  );
  heartbeat();
  return { fetched, template, rendered };
}

/**
 * The readiness check right after an install, as the workflow's own check would ask it: the
 * manager as rendered, the default CR when this module manages it. A check that fails leaves
 * the workflow to check on its own (undefined): the install itself went through.
 */
async function checkAfterInstall(
  checkReadiness: CheckReadiness,
  kyma: KymaRef,
  module: ResolvedModule,
  fetched: Installed['fetched'],
  rendered: RenderedRef,
): Promise<ReadinessCheck | undefined> {
  const manager = rendered.manager;
  const cr = managedDefaultCr(module, fetched);
  return await checkReadiness({
    kyma,
    module: module.name,
    ...(manager ? { manager } : {}),
    ...(cr ? { cr } : {}),
  }).catch(() => undefined);
}

export function installActivities(
  kcp: ObjectCache,
  targets: TargetClusters,
  cache: BlobCache,
  checkReadiness: CheckReadiness,
  registry?: OcmRegistry,
) {
  const fetcher = new ModuleFetcher(kcp, cache, registry);
  const applier = new Applier();
  return {
    /** Installs `module` into the Kyma's target cluster (an upgrade when `previous` is given). */
    async installModule({
      kyma,
      module,
      params,
      crdTimeoutMs,
      previous,
      previousCluster,
      check,
    }: InstallModuleInput): Promise<InstallResult> {
      const { fetched, template, rendered } = await fetchAndRender(fetcher, cache, module, params);
      let managerVersion: string | undefined;
      let leftAlone: string[] = [];
      const before = previous ? await loadRendered(cache, previous) : [];
      const attempt = { version: module.version, templateGeneration: module.template.generation, fetched };
      let applying = false;
      let cluster: string | undefined;
      await onTarget(targets, kyma, async (client) => {
        cluster = await targets.identityOf(client).then(clusterKey, () => undefined);
        // What an install before applied in this cluster: known to be ours or recorded as found (./ownership.ts).
        const here = previousCluster === undefined || (cluster !== undefined && cluster === previousCluster);
        const known = new Set((here ? before : []).map((o) => objectKey(idOf(o), true)));
        applying = true;
        const applied = await applier.apply(client, rendered.objects, params, crdTimeoutMs, known);
        const versions = applied.versions;
        leftAlone = applied.leftAlone;
        const m = rendered.ref.manager;
        managerVersion = m && versions.get(objectKey(idOfRef(m)));
        if (module.customResourcePolicy === 'CreateAndDelete' && fetched.defaultCr) {
          heartbeat();
          await ensureDefaultCr(client, kyma, module, template, params.defaultNamespace);
        }
        if (previous && previous.digest !== rendered.ref.digest) {
          heartbeat();
          await pruneObjects(client, cache, kyma, module.name, previous, rendered);
        }
      }).catch((err: unknown) => {
        // Once it reached the cluster, some of the objects may be there.
        throw applying
          ? withAttempt(err, { ...attempt, rendered: rendered.ref, ...(cluster ? { cluster } : {}) })
          : err;
      });
      const result = {
        fetched,
        rendered: rendered.ref,
        ...(cluster ? { cluster } : {}),
        ...(managerVersion ? { managerVersion } : {}),
        ...(leftAlone.length ? { leftAlone } : {}),
      };
      if (!check) return result;
      heartbeat();
      const checked = await checkAfterInstall(checkReadiness, kyma, module, fetched, rendered.ref);
      return { ...result, ...(checked ? { check: checked } : {}) };
    },
  };
}
