// How bridge replicas share the fleet's shards: every Kyma in one shard, every shard held once,
// no replica over its fair share, and shards handed back when replicas join.
import { describe, expect, it } from 'vitest';
import { fairShare, planShards, shardOf, type ShardView } from '../../src/decisions/shards';
import { configFromEnv } from '../../src/infra/config';

const free = (count: number, taken: number[] = []): ShardView[] =>
  Array.from({ length: count }, (_, shard) => ({ shard, takeable: !taken.includes(shard) }));

describe('bridge shards', () => {
  it('puts a Kyma in the same shard on every replica and spreads a fleet over all shards', () => {
    expect(shardOf('kcp-system', 'kyma-1', 8)).toBe(shardOf('kcp-system', 'kyma-1', 8));
    expect(shardOf('kcp-system', 'kyma-1', 1)).toBe(0);
    const counts = new Array<number>(8).fill(0);
    for (let i = 0; i < 2000; i++) counts[shardOf('kcp-system', `runtime-${i}`, 8)]!++;
    // 250 each if even: none far off.
    for (const c of counts) expect(c).toBeGreaterThan(180);
    // Namespace and name both count.
    expect(new Set(Array.from({ length: 20 }, (_, i) => shardOf(`ns-${i}`, 'default', 8))).size).toBeGreaterThan(1);
  });

  it('gives each live replica at most its fair share, enough that every shard is held', () => {
    expect(fairShare(8, 3)).toBe(3);
    expect(fairShare(8, 2)).toBe(4);
    expect(fairShare(8, 1)).toBe(8);
    expect(fairShare(8, 0)).toBe(8);
    for (let replicas = 1; replicas <= 10; replicas++)
      expect(fairShare(8, replicas) * replicas).toBeGreaterThanOrEqual(8);
  });

  it('takes free or expired shards up to its fair share, starting at its own offset', () => {
    expect(planShards({ count: 8, held: new Set(), views: free(8), replicas: 3, offset: 5 })).toEqual({
      release: [],
      take: [5, 6, 7],
    });
    // Shards held by others are passed over; a shard without a Lease yet is free.
    expect(
      planShards({ count: 8, held: new Set(), views: free(8, [5, 6]).slice(0, 7), replicas: 3, offset: 5 }),
    ).toEqual({ release: [], take: [7, 0, 1] });
    // What it holds counts towards its share.
    expect(planShards({ count: 8, held: new Set([0, 1]), views: free(8, [0, 1]), replicas: 3, offset: 0 })).toEqual({
      release: [],
      take: [2],
    });
    expect(planShards({ count: 8, held: new Set([0, 1, 2]), views: free(8), replicas: 3, offset: 0 })).toEqual({
      release: [],
      take: [],
    });
  });

  it('hands back the highest shards beyond its share when replicas join, keeping shard 0', () => {
    const held = new Set([0, 1, 2, 3, 4, 5, 6, 7]);
    expect(planShards({ count: 8, held, views: free(8, [...held]), replicas: 2, offset: 0 })).toEqual({
      release: [7, 6, 5, 4],
      take: [],
    });
    expect(
      planShards({ count: 8, held: new Set([0, 3, 5, 7]), views: free(8, [0, 3, 5, 7]), replicas: 3, offset: 0 }),
    ).toEqual({ release: [7], take: [] });
  });

  it('takes every shard of a fleet of replicas that all left but this one', () => {
    expect(planShards({ count: 8, held: new Set([1, 2]), views: free(8), replicas: 1, offset: 0 }).take).toEqual([
      0, 3, 4, 5, 6, 7,
    ]);
  });

  it('reads the shards and lease timings from the environment, and refuses timings that cannot work', () => {
    const lease = { KLM_LEADER_ELECTION_LEASE: 'klm-system/klm-bridge', POD_NAME: 'klm-bridge-0' };
    expect(configFromEnv(lease).leaderElection).toEqual({
      namespace: 'klm-system',
      name: 'klm-bridge',
      identity: 'klm-bridge-0',
      shards: 8,
      leaseDurationMs: 180_000,
      renewDeadlineMs: 120_000,
      retryPeriodMs: 3_000,
    });
    expect(
      configFromEnv({
        ...lease,
        KLM_BRIDGE_SHARDS: '32',
        KLM_LEADER_ELECTION_LEASE_DURATION: '15s',
        KLM_LEADER_ELECTION_RENEW_DEADLINE: '10s',
        KLM_LEADER_ELECTION_RETRY_PERIOD: '2s',
      }).leaderElection,
    ).toMatchObject({ shards: 32, leaseDurationMs: 15_000, renewDeadlineMs: 10_000, retryPeriodMs: 2_000 });
    expect(() => configFromEnv({ ...lease, KLM_LEADER_ELECTION_RENEW_DEADLINE: '200s' })).toThrow(
      'KLM_LEADER_ELECTION_RETRY_PERIOD must be shorter than KLM_LEADER_ELECTION_RENEW_DEADLINE, and that shorter than KLM_LEADER_ELECTION_LEASE_DURATION',
    );
    expect(() => configFromEnv({ ...lease, KLM_BRIDGE_SHARDS: '0' })).toThrow('KLM_BRIDGE_SHARDS must be at least 1');
    expect(() => configFromEnv({ ...lease, KLM_BRIDGE_SHARDS: 'many' })).toThrow(
      'KLM_BRIDGE_SHARDS must be a whole number, not "many"',
    );
  });
});
