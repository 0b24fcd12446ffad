// Leadership through a coordination.k8s.io Lease, as client-go's leaderelection does it (which
// @kubernetes/client-node does not offer): a candidate takes the Lease when it is free or its
// holder has not renewed it for a lease duration, as this process's own clock measures it (the
// holder's renewTime is compared only for change, so the two clocks need not agree); the leader
// renews it every retry period and gives leadership up when it could not renew for the renew
// deadline, which is shorter than the lease duration, so it has stopped before anyone else may
// start. Every write carries the resourceVersion it read: of two candidates, one wins.
import type { KubeObject } from '../api/shared';
import { KubeApiError, type KubeClient } from './rest-client';

export interface LeaseSpec {
  holderIdentity?: string;
  leaseDurationSeconds?: number;
  acquireTime?: string;
  renewTime?: string;
  leaseTransitions?: number;
}

type Lease = KubeObject & { spec?: LeaseSpec };

export interface LeaderElectionOptions {
  client: KubeClient;
  namespace: string;
  name: string;
  /** Who this candidate is in the Lease's holderIdentity (the pod's name, say). */
  identity: string;
  /** How long a holder that stopped renewing keeps the Lease from others (15 s). */
  leaseDurationMs?: number;
  /** How long the leader goes on trying to renew before it gives leadership up (10 s). */
  renewDeadlineMs?: number;
  /** How often a candidate tries, and the leader renews (2 s). */
  retryPeriodMs?: number;
  log?: (msg: string) => void;
}

/** What a candidate remembers of the Lease it last read: the record, and when (by its own clock) it last changed. */
export interface Observed {
  holder: string;
  renewTime: string;
  atMs: number;
}

/**
 * Whether `identity` may write itself into the Lease now: it is free (no holder), ours, or its
 * holder's record has not changed for the lease duration since we first saw it so.
 */
export function mayTake(spec: LeaseSpec | undefined, identity: string, observed: Observed | undefined, nowMs: number, defaultDurationMs: number): boolean {
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

/** Whether `p` resolved true within `ms`. */
async function raceTimeout(p: Promise<boolean>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), Math.max(0, ms))));
  try {
    return await Promise.race([p, late]);
  } finally {
    clearTimeout(timer);
  }
}

export class LeaderElector {
  private readonly leaseDurationMs: number;
  private readonly renewDeadlineMs: number;
  private readonly retryPeriodMs: number;
  private observed?: Observed;
  private stopped = false;
  private wake?: () => void;

  constructor(private readonly opts: LeaderElectionOptions) {
    this.leaseDurationMs = opts.leaseDurationMs ?? 15_000;
    this.renewDeadlineMs = opts.renewDeadlineMs ?? 10_000;
    this.retryPeriodMs = opts.retryPeriodMs ?? 2_000;
    if (!(this.retryPeriodMs < this.renewDeadlineMs && this.renewDeadlineMs < this.leaseDurationMs)) {
      throw new Error('leader election: the retry period must be shorter than the renew deadline, and that shorter than the lease duration');
    }
  }

  /**
   * Campaigns until `stop()`: `lead` runs each time this candidate gains leadership, and gets a
   * signal that aborts when it loses it (it must then stop what it leads, and resolve).
   */
  async run(lead: (lost: AbortSignal) => Promise<void>): Promise<void> {
    while (!this.stopped) {
      if (!(await this.tryAcquireOrRenew())) {
        await this.sleep(this.retryPeriodMs);
        continue;
      }
      this.opts.log?.(`leading (Lease ${this.opts.namespace}/${this.opts.name}, as ${this.opts.identity})`);
      const lost = new AbortController();
      let ended = false;
      const led = lead(lost.signal)
        .catch((err: unknown) => this.opts.log?.(`giving leadership up: ${err instanceof Error ? err.message : String(err)}`))
        .finally(() => {
          ended = true;
          this.wake?.();
        });
      let lastRenewMs = Date.now();
      while (!this.stopped && !ended) {
        await this.sleep(this.retryPeriodMs);
        if (this.stopped || ended) break;
        // A renewal that hangs must not keep us leading past the deadline.
        const left = this.renewDeadlineMs - (Date.now() - lastRenewMs);
        if (await raceTimeout(this.tryAcquireOrRenew(), left)) lastRenewMs = Date.now();
        else if (Date.now() - lastRenewMs >= this.renewDeadlineMs || this.observed?.holder !== this.opts.identity) break;
      }
      const gaveUp = ended;
      if (!this.stopped && !gaveUp) this.opts.log?.(`lost leadership of Lease ${this.opts.namespace}/${this.opts.name}`);
      lost.abort();
      await led;
      // Stopped, or what we led gave up by itself: let the next candidate have it at once.
      if (this.stopped || gaveUp) await this.release();
      if (!this.stopped) await this.sleep(this.retryPeriodMs);
    }
  }

