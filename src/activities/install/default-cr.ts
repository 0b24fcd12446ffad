// The module's default custom resource (ModuleTemplate .spec.data), created once when the
// policy is CreateAndDelete and never overwritten: what the user changes in it stays.
import { ApplicationFailure } from '@temporalio/activity';
import type { ModuleTemplate } from '../api/moduletemplate';
import { OWNED_BY_ANNOTATION, ownedBy } from '../api/names';
import { API_VERSION, LABELS } from '../api/shared';
import { KubeApiError, type KubeClient, type KubeObject } from '../k8s/rest-client';
import type { TargetClusters } from '../k8s/target-cluster';
import { targetClient } from './target';
import type { KymaRef, ResolvedModule } from '../workflows/types';
import { applyFailure, ensureNamespace } from './apply';
import { MANAGED_BY } from './render';

export function defaultCrActivities(kcp: KubeClient, targets: TargetClusters) {
  return {
    /** Creates the default CR if it does not exist; returns false when it already did. */
    async ensureDefaultCr(ref: KymaRef, module: ResolvedModule, defaultNamespace: string): Promise<boolean> {
      const { name, namespace } = module.template;
      const template = (await kcp.get<ModuleTemplate & KubeObject>(API_VERSION, 'ModuleTemplate', name, namespace)) as ModuleTemplate | undefined;
      if (!template) throw ApplicationFailure.nonRetryable(`ModuleTemplate ${namespace}/${name} no longer exists`, 'TemplateNotFound');
      const data = structuredClone(template.spec.data) as KubeObject | undefined;
      if (!data) return false;
      const client = await targetClient(targets, ref);
      const meta = data.metadata as KubeObject['metadata'] & { labels?: Record<string, string>; annotations?: Record<string, string> };
      if (await client.isNamespaced(data.apiVersion, data.kind)) {
        meta.namespace ??= defaultNamespace;
        await ensureNamespace(client, meta.namespace);
      } else {
        delete meta.namespace;
      }
      if (await client.get(data.apiVersion, data.kind, meta.name, meta.namespace)) return false;
      meta.labels = { ...meta.labels, [LABELS.managedBy]: MANAGED_BY, [LABELS.kymaName]: ref.name, [LABELS.moduleName]: module.name };
      meta.annotations = { ...meta.annotations, [OWNED_BY_ANNOTATION]: ownedBy(ref.namespace, ref.name, module.name) };
      try {
        await client.create(data);
        return true;
      } catch (err) {
        // Created meanwhile (by a retry of this very activity, say): it exists once, leave it.
        if (err instanceof KubeApiError && err.status === 409) return false;
        throw applyFailure(err, data);
      }
    },
  };
}
