// The control-plane versions a workflow was told of by its signals: its next reads must reflect
// at least these (the worker's cache waits for them).
import { resourceVersionReached } from '../api/shared';
import type { CachedKind, SeenVersions } from '../contract/seen-versions';

/** `into` with each kind at the newer of its own and `more`'s version. */
export function mergeSeen(into: SeenVersions, more: SeenVersions | undefined): SeenVersions {
  const out = { ...into };
  for (const [kind, version] of Object.entries(more ?? {}) as [CachedKind, string][]) {
    const have = out[kind];
    if (have === undefined || (resourceVersionReached(version, have) && version !== have)) out[kind] = version;
  }
  return out;
}

/** Whether `have` is at least at each of `wanted`'s versions (nothing wanted: yes). */
export function seenReached(have: SeenVersions, wanted: SeenVersions): boolean {
  return (Object.entries(wanted) as [CachedKind, string][]).every(([kind, version]) => {
    const at = have[kind];
    return at !== undefined && resourceVersionReached(at, version);
  });
}

/** `seen` as an optional field of a step or a carried input: absent while nothing was told. */
export function seenField(seen: SeenVersions): { seen?: SeenVersions } {
  return Object.keys(seen).length ? { seen: { ...seen } } : {};
}
