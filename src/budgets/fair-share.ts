import type { Logger } from 'pino';
import type { Budget } from '../config/groups/fair-share.js';
import type { LeaseRequest, LeaseStore } from './lease.store.js';

/** A bucket as the caller is told of it (Shopify's `throttleStatus`). */
export interface BucketState {
  maximumAvailable: number;
  currentlyAvailable: number;
  restoreRate: number;
}

export type Decision = { admitted: true; state: BucketState } | { admitted: false; state: BucketState; retryAfterSeconds: number };

/** One principal's budget as this instance holds it. */
interface Entry {
  budget: Budget;
  /** Points leased to this instance and not spent yet. */
  lease: number;
  /** Points spent beyond the lease since the store last heard of them (paid at the next sync). */
  owed: number;
  /** What the shared bucket held when last seen, and when (ms): refilled since at `rate`. */
  seen: number;
  seenAt: number;
  lastUsed: number;
  /** While the store is unreachable: this instance's own bucket, 1/instances of the budget. */
  alone: number;
  aloneAt: number;
  /** After a grant short of the slice (the bucket ran dry): not asked again before it refills one. */
  nextAskAt: number;
}

/** Unused leases go back after this long without a request. */
const IDLE_MS = 5_000;
/** How often idle leases are returned and, while the store is unreachable, it is tried again. */
const SWEEP_MS = 250;

export interface FairShareOptions {
  store: LeaseStore;
  /** Instances expected at most: the share each enforces alone while the store is unreachable. */
  instances: number;
  /** How long lease requests are gathered before one round trip asks for them all. */
  syncMs: number;
  logger: Logger;
}

/**
 * Budgets shared by every instance, with no round trip on a request's path (docs/operations.md,
 * "Fair share"). Each instance spends slices leased from the shared bucket in PostgreSQL and asks
 * for the next slice, in the background, before the one in hand runs out. Between two answers it
 * may run ahead of its lease by at most budget / instances (or one operation), and only while the
 * bucket it last saw, refilled since, still covers it; the store takes that debt at the next sync
 * even below zero, which holds back everyone's next grants. While the store is unreachable, each
 * instance enforces budget / instances alone.
 */
export class FairShare {
  private readonly entries = new Map<string, Entry>();
  private readonly dirty = new Set<string>();
  private syncing: Promise<void> | null = null;
  private timer: NodeJS.Timeout | null = null;
  private sweeper: NodeJS.Timeout | null = null;
  private reachable = true;
  private stopped = false;

  constructor(private readonly options: FairShareOptions) {}

  /** Whether the shared buckets answered lately (false: each budget is enforced here alone, at 1/instances). */
  get shared(): boolean {
    return this.reachable;
  }

  start(): void {
    this.sweeper = setInterval(() => this.sweep(), SWEEP_MS);
    this.sweeper.unref();
  }

