// The patches of workflow code (Temporal's `patched` and `deprecatePatch`), each with the release
// that removes it.
//
// Kyma and promotion-plan workflows are pinned to the worker version that started them: their
// code changes need no patch. Rollout workflows auto-upgrade (a rollout waits with no timer and
// would hold its version from draining): a change to `rollout-workflow.ts` that changes its
// commands goes behind `patched('<id>')`, with an entry here. Temporal's way of retiring one
// (its `patching-api` sample): release N adds the patch; a later release calls
// `deprecatePatch('<id>')` instead, once no run from before N is open; `removeIn` drops the call
// and the entry. test/replay/patches.test.ts fails for a patch id in the code without an entry
// here, and once the package's version reaches the `removeIn` of an entry still here.

export interface PatchRecord {
  /** The release that brought it. */
  since: string;
  /** The release that no longer carries it. */
  removeIn: string;
  /** What changed, in a line. */
  why: string;
}

/** Every patch of the workflows, by id. None since the first release, v0.1.0. */
export const PATCHES: Readonly<Record<string, PatchRecord>> = {};
