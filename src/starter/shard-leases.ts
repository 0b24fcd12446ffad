// The bridge replicas' shards, held through Leases (`<name>-shard-<i>-of-<count>`), as client-go
// holds one Lease for leader election, and the replicas' presence, each through a Lease of its own
// (`<name>-member-<identity>`), so that a replica that holds nothing yet still counts towards the
// fair share. Each retry period a replica renews its own Lease and those of its shards (each from
// the Lease as it last wrote it) while it lists the set (one request), then frees what it holds
// beyond its fair share (after it stopped serving it) and takes free or expired shards up to it
// (before it serves them). Each shard it serves has a timer
// that stops serving it when its renewal is overdue by the renew deadline, however long a round
// takes; the deadline is shorter than the lease duration, so it has stopped before another
// replica may take the shard. Intervals are measured on the monotonic clock: a step of the wall
// clock neither keeps a shard served nor lets one be taken early. Replicas with another shard
// count form a set of their own (the count is in the Leases' names and labels): during a change
// of the count both sets serve the fleet, some Kymas twice, none by nobody.
import { performance } from 'node:perf_hooks';
import { KubeApiError } from '../k8s/request-errors';
import { type KubeClient } from '../k8s/rest-client';
import { mayTake, microTime, type Lease, type LeaseSpec, type ObservedLease } from '../k8s/lease';
import { planShards } from '../decisions/shards';
import type { LeaseTimings } from '../infra/config';
import { within } from '../infra/deadline';

/** Leases of one set of bridges carry these labels: the set's name, its shard count, and their role. */
const SET_LABEL = 'operator.kyma-project.io/bridge-leases';
const COUNT_LABEL = 'operator.kyma-project.io/bridge-shards';
const ROLE_LABEL = 'operator.kyma-project.io/bridge-lease-role';

export interface ShardLeaseOptions extends LeaseTimings {
  client: KubeClient;
  namespace: string;
  /** What the Leases' names start with, and the label that finds them. */
  name: string;
  /** Who this replica is in the Leases' holderIdentity (the pod's name, say). */
  identity: string;
  shards: number;
  /** This replica took the shard's Lease: serve it from now on. */
  onGain: (shard: number) => void;
  /** This replica is about to free the shard's Lease, or lost it: stop serving it, now. */
  onLose: (shard: number) => void;
  log?: (msg: string) => void;
}

/** A name's characters as a Lease name may hold them. */
function dnsName(s: string): string {
  return s
    .toLowerCase()
    .replace(/[^a-z0-9.-]/g, '-')
    .slice(0, 200);
}

// Lease requests are given up to the renew deadline (`within`), as client-go's tries are: an API
// server slow under load (seconds per request) must not cost a replica its shards while the
// deadline allows a renewal; the per-shard timers stop serving a shard whose renewal is overdue
// however long a request takes.

const message = (err: unknown) => (err instanceof Error ? err.message : String(err));

export class ShardLeases {
  /** Shards served, each with the timer that stops serving it when its renewal is overdue. */
  private readonly held = new Map<number, NodeJS.Timeout>();
  private readonly observed = new Map<string, ObservedLease>();
  /** Each Lease as this replica last wrote it (the answer to its write): renewed from that, without reading it first. */
  private readonly written = new Map<string, Lease>();
  private stopped = false;
  private wake?: () => void;
  private readonly offset: number;
  /** When this replica's first round wrote its presence (monotonic ms). */
  private joinedMs?: number;

  constructor(private readonly o: ShardLeaseOptions) {
    let h = 0;
    for (const c of o.identity) h = (h * 31 + c.charCodeAt(0)) >>> 0;
    this.offset = h % o.shards;
  }

  /** The shards this replica serves now. */
  get shards(): number[] {
    return [...this.held.keys()].sort((a, b) => a - b);
  }

  shardLease(shard: number): string {
    return `${this.o.name}-shard-${shard}-of-${this.o.shards}`;
  }

