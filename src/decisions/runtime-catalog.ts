// The module catalog a runtime may see, without I/O: upstream's rule (every ModuleTemplate,
// those labelled beta or internal only for a Kyma labelled the same; for each, its module's
// ModuleReleaseMeta) and the copies written into the runtime, each with a digest of its
// content so that an unchanged copy is never written again.
import { MANAGED_BY } from '../api/identity';
import type { ModuleReleaseMeta } from '../api/modulereleasemeta';
import type { ModuleTemplate } from '../api/moduletemplate';
import { SYNC_DIGEST_ANNOTATION, SYNCED_LABEL } from '../api/runtime';
import { LABELS, type KubeObject } from '../api/shared';
import type { Visibility } from '../contract/kyma';
import { visibilityProblem } from './visibility';

export type CatalogObject = (ModuleTemplate | ModuleReleaseMeta) & KubeObject;

/** `kind/name` of a catalog object, as the runtime's copies are compared. */
export function catalogKey(o: { kind: string; metadata: { name: string } }): string {
  return `${o.kind}/${o.metadata.name}`;
}

/** The module a template is of: its spec, its label, else its name without the version. */
export function templateModule(t: ModuleTemplate): string {
  return (
    t.spec.moduleName || t.metadata.labels?.[LABELS.moduleName] || t.metadata.name.replace(/-\d+\.\d+\.\d+.*$/, '')
  );
}

/** A short digest of a string (FNV-1a, 64 bits as two 32-bit halves): equal content, equal digest. */
export function digest(text: string): string {
  let a = 0x811c9dc5;
  let b = 0x01000193 ^ text.length;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    a = Math.imul(a ^ c, 0x01000193) >>> 0;
    b = Math.imul(b ^ c ^ (a >>> 7), 0x01000193) >>> 0;
  }
  return a.toString(16).padStart(8, '0') + b.toString(16).padStart(8, '0');
}

function copy(o: CatalogObject, namespace: string): CatalogObject {
  const content = {
    labels: { ...(o.metadata.labels ?? {}), [LABELS.managedBy]: MANAGED_BY, [SYNCED_LABEL]: 'true' },
    spec: o.spec,
  };
  return {
    apiVersion: o.apiVersion,
    kind: o.kind,
    metadata: {
      name: o.metadata.name,
      namespace,
      labels: content.labels,
      annotations: { [SYNC_DIGEST_ANNOTATION]: digest(JSON.stringify(content)) },
    },
    spec: o.spec,
  } as CatalogObject;
}

/**
 * What the runtime's catalog should hold: the templates this Kyma may see (mandatory ones and
 * those being deleted left out) and the ModuleReleaseMetas of their modules, as copies in
 * `namespace`, sorted by key.
 */
export function runtimeCatalog(
  templates: readonly (ModuleTemplate & KubeObject)[],
  metas: readonly (ModuleReleaseMeta & KubeObject)[],
  visibility: Visibility,
  namespace: string,
): CatalogObject[] {
  const visible = templates.filter(
    (t) => !t.metadata.deletionTimestamp && !t.spec.mandatory && !visibilityProblem(t, visibility, t.metadata.name),
  );
  const modules = new Set(visible.map(templateModule));
  const withMeta = metas.filter(
    (m) => !m.metadata.deletionTimestamp && !m.spec.mandatory && modules.has(m.spec.moduleName || m.metadata.name),
  );
  return [...visible, ...withMeta]
    .map((o) => copy(o, namespace))
    .sort((x, y) => catalogKey(x).localeCompare(catalogKey(y)));
}