  /** Gives back every lease held (best effort: an unreachable store refills them by itself). */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.sweeper) clearInterval(this.sweeper);
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.syncing;
    for (const [key, entry] of this.entries) if (entry.lease > 0 || entry.owed > 0) this.dirty.add(key);
    await this.sync(true);
  }

  /** Spends `cost` points of the budget under `key`, or refuses them all. */
  take(key: string, budget: Budget, cost: number, now = Date.now()): Decision {
    const entry = this.entry(key, budget, now);
    entry.lastUsed = now;
    // The bucket this instance would keep alone is spent by everything it admits, so that when the
    // store goes away a caller who was spending fast here starts from what it has left, not afresh.
    const alone = this.alone(entry, now);
    if (entry.lease >= cost) {
      entry.lease -= cost;
      entry.alone = Math.max(0, alone - cost);
      if (entry.lease < this.slice(budget) / 2) this.schedule(key);
      return { admitted: true, state: this.state(entry, now) };
    }
    const shortfall = cost - entry.lease;
    const admit = this.reachable
      ? this.estimate(entry, now) - entry.owed >= shortfall && (entry.owed === 0 || entry.owed + shortfall <= this.ahead(budget))
      : alone >= shortfall;
    if (admit) {
      entry.lease = 0;
      // Owed while alone is capped: after a long outage the debt never exceeds one full bucket.
      entry.owed = this.reachable ? entry.owed + shortfall : Math.min(budget.capacity, entry.owed + shortfall);
      entry.alone = Math.max(0, alone - cost);
      this.schedule(key);
      return { admitted: true, state: this.state(entry, now) };
    }
    const state = this.state(entry, now);
    const rate = this.reachable ? budget.rate : budget.rate / this.options.instances;
    const missing = Math.max(cost - state.currentlyAvailable, 1);
    return { admitted: false, state, retryAfterSeconds: Math.max(1, Math.ceil(missing / rate)) };
  }

  /** The bucket under `key` as this instance sees it, spending nothing. */
  peek(key: string, budget: Budget, now = Date.now()): BucketState {
    const entry = this.entries.get(key);
    return entry ? this.state(entry, now) : { maximumAvailable: budget.capacity, currentlyAvailable: budget.capacity, restoreRate: budget.rate };
  }

  private entry(key: string, budget: Budget, now: number): Entry {
    let entry = this.entries.get(key);
    if (!entry) {
      // Never seen here: assume the bucket full until the store says otherwise (bounded by one slice).
      entry = { budget, lease: 0, owed: 0, seen: budget.capacity, seenAt: now, lastUsed: now, alone: budget.capacity / this.options.instances, aloneAt: now, nextAskAt: 0 };
      this.entries.set(key, entry);
      this.schedule(key);
    }
    return entry;
  }

  private state(entry: Entry, now: number): BucketState {
    const { capacity, rate } = entry.budget;
    const shared = this.reachable ? this.estimate(entry, now) - entry.owed : this.alone(entry, now);
    const available = Math.min(capacity, Math.max(0, entry.lease + shared));
    return { maximumAvailable: capacity, currentlyAvailable: Math.floor(available), restoreRate: rate };
  }

  private estimate(entry: Entry, now: number): number {
    return Math.min(entry.budget.capacity, entry.seen + ((now - entry.seenAt) / 1000) * entry.budget.rate);
  }

  private alone(entry: Entry, now: number): number {
    const share = this.options.instances;
    entry.alone = Math.min(entry.budget.capacity / share, entry.alone + ((now - entry.aloneAt) / 1000) * (entry.budget.rate / share));
    entry.aloneAt = now;
    return entry.alone;
  }

  /** How far ahead of its lease an instance may run between two answers: N instances at once, one budget. */
  private ahead(budget: Budget): number {
    return Math.max(this.slice(budget), budget.capacity / this.options.instances);
  }

  /** A slice: small enough that N instances' slices are a small part of the budget. */
  private slice(budget: Budget): number {
    return Math.max(1, budget.capacity / (4 * this.options.instances));
  }

  /** Marks a bucket for the next lease request; a request goes out `syncMs` after the first mark. */
  private schedule(key: string | null, now = Date.now()): void {
    if (key !== null) {
      const entry = this.entries.get(key);
      // A dry bucket, or an unreachable store: the sweep asks again, not every request.
      if (!entry || entry.nextAskAt > now || !this.reachable) return;
      this.dirty.add(key);
    }
    if (this.timer || this.syncing || this.dirty.size === 0 || this.stopped) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.syncing = this.sync(false).finally(() => {
        this.syncing = null;
        if (this.reachable) this.schedule(null);
      });
    }, this.options.syncMs);
    this.timer.unref();
  }

  private async sync(final: boolean): Promise<void> {
    const now = Date.now();
    const requests: LeaseRequest[] = [];
    for (const key of this.dirty) {
      const entry = this.entries.get(key);
      if (!entry) continue;
      const idle = final || now - entry.lastUsed >= IDLE_MS;
      const want = idle ? 0 : Math.max(0, this.slice(entry.budget) - entry.lease);
      const settle = idle ? entry.owed - entry.lease : entry.owed;
      requests.push({ key, settle, want, capacity: entry.budget.capacity, rate: entry.budget.rate });
    }
    this.dirty.clear();
    if (requests.length === 0) return;
    try {
      const grants = await this.options.store.lease(requests);
      const answeredAt = Date.now();
      const byKey = new Map(requests.map((request) => [request.key, request]));
      for (const grant of grants) {
        const entry = this.entries.get(grant.key);
        const request = byKey.get(grant.key)!;
        if (!entry) continue;
        if (request.want === 0 && request.settle === entry.owed - entry.lease) {
          this.entries.delete(grant.key); // idle, and nothing spent since: its lease is back
          continue;
        }
        entry.owed -= request.want === 0 ? request.settle + entry.lease : request.settle;
        if (request.want === 0) entry.lease = 0;
        entry.lease += grant.granted;
        entry.seen = grant.available;
        entry.seenAt = answeredAt;
        const short = this.slice(entry.budget) - grant.granted;
        entry.nextAskAt = request.want > 0 && grant.granted < request.want ? answeredAt + (Math.max(short, 1) / entry.budget.rate) * 1000 : 0;
      }
      if (!this.reachable) this.options.logger.info('fair share: the lease store answers again; budgets are shared again');
      this.reachable = true;
    } catch (error) {
      for (const request of requests) this.dirty.add(request.key);
      if (this.reachable) this.options.logger.warn({ err: error }, 'fair share: the lease store is unreachable; each instance enforces budget / FAIR_SHARE_INSTANCES alone');
      this.reachable = false;
    }
  }

  private sweep(): void {
    const now = Date.now();
    for (const [key, entry] of this.entries) {
      if (entry.nextAskAt > now) continue;
      const idle = now - entry.lastUsed >= IDLE_MS;
      if (idle || entry.owed > 0 || entry.lease < this.slice(entry.budget) / 2 || !this.reachable) this.dirty.add(key);
    }
    this.schedule(null, now);
  }
}
