// The Kyma in the control plane: reading it, resolving its modules, its finalizer, and the one
// writer of its status.
import type { Kyma, KymaStatusInput } from '../api/kyma';
import type { ModuleReleaseMeta } from '../api/modulereleasemeta';
import type { ModuleTemplate } from '../api/moduletemplate';
import { API_VERSION, KYMA_FINALIZER, LABELS, type KubeObject } from '../api/shared';
import type { KymaRef, KymaSnapshot } from '../contract/kyma';
import type { Resolution } from '../contract/module';
import { mergeConditions } from '../decisions/conditions';
import { kymaNameProblem } from '../decisions/names';
import { resolveModule, type ModuleCatalog } from '../decisions/resolution';
import { recordKymaState } from '../infra/metrics';
import { isNotFound, type KubeClient } from '../k8s/rest-client';
import type { TargetClusters } from '../k8s/target-cluster';
import { transient } from './failure';

export interface KymaInput {
  kyma: KymaRef;
}

export interface KymaUidInput extends KymaInput {
  /** The Kyma the workflow works for: a re-created Kyma (another uid) is left alone. */
  uid: string;
}

export interface ResolveModulesInput extends KymaInput {
  snapshot: KymaSnapshot;
}

export interface WriteKymaStatusInput extends KymaUidInput {
  status: KymaStatusInput;
}

/** The Kyma's namespace as resolution sees it: its ModuleReleaseMetas and ModuleTemplates. */
function catalogOf(kcp: KubeClient, namespace: string): ModuleCatalog {
  return {
    namespace,
    releaseMeta: async (name) => await kcp.get<ModuleReleaseMeta & KubeObject>(API_VERSION, 'ModuleReleaseMeta', name, namespace),
    template: async (name) => await kcp.get<ModuleTemplate & KubeObject>(API_VERSION, 'ModuleTemplate', name, namespace),
  };
}

export function kymaActivities(kcp: KubeClient, targets: TargetClusters) {
  async function readKyma(ref: KymaRef): Promise<Kyma | undefined> {
    return await kcp.get<Kyma & KubeObject>(API_VERSION, 'Kyma', ref.name, ref.namespace);
  }

  async function setFinalizer(ref: KymaRef, uid: string, present: boolean): Promise<void> {
    const kyma = await readKyma(ref);
    if (!kyma || kyma.metadata.uid !== uid || (present && kyma.metadata.deletionTimestamp)) return;
    const finalizers = kyma.metadata.finalizers ?? [];
    if (finalizers.includes(KYMA_FINALIZER) === present) return;
    const next = present ? [...finalizers, KYMA_FINALIZER] : finalizers.filter((f) => f !== KYMA_FINALIZER);
    await kcp.mergePatch(API_VERSION, 'Kyma', ref.name, ref.namespace, { metadata: { finalizers: next, resourceVersion: kyma.metadata.resourceVersion } });
  }

  return {
    /** The Kyma's spec as the workflow needs it, or null when it no longer exists. */
    async loadKyma({ kyma: ref }: KymaInput): Promise<KymaSnapshot | null> {
      const kyma = await readKyma(ref);
      if (!kyma) return null;
      const invalid = kymaNameProblem(ref.name);
      return {
        uid: kyma.metadata.uid ?? '',
        generation: kyma.metadata.generation ?? 0,
        channel: kyma.spec.channel,
        deleting: Boolean(kyma.metadata.deletionTimestamp),
        finalized: (kyma.metadata.finalizers ?? []).includes(KYMA_FINALIZER),
        paused: kyma.metadata.labels?.[LABELS.skipReconciliation] === 'true',
        // Looked up afresh: deletion must see a Secret that has just gone. A name that cannot
        // be a label value cannot label a Secret either.
        remote: !invalid && (await targets.secretOf(ref.namespace, ref.name, 0)) !== undefined,
        modules: (kyma.spec.modules ?? []).map((m) => ({
          name: m.name,
          ...(m.channel ? { channel: m.channel } : {}),
          ...(m.version ? { version: m.version } : {}),
          customResourcePolicy: m.customResourcePolicy ?? 'CreateAndDelete',
          managed: m.managed ?? true,
        })),
        ...(invalid ? { invalid } : {}),
      };
    },

    /** Resolves every module of the spec; a module that cannot be resolved gets its reason, the others go on. */
    async resolveModules({ kyma, snapshot }: ResolveModulesInput): Promise<Resolution[]> {
      const catalog = catalogOf(kcp, kyma.namespace);
      return await Promise.all(snapshot.modules.map(async (m): Promise<Resolution> => {
        try {
          const r = await resolveModule(m, snapshot.channel, catalog);
          return r.module && snapshot.remote ? { ...r, module: { ...r.module, remote: true } } : r;
        } catch (err) {
          if (isNotFound(err)) return { name: m.name, channel: m.channel || snapshot.channel, failure: { reason: 'ResolutionFailed', message: `module "${m.name}": ${(err as Error).message}` } };
          throw transient('ResolutionFailed', `resolving module "${m.name}": ${(err as Error).message}`);
        }
      }));
    },

    /** Adds the Kyma finalizer (so that deletion waits for the modules' removal). */
    async addKymaFinalizer({ kyma, uid }: KymaUidInput): Promise<void> {
      await setFinalizer(kyma, uid, true);
    },

    /** Drops the Kyma finalizer: the last step of a Kyma's deletion. */
    async removeKymaFinalizer({ kyma, uid }: KymaUidInput): Promise<void> {
      await setFinalizer(kyma, uid, false);
    },

    /** The one writer of Kyma status. Skips the write when the Kyma was re-created (uid). */
    async writeKymaStatus({ kyma: ref, uid, status }: WriteKymaStatusInput): Promise<void> {
      const kyma = await readKyma(ref);
      if (!kyma || kyma.metadata.uid !== uid) return;
      const now = new Date().toISOString();
      const conditions = mergeConditions(kyma.status?.conditions, status.conditions ?? [], kyma.metadata.generation ?? 0, now);
      await kcp.mergePatch(API_VERSION, 'Kyma', ref.name, ref.namespace, {
        status: { ...status, conditions, lastOperation: status.lastOperation && { ...status.lastOperation, lastUpdateTime: now } },
      }, 'status');
      recordKymaState(ref.namespace, ref.name, status.state ?? '');
    },
  };
}
