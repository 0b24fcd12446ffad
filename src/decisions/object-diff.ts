// What a new rendered version changes against the installed one, object by object: added,
// changed (the rendered object differs) and removed, each named `Kind namespace/name` (the API
// group too, when the kind has one). Names only: the contents never leave the activity. Pure.
import { groupOf } from '../api/object-id';
import type { KubeObject } from '../api/shared';
import type { ObjectChanges } from '../contract/rollout';

/** How many names each list keeps: the rest is counted in `more`. */
export const DIFF_NAMES_KEPT = 100;

function nameOf(o: KubeObject): string {
  const group = groupOf(o.apiVersion);
  return `${o.kind}${group ? `.${group}` : ''} ${o.metadata.namespace ? `${o.metadata.namespace}/` : ''}${o.metadata.name}`;
}

/** JSON with object keys sorted, so that two renderings of the same object compare equal. */
function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  if (v && typeof v === 'object')
    return `{${Object.keys(v)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical((v as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  return JSON.stringify(v) ?? 'null';
}

export function diffObjects(installed: readonly KubeObject[], next: readonly KubeObject[]): ObjectChanges {
  const before = new Map(installed.map((o) => [nameOf(o), canonical(o)]));
  const after = new Map(next.map((o) => [nameOf(o), canonical(o)]));
  const added = [...after.keys()].filter((n) => !before.has(n)).sort();
  const removed = [...before.keys()].filter((n) => !after.has(n)).sort();
  const changed = [...after.keys()].filter((n) => before.has(n) && before.get(n) !== after.get(n)).sort();
  const more =
    Math.max(0, added.length - DIFF_NAMES_KEPT) +
    Math.max(0, changed.length - DIFF_NAMES_KEPT) +
    Math.max(0, removed.length - DIFF_NAMES_KEPT);
  return {
    added: added.slice(0, DIFF_NAMES_KEPT),
    changed: changed.slice(0, DIFF_NAMES_KEPT),
    removed: removed.slice(0, DIFF_NAMES_KEPT),
    ...(more ? { more } : {}),
  };
}