  private memberLease(): string {
    return dnsName(`${this.o.name}-member-${this.o.identity}`);
  }

  private selector(): string {
    return `${SET_LABEL}=${this.o.name},${COUNT_LABEL}=${this.o.shards}`;
  }

  /** Writes this replica's presence, so that the others count it (and it them) before anyone takes shards. */
  async join(): Promise<void> {
    const name = this.memberLease();
    const lease = await within(
      this.o.client.get<Lease>('coordination.k8s.io/v1', 'Lease', name, this.o.namespace),
      this.o.renewDeadlineMs,
    ).catch(() => undefined);
    await this.write(name, lease, 'member');
  }

  /** Renews, takes and hands back shards until `stop()`; then stops serving and frees what it holds. */
  async run(): Promise<void> {
    while (!this.stopped) {
      await this.round().catch((err: unknown) => this.o.log?.(`bridge leases: ${message(err)}`));
      if (!this.stopped) await this.sleep(this.o.retryPeriodMs);
    }
    await this.releaseAll();
  }

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

  private path(name?: string): string {
    return `/apis/coordination.k8s.io/v1/namespaces/${encodeURIComponent(this.o.namespace)}/leases${name === undefined ? '' : `/${encodeURIComponent(name)}`}`;
  }

  /**
   * One round: renew what we hold and read every Lease of the set, at once (a renewal is one
   * write from the Lease as we last wrote it, so that an API server slow under load costs a
   * renewal one request's time, not a read's and a write's); then hand back and take as the plan
   * says.
   */
  private async round(): Promise<void> {
    const now = performance.now();
    const renewals = Promise.all(
      [...this.held.keys()].map(async (shard) => {
        const lease = this.written.get(this.shardLease(shard));
        if (lease) await this.renew(shard, lease);
      }),
    );
    const member = this.written.get(this.memberLease());
    const memberRenewal = member ? this.write(this.memberLease(), member, 'member') : Promise.resolve(false);
    const [{ items }, memberRenewed] = await Promise.all([
      within(
        this.o.client.list<Lease>('coordination.k8s.io/v1', 'Lease', {
          namespace: this.o.namespace,
          labelSelector: this.selector(),
        }),
        this.o.renewDeadlineMs,
      ),
      memberRenewal,
      renewals,
    ]);
    const byName = new Map(items.map((l) => [l.metadata.name, l]));
    const takeable = (l: Lease | undefined) => this.takeable(l, now);
    const members = items.filter((l) => l.metadata.labels?.[ROLE_LABEL] === 'member');
    const expiredMembers = members.filter((l) => l.metadata.name !== this.memberLease() && takeable(l));
    if (memberRenewed || (await this.write(this.memberLease(), byName.get(this.memberLease()), 'member')))
      this.joinedMs ??= performance.now();

    // A shard whose renewal failed is lost if someone else holds it now, else renewed from what was read.
    await Promise.all(
      [...this.held.keys()].map(async (shard) => {
        if (this.written.has(this.shardLease(shard))) return;
        const lease = byName.get(this.shardLease(shard));
        if (lease?.spec?.holderIdentity !== this.o.identity) return this.lose(shard, 'another replica holds its Lease');
        await this.renew(shard, lease);
      }),
    );

    const views = Array.from({ length: this.o.shards }, (_, shard) => ({
      shard,
      takeable: takeable(byName.get(this.shardLease(shard))),
    }));
    const replicas = members.length - expiredMembers.length + (byName.has(this.memberLease()) ? 0 : 1);
    const plan = planShards({
      count: this.o.shards,
      held: new Set(this.held.keys()),
      views,
      replicas,
      offset: this.offset,
    });
    for (const shard of plan.release) {
      this.lose(shard, 'handed back: more replicas share the shards');
      await this.free(this.shardLease(shard));
    }
    // A replica that joined lately takes one shard a round for a lease duration, so that replicas
    // starting together spread the shards rather than the first taking them all.
    const warming = this.joinedMs === undefined || performance.now() - this.joinedMs < this.o.leaseDurationMs;
    const take = warming ? plan.take.slice(0, 1) : plan.take;
    await this.takeShards(take, byName);
    await this.freeStrays(byName, [...take, ...plan.release]);
    // Members that went away leave their Lease behind: whoever sees it expired deletes it (if unchanged since).
    for (const l of expiredMembers) await this.remove(l);
  }

