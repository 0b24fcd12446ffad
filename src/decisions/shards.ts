// How bridge replicas share the fleet: a Kyma (and so its target cluster: upstream gives each
// runtime one Kyma) belongs to one of a fixed number of shards by a stable hash of its
// namespace and name; each shard is held by one replica through a Lease of its own. A replica
// holds at most its fair share (the shards over the live replicas, rounded up), takes free or
// expired shards up to it, and hands back what it holds beyond it when more replicas join.

/** The shard of Kyma `namespace/name` among `count`: FNV-1a of the two, so every replica and release agrees. */
export function shardOf(namespace: string, name: string, count: number): number {
  let h = 0x811c9dc5;
  for (const c of `${namespace}/${name}`) {
    h ^= c.codePointAt(0)!;
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h % count;
}

/** The most shards one of `replicas` live replicas may hold: every shard is held once each holds it. */
export function fairShare(shards: number, replicas: number): number {
  return Math.ceil(shards / Math.max(1, replicas));
}

/** A shard's Lease as one replica sees it. */
export interface ShardView {
  shard: number;
  /** Whether this replica may write itself into the Lease: it is free, expired, or names this replica already. */
  takeable: boolean;
}

export interface ShardPlan {
  /** Shards to hand back (stop watching, then free the Lease): held beyond the fair share. */
  release: number[];
  /** Shards to take (take the Lease, then watch), up to the fair share. */
  take: number[];
}

/**
 * What a replica does with the shards this round. `held`: the shards it holds (and renewed);
 * `views`: every shard's Lease (a shard without one is takeable); `replicas`: the live replicas,
 * itself included; `offset`: where this replica starts looking for free shards, so that replicas
 * starting together do not all reach for the same ones.
 */
export function planShards(p: {
  count: number;
  held: ReadonlySet<number>;
  views: readonly ShardView[];
  replicas: number;
  offset: number;
}): ShardPlan {
  const share = fairShare(p.count, p.replicas);
  const held = [...p.held].sort((a, b) => a - b);
  // The highest go back first; shard 0 (which carries the fleet-wide duties) moves only when it must.
  if (held.length > share) return { release: held.slice(share).reverse(), take: [] };
  const takeable = new Set(p.views.filter((v) => v.takeable).map((v) => v.shard));
  const take: number[] = [];
  for (let i = 0; i < p.count && held.length + take.length < share; i++) {
    const shard = (p.offset + i) % p.count;
    if (p.held.has(shard)) continue;
    if (takeable.has(shard) || !p.views.some((v) => v.shard === shard)) take.push(shard);
  }
  return { release: [], take };
}
