// When a bridge candidate may take the Lease: by the record it read and its own clock only.
import { describe, expect, it } from 'vitest';
import { mayTake, microTime } from '../../src/k8s/lease';
import { configFromEnv } from '../../src/infra/config';

const LEASE = { holderIdentity: 'bridge-a', leaseDurationSeconds: 15, renewTime: '2026-11-25T08:00:00.000000Z' };

describe('leases', () => {
  it('takes a Lease that nobody holds, or that it holds itself', () => {
    expect(mayTake(undefined, 'bridge-b', undefined, 0, 15_000)).toBe(true);
    expect(mayTake({ ...LEASE, holderIdentity: '' }, 'bridge-b', undefined, 0, 15_000)).toBe(true);
    expect(mayTake(LEASE, 'bridge-a', undefined, 0, 15_000)).toBe(true);
  });

  it("waits out a holder's lease duration from when this candidate first saw its record unchanged, not from the holder's renewTime", () => {
    const seen = { holder: 'bridge-a', renewTime: LEASE.renewTime, atMs: 1_000_000 };
    // The renewTime is hours old by any clock, but this candidate has only just seen it.
    expect(mayTake(LEASE, 'bridge-b', seen, 1_000_000 + 14_999, 15_000)).toBe(false);
    expect(mayTake(LEASE, 'bridge-b', seen, 1_000_000 + 15_000, 15_000)).toBe(true);
    // The Lease's own duration counts, not the candidate's default.
    expect(mayTake({ ...LEASE, leaseDurationSeconds: 1 }, 'bridge-b', seen, 1_000_000 + 1_000, 15_000)).toBe(true);
  });

  it('does not take a Lease whose record changed since it last looked (the holder renewed)', () => {
    const seen = { holder: 'bridge-a', renewTime: '2026-11-25T07:59:58.000000Z', atMs: 0 };
    expect(mayTake(LEASE, 'bridge-b', seen, 60_000, 15_000)).toBe(false);
    expect(mayTake(LEASE, 'bridge-b', undefined, 60_000, 15_000)).toBe(false);
  });

  it('writes times as the API server writes MicroTime', () => {
    expect(microTime(Date.UTC(2026, 10, 25, 8, 0, 0, 123))).toBe('2026-11-25T08:00:00.123000Z');
  });

  it('reads the Lease from KLM_LEADER_ELECTION_LEASE, the identity from POD_NAME, and refuses a malformed one', () => {
    expect(configFromEnv({}).leaderElection).toBeUndefined();
    expect(
      configFromEnv({ KLM_LEADER_ELECTION_LEASE: 'klm-system/klm-bridge', POD_NAME: 'klm-bridge-7d9-x2' })
        .leaderElection,
    ).toMatchObject({ namespace: 'klm-system', name: 'klm-bridge', identity: 'klm-bridge-7d9-x2' });
    expect(configFromEnv({ KLM_LEADER_ELECTION_LEASE: 'klm-system/klm-bridge' }).leaderElection?.identity).toMatch(
      /-\d+$/,
    );
    expect(() => configFromEnv({ KLM_LEADER_ELECTION_LEASE: 'klm-bridge' })).toThrow(
      'KLM_LEADER_ELECTION_LEASE must be namespace/name of a Lease, not "klm-bridge"',
    );
  });
});