  /** Whether Lease `l` (none: not there) may be taken now; notes when its holder or renewal changed, as seen by this replica. */
  private takeable(l: Lease | undefined, now: number): boolean {
    if (!l) return true;
    const spec = l.spec;
    const seen = this.observed.get(l.metadata.name);
    if (!seen || seen.holder !== (spec?.holderIdentity ?? '') || seen.renewTime !== (spec?.renewTime ?? '')) {
      this.observed.set(l.metadata.name, {
        holder: spec?.holderIdentity ?? '',
        renewTime: spec?.renewTime ?? '',
        atMs: now,
      });
    }
    return mayTake(spec, this.o.identity, this.observed.get(l.metadata.name), now, this.o.leaseDurationMs);
  }

  /** Takes the shards (their Leases as read: `byName`) and serves each whose Lease it wrote. */
  private async takeShards(take: number[], byName: Map<string, Lease>): Promise<void> {
    for (const shard of take) {
      if (this.stopped) break;
      const started = performance.now();
      if (!(await this.write(this.shardLease(shard), byName.get(this.shardLease(shard)), 'shard'))) continue;
      this.serveUntilDeadline(shard, started);
      this.o.log?.(
        `serving shard ${shard} of ${this.o.shards} (Lease ${this.o.namespace}/${this.shardLease(shard)}, as ${this.o.identity})`,
      );
      this.o.onGain(shard);
    }
  }

  /**
   * A write that timed out may still have landed: a Lease that names us for a shard we neither
   * serve nor just took or handed back (`handled`) is freed, not left to expire.
   */
  private async freeStrays(byName: Map<string, Lease>, handled: number[]): Promise<void> {
    for (let shard = 0; shard < this.o.shards; shard++) {
      if (
        !this.held.has(shard) &&
        !handled.includes(shard) &&
        byName.get(this.shardLease(shard))?.spec?.holderIdentity === this.o.identity
      )
        await this.free(this.shardLease(shard));
    }
  }

  /**
   * Renews the shard's Lease (`lease`: as last written or read); once renewed, the shard is served
   * until the renew deadline from when the write began. A shard lost while the write was out (its
   * deadline passed) stays lost: its serving stopped, and only a take serves it again (a round
   * takes it back, its Lease naming us).
   */
  private async renew(shard: number, lease: Lease): Promise<void> {
    const started = performance.now();
    if ((await this.write(this.shardLease(shard), lease, 'shard')) && this.held.has(shard))
      this.serveUntilDeadline(shard, started);
  }

  /** Serves the shard until the renew deadline from `startedMs`, when its write began. */
  private serveUntilDeadline(shard: number, startedMs: number): void {
    clearTimeout(this.held.get(shard));
    const left = this.o.renewDeadlineMs - (performance.now() - startedMs);
    this.held.set(
      shard,
      setTimeout(() => this.lose(shard, `not renewed for ${this.o.renewDeadlineMs / 1000} s`), Math.max(0, left)),
    );
  }

  private lose(shard: number, why: string): void {
    const timer = this.held.get(shard);
    if (!this.held.delete(shard)) return;
    clearTimeout(timer);
    this.written.delete(this.shardLease(shard));
    this.o.log?.(`no longer serving shard ${shard} (${why})`);
    this.o.onLose(shard);
  }

