// Which control-plane versions a signal's sender had seen, so that the reads that follow it see
// at least those (the worker's cache waits for them, or reads from the API server).

/** The control-plane kinds the worker serves reads of from its caches (kubeconfig Secrets: from its watch on them). */
export type CachedKind = 'Kyma' | 'ModuleTemplate' | 'ModuleReleaseMeta' | 'Manifest' | 'Secret';

/**
 * The control-plane versions behind a signal, per kind: the event's object, and for a
 * release-meta event also the newest template the bridge has seen (a promotion may resolve to a
 * template changed just before). Reads that follow the signal must see each kind at least at
 * that version: the worker's cache waits for it (or reads from the API server). Absent in
 * histories recorded before it existed.
 */
export type SeenVersions = Partial<Record<CachedKind, string>>;