  /** Stops campaigning; a leader stops leading and frees the Lease for the next candidate. */
  stop(): void {
    this.stopped = true;
    this.wake?.();
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const t = setTimeout(done, ms);
      function done() {
        clearTimeout(t);
        resolve();
      }
      this.wake = done;
    });
  }

  private async read(): Promise<Lease | undefined> {
    return await this.opts.client.get<Lease>('coordination.k8s.io/v1', 'Lease', this.opts.name, this.opts.namespace);
  }

  private path(): string {
    return `/apis/coordination.k8s.io/v1/namespaces/${encodeURIComponent(this.opts.namespace)}/leases`;
  }

  /** One attempt to take or keep the Lease; false when someone else holds it or the write failed. */
  private async tryAcquireOrRenew(): Promise<boolean> {
    const now = Date.now();
    try {
      const lease = await this.read();
      const spec = lease?.spec;
      const holder = spec?.holderIdentity ?? '';
      if (!this.observed || this.observed.holder !== holder || this.observed.renewTime !== (spec?.renewTime ?? '')) {
        this.observed = { holder, renewTime: spec?.renewTime ?? '', atMs: now };
      }
      if (!mayTake(spec, this.opts.identity, this.observed, now, this.leaseDurationMs)) return false;
      const ours = holder === this.opts.identity;
      const next: LeaseSpec = {
        holderIdentity: this.opts.identity,
        leaseDurationSeconds: Math.ceil(this.leaseDurationMs / 1000),
        acquireTime: ours && spec?.acquireTime ? spec.acquireTime : microTime(now),
        renewTime: microTime(now),
        leaseTransitions: (spec?.leaseTransitions ?? 0) + (ours || !lease ? 0 : 1),
      };
      const body: Lease = { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: this.opts.name, namespace: this.opts.namespace }, spec: next };
      if (lease) await this.opts.client.request('PUT', `${this.path()}/${encodeURIComponent(this.opts.name)}`, { ...body, metadata: { ...body.metadata, resourceVersion: lease.metadata.resourceVersion } });
      else await this.opts.client.request('POST', this.path(), body);
      this.observed = { holder: this.opts.identity, renewTime: next.renewTime!, atMs: now };
      return true;
    } catch (err) {
      // A conflict means another candidate wrote first: not worth a line.
      if (!(err instanceof KubeApiError && (err.status === 409 || err.status === 422))) {
        this.opts.log?.(`Lease ${this.opts.namespace}/${this.opts.name}: ${err instanceof Error ? err.message : String(err)}`);
      }
      return false;
    }
  }

  /** Frees the Lease we hold, so that a standby need not wait out the lease duration. */
  private async release(): Promise<void> {
    try {
      const lease = await this.read();
      if (lease?.spec?.holderIdentity !== this.opts.identity) return;
      await this.opts.client.request('PUT', `${this.path()}/${encodeURIComponent(this.opts.name)}`, {
        ...lease,
        spec: { ...lease.spec, holderIdentity: '', leaseDurationSeconds: 1, renewTime: microTime(Date.now()) },
      });
      this.opts.log?.(`released Lease ${this.opts.namespace}/${this.opts.name}`);
    } catch (err) {
      this.opts.log?.(`could not release Lease ${this.opts.namespace}/${this.opts.name}: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
}
