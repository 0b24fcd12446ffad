// Upstream's visibility rule, written once: a ModuleTemplate labelled internal or beta (the label
// "true", in any case) serves only Kymas labelled the same. The worker's resolution and runtime
// catalog, the bridge's routing of template changes and the command line's catalog all ask here.
import type { ModuleTemplate } from '../api/moduletemplate';
import { CONTROL_PLANE_KYMA_ANNOTATION } from '../api/runtime';
import { LABELS, labelEnabled } from '../api/shared';
import type { Visibility } from '../contract/kyma';
import type { Readiness } from '../contract/readiness';

/** The beta and internal labels of an object: on a Kyma, what it may see; on a template, what it needs. */
export function visibilityOf(labels: Record<string, string> | undefined): Visibility {
  return { beta: labelEnabled(labels, LABELS.beta), internal: labelEnabled(labels, LABELS.internal) };
}

/**
 * What a Kyma may see. A runtime Kyma (the lifecycle manager made it from a control-plane Kyma,
 * whose labels decide) sees the catalog synced into its cluster, which holds only what its
 * control-plane Kyma may see: everything there.
 */
export function kymaVisibility(kyma: {
  metadata: { labels?: Record<string, string>; annotations?: Record<string, string> };
}): Visibility {
  if (kyma.metadata.annotations?.[CONTROL_PLANE_KYMA_ANNOTATION]) return { beta: true, internal: true };
  return visibilityOf(kyma.metadata.labels);
}

/** The label a template needs and the Kyma lacks (internal checked first), or undefined when the Kyma may see it. */
export function missingLabel(template: Visibility, kyma: Visibility | undefined): keyof Visibility | undefined {
  return (['internal', 'beta'] as const).find((kind) => template[kind] && !kyma?.[kind]);
}

/** Why a Kyma may not use the template (`where` names it), or undefined when it may. */
export function visibilityProblem(
  template: ModuleTemplate,
  kyma: Visibility | undefined,
  where: string,
): Readiness | undefined {
  const kind = missingLabel(visibilityOf(template.metadata.labels), kyma);
  if (!kind) return undefined;
  return {
    reason: 'ModuleNotVisible',
    message: `ModuleTemplate ${where} is ${kind} (${LABELS[kind]}: "true"): not available to this Kyma, which lacks that label`,
  };
}
