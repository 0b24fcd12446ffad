// The module's default custom resource (ModuleTemplate .spec.data), created once when the
// policy is CreateAndDelete and never overwritten: what the user changes in it stays.
import { MANAGED_BY } from '../../api/identity';
import type { ModuleTemplate } from '../../api/moduletemplate';
import { OWNED_BY_ANNOTATION, ownedBy } from '../../api/names';
import { LABELS, type KubeObject } from '../../api/shared';
import type { KymaRef } from '../../contract/kyma';
import type { ResolvedModule } from '../../contract/module';
import { isNotFound, KubeApiError } from '../../k8s/request-errors';
import { type KubeClient } from '../../k8s/rest-client';
import { permanent } from '../failure';
import { ensureNamespace, writeFailure } from './apply';

/** Creates the template's default CR if it does not exist; returns false when it already did. */
export async function ensureDefaultCr(
  client: KubeClient,
  kyma: KymaRef,
  module: ResolvedModule,
  template: ModuleTemplate,
  defaultNamespace: string,
): Promise<boolean> {
  const where = `ModuleTemplate ${module.template.namespace}/${module.template.name}`;
  const data = structuredClone(template.spec.data) as KubeObject | undefined;
  if (!data) return false;
  const meta = data.metadata;
  let namespaced: boolean;
  try {
    namespaced = await client.isNamespaced(data.apiVersion, data.kind);
  } catch (err) {
    if (!isNotFound(err)) throw err;
    throw permanent(
      'DefaultCrKindNotServed',
      `${where}: its default CR (spec.data) is a ${data.kind} of ${data.apiVersion}, which the ` +
        `target cluster does not serve even after the module's manifest was applied; the manifest ` +
        `must define that kind's CustomResourceDefinition, or spec.data must name a kind it defines`,
    );
  }
  const who = { kymaNamespace: kyma.namespace, kymaName: kyma.name, module: module.name };
  if (namespaced) {
    meta.namespace ??= defaultNamespace;
    await ensureNamespace(client, meta.namespace, who);
  } else {
    delete meta.namespace;
  }
  // Created once, never re-applied: one create, and an existing one answers 409.
  meta.labels = {
    ...meta.labels,
    [LABELS.managedBy]: MANAGED_BY,
    [LABELS.kymaName]: kyma.name,
    [LABELS.moduleName]: module.name,
  };
  meta.annotations = { ...meta.annotations, [OWNED_BY_ANNOTATION]: ownedBy(kyma.namespace, kyma.name, module.name) };
  try {
    await client.create(data);
    return true;
  } catch (err) {
    // Created meanwhile (by a retry of this very activity, say): it exists once, leave it.
    if (err instanceof KubeApiError && err.status === 409) return false;
    throw writeFailure(client, err, data, 'create');
  }
}
