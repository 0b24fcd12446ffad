// Leases as client-go's leaderelection reads them (which @kubernetes/client-node does not
// offer): a candidate takes a Lease when it is free or its holder has not renewed it for a lease
// duration, as this process's own clock measures it (the holder's renewTime is compared only for
// change, so the two clocks need not agree). Every write carries the resourceVersion it read: of
// two candidates, one wins. The bridge's shards (src/starter/shard-leases.ts) are held this way.
import type { KubeObject } from '../api/shared';

export interface LeaseSpec {
  holderIdentity?: string;
  leaseDurationSeconds?: number;
  acquireTime?: string;
  renewTime?: string;
  leaseTransitions?: number;
}

export type Lease = KubeObject & { spec?: LeaseSpec };

/** What a candidate remembers of the Lease it last read: the record, and when (by its own clock) it last changed. */
export interface ObservedLease {
  holder: string;
  renewTime: string;
  atMs: number;
}

/**
 * Whether `identity` may write itself into the Lease now: it is free (no holder), ours, or its
 * holder's record has not changed for the lease duration since we first saw it so.
 */
export function mayTake(
  spec: LeaseSpec | undefined,
  identity: string,
  observed: ObservedLease | undefined,
  nowMs: number,
  defaultDurationMs: number,
): boolean {
  const holder = spec?.holderIdentity ?? '';
  if (holder === '' || holder === identity) return true;
  if (!observed || observed.holder !== holder || observed.renewTime !== (spec?.renewTime ?? '')) return false;
  const durationMs = spec?.leaseDurationSeconds ? spec.leaseDurationSeconds * 1000 : defaultDurationMs;
  return nowMs - observed.atMs >= durationMs;
}

/** A MicroTime as the API server writes it (six fractional digits). */
export function microTime(ms: number): string {
  return new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}