  /** Writes this replica into Lease `name` (`lease`: as read), creating it if need be; false when another write came first or it failed. */
  private async write(name: string, lease: Lease | undefined, role: 'shard' | 'member'): Promise<boolean> {
    const now = Date.now();
    const spec = lease?.spec;
    const ours = spec?.holderIdentity === this.o.identity;
    const next: LeaseSpec = {
      holderIdentity: this.o.identity,
      leaseDurationSeconds: Math.ceil(this.o.leaseDurationMs / 1000),
      acquireTime: ours && spec?.acquireTime ? spec.acquireTime : microTime(now),
      renewTime: microTime(now),
      leaseTransitions: (spec?.leaseTransitions ?? 0) + (ours || !lease || !spec?.holderIdentity ? 0 : 1),
    };
    const metadata = {
      name,
      namespace: this.o.namespace,
      labels: { [SET_LABEL]: this.o.name, [COUNT_LABEL]: String(this.o.shards), [ROLE_LABEL]: role },
    };
    try {
      const written = lease
        ? await within(
            this.o.client.request<Lease>('PUT', this.path(name), {
              apiVersion: 'coordination.k8s.io/v1',
              kind: 'Lease',
              metadata: { ...metadata, resourceVersion: lease.metadata.resourceVersion },
              spec: next,
            }),
            this.o.renewDeadlineMs,
          )
        : await within(
            this.o.client.request<Lease>('POST', this.path(), {
              apiVersion: 'coordination.k8s.io/v1',
              kind: 'Lease',
              metadata,
              spec: next,
            }),
            this.o.renewDeadlineMs,
          );
      this.written.set(name, written);
      this.observed.set(name, { holder: this.o.identity, renewTime: next.renewTime!, atMs: performance.now() });
      return true;
    } catch (err) {
      // What we last wrote is no longer what is there (another wrote since, or a timed-out write of ours landed): read it next round.
      this.written.delete(name);
      // Another replica wrote first: not worth a line.
      if (!(err instanceof KubeApiError && err.status === 409))
        this.o.log?.(`Lease ${this.o.namespace}/${name}: ${message(err)}`);
      return false;
    }
  }

  /** Frees Lease `name` if this replica holds it, so that another need not wait out the lease duration. */
  private async free(name: string): Promise<void> {
    try {
      const lease = await within(
        this.o.client.get<Lease>('coordination.k8s.io/v1', 'Lease', name, this.o.namespace),
        this.o.renewDeadlineMs,
      );
      this.written.delete(name);
      if (lease?.spec?.holderIdentity !== this.o.identity) return;
      await within(
        this.o.client.request('PUT', this.path(name), {
          ...lease,
          spec: { ...lease.spec, holderIdentity: '', leaseDurationSeconds: 1, renewTime: microTime(Date.now()) },
        }),
        this.o.renewDeadlineMs,
      );
    } catch (err) {
      this.o.log?.(`could not free Lease ${this.o.namespace}/${name}: ${message(err)}`);
    }
  }

  /** Deletes Lease `l` unless it changed since it was read. */
  private async remove(l: Lease): Promise<void> {
    const body = {
      apiVersion: 'v1',
      kind: 'DeleteOptions',
      preconditions: { resourceVersion: l.metadata.resourceVersion },
    };
    await within(this.o.client.request('DELETE', this.path(l.metadata.name), body), this.o.renewDeadlineMs).catch(
      () => undefined,
    );
  }

  /** On the way out: stops counting as a member, stops serving every shard and frees their Leases. */
  private async releaseAll(): Promise<void> {
    const own = await within(
      this.o.client.get<Lease>('coordination.k8s.io/v1', 'Lease', this.memberLease(), this.o.namespace),
      this.o.renewDeadlineMs,
    ).catch(() => undefined);
    if (own) await this.remove(own);
    const shards = this.shards;
    for (const shard of shards) this.lose(shard, 'stopping');
    await Promise.all(shards.map((s) => this.free(this.shardLease(s))));
  }
}
