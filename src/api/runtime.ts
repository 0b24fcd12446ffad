// The runtime side, as upstream's control-plane mode keeps it in each managed cluster: the
// runtime Kyma (kyma-system/default) its users edit, and the module catalog synced next to it.
import { GROUP } from './shared';

/** Where the runtime Kyma lives in a managed cluster, as upstream's tools look for it. */
export const RUNTIME_KYMA = { namespace: 'kyma-system', name: 'default' } as const;

/** Where the synced ModuleTemplates and ModuleReleaseMetas live in a managed cluster. */
export const RUNTIME_CATALOG_NAMESPACE = 'kyma-system';

/** On the runtime Kyma: the control-plane Kyma (`<namespace>/<name>`) it belongs to. */
export const CONTROL_PLANE_KYMA_ANNOTATION = `${GROUP}/control-plane-kyma`;

/** On a synced catalog object in a runtime: "true" (what the sync lists, and the clean-up removes). */
export const SYNCED_LABEL = `${GROUP}/runtime-catalog`;

/** On a synced catalog object: a digest of what was synced, so that an unchanged one is not written again. */
export const SYNC_DIGEST_ANNOTATION = `${GROUP}/sync-digest`;

/** The CRDs a runtime gets: the kinds its users read and write there (Manifests stay in the control plane). */
export const RUNTIME_CRDS = [
  'kymas.operator.kyma-project.io',
  'moduletemplates.operator.kyma-project.io',
  'modulereleasemetas.operator.kyma-project.io',
] as const;

/**
 * On a control-plane Kyma whose runtime Kyma its users edit: the runtime's spec (channel and
 * modules, as JSON), so that what routes and plans by a Kyma's modules (the bridge's fleet
 * index, rollouts) sees what the runtime asks for. Its .spec stays as the operator wrote it.
 */
export const RUNTIME_SPEC_ANNOTATION = `${GROUP}/runtime-spec`;

/** The spec a Kyma's modules follow: its runtime's when it has one, else its own. */
export function effectiveKymaSpec<S extends { channel: string; modules?: unknown[] }>(kyma: {
  metadata: { annotations?: Record<string, string> };
  spec: S;
}): S {
  const raw = kyma.metadata.annotations?.[RUNTIME_SPEC_ANNOTATION];
  if (!raw) return kyma.spec;
  try {
    const parsed = JSON.parse(raw) as { channel?: unknown; modules?: unknown };
    if (typeof parsed.channel !== 'string' || !Array.isArray(parsed.modules)) return kyma.spec;
    return { ...kyma.spec, channel: parsed.channel, modules: parsed.modules };
  } catch {
    return kyma.spec;
  }
}
