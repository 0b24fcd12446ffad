// Whether this product reconciles a Kyma as loaded: a name that can be one, no more modules than
// one Kyma may have, not paused (skip-reconciliation); and so whether its load adds our finalizer.

import type { KymaSnapshot } from '../contract/kyma';

/**
 * A Kyma that lists more modules than one may have cannot be reconciled: nothing of it changes
 * (its running modules stay as they are) until it lists fewer. Its deletion goes ahead.
 */
export function moduleLimited(snapshot: KymaSnapshot, limit: number): KymaSnapshot {
  if (snapshot.invalid || snapshot.deleting || snapshot.modules.length <= limit) return snapshot;
  return {
    ...snapshot,
    invalid: {
      reason: 'ModuleLimitExceeded',
      message:
        `the Kyma lists ${snapshot.modules.length} modules, more than the ${limit} one Kyma may have ` +
        `(KLM_MAX_MODULES_PER_KYMA); remove modules from its spec, or split them over several Kymas`,
    },
  };
}

/**
 * Whether the load of a Kyma adds our finalizer (so that its deletion waits for its modules'
 * removal): a Kyma this product reconciles, not being deleted, without it. An invalid or paused
 * Kyma gets none: nothing of it is reconciled, so nothing need hold its deletion.
 */
export function finalizerDue(snapshot: KymaSnapshot, maxModules: number): boolean {
  const s = moduleLimited(snapshot, maxModules);
  return !s.deleting && !s.finalized && !s.invalid && !s.paused;
}
