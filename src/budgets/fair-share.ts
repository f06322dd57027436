import type { Logger } from 'pino';
import type { Budget } from '../config/groups/fair-share.js';
import { ahead, alone, applyGrant, bucketState, estimate, IDLE_MS, leaseRequest, newEntry, PASS_MS, refusal, slice, stateOf, doorAvailable } from './budget-entry.js';
import type { BucketState, Decision, Entry, Refusal } from './budget-entry.js';
import type { LeaseRequest, LeaseStore } from './lease.store.js';

export type { BucketState, Decision, Refusal } from './budget-entry.js';

/** How often idle leases are returned and, while the store is unreachable, it is tried again. */
const SWEEP_MS = 250;
/** How often buckets idle past their refill are deleted (forgetAfterSeconds): rows stay a minute at most past it. */
const FORGET_EVERY_MS = 10_000;
/** takeWhenAvailable asks again no sooner than this (a lease may arrive meanwhile). */
const MIN_WAIT_MS = 20;

export interface FairShareOptions {
  store: LeaseStore;
  /** Instances expected at most: the share each enforces alone while the store is unreachable. */
  instances: number;
  /** How long lease requests are gathered before one round trip asks for them all. */
  syncMs: number;
  /** How long buckets idle under each key prefix are kept (forgetAfterSeconds). */
  forget: ReadonlyArray<{ prefix: string; idleSeconds: number }>;
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
  /** Entries whose `dry` is set: while none is, the door has nobody to refuse and asks nothing. */
  private dryEntries = 0;
  private syncing: Promise<void> | null = null;
  private timer: NodeJS.Timeout | null = null;
  private sweeper: NodeJS.Timeout | null = null;
  private forgetter: NodeJS.Timeout | null = null;
  private reachable = true;
  private stopped = false;

  constructor(private readonly options: FairShareOptions) {}

  /** Whether some caller here is refused lately (or spent its last point): the door's first, cheapest question. */
  get refusing(): boolean {
    return this.dryEntries > 0;
  }

  /** Whether the shared buckets answered lately (false: each budget is enforced here alone, at 1/instances). */
  get shared(): boolean {
    return this.reachable;
  }

  start(): void {
    this.sweeper = setInterval(() => this.sweep(), SWEEP_MS).unref();
    // Unreachable now and then is fine: the next round deletes what this one left.
    this.forgetter = setInterval(() => void this.options.store.forgetIdle(this.options.forget).catch(() => undefined), FORGET_EVERY_MS).unref();
  }

  /** Gives back every lease held (best effort: an unreachable store refills them by itself). */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.sweeper) clearInterval(this.sweeper);
    if (this.forgetter) clearInterval(this.forgetter);
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.syncing;
    for (const [key, entry] of this.entries) if (entry.lease > 0 || entry.owed > 0) this.dirty.add(key);
    await this.sync(true);
  }

  /** Spends `cost` points of the budget under `key`, or refuses them all. */
  take(key: string, budget: Budget, cost: number, now = Date.now()): Decision {
    const { instances } = this.options;
    const entry = this.entry(key, budget, now);
    entry.lastUsed = now;
    entry.passed = Math.max(0, entry.passed - 1);
    // The bucket this instance would keep alone is spent by everything it admits, so that when the
    // store goes away a caller who was spending fast here starts from what it has left, not afresh.
    const own = alone(entry, instances, now);
    if (entry.lease >= cost) {
      entry.lease -= cost;
      entry.alone = Math.max(0, own - cost);
      if (entry.lease < slice(budget, instances) / 2) this.schedule(key);
      return this.admitted(entry, now);
    }
    const shortfall = cost - entry.lease;
    const admit = this.reachable
      ? estimate(entry, now) - entry.owed >= shortfall && (entry.owed === 0 || entry.owed + shortfall <= ahead(budget, instances))
      : own >= shortfall;
    if (admit) {
      entry.lease = 0;
      // Owed while alone is capped: after a long outage the debt never exceeds one full bucket.
      entry.owed = this.reachable ? entry.owed + shortfall : Math.min(budget.capacity, entry.owed + shortfall);
      entry.alone = Math.max(0, own - cost);
      this.schedule(key);
      return this.admitted(entry, now);
    }
    this.setDry(entry, true);
    return refusal(entry, cost, this.reachable, instances, now);
  }

  /**
   * Spends one point only from a lease the store granted, asking it now when none is in hand: never
   * ahead of the shared bucket (as `take` may run, or a new entry that assumes a full bucket), so a
   * small, slow budget (one user's rejoins) holds exactly across instances and across idle gaps.
   * While the store is unreachable: this instance's own share, as `take`.
   */
  async takeOneLeased(key: string, budget: Budget): Promise<Decision> {
    let entry = this.entry(key, budget, Date.now());
    entry.lastUsed = Date.now();
    // After a grant short of a point, the store has none until the refill is due: no need to ask.
    if (entry.lease < 1 && this.reachable && entry.nextAskAt <= Date.now()) {
      await this.syncNow(key, () => (this.entries.get(key)?.lease ?? 0) >= 1);
      entry = this.entry(key, budget, Date.now());
    }
    if (entry.lease >= 1 || !this.reachable) return this.take(key, budget, 1);
    this.setDry(entry, true);
    return refusal(entry, 1, true, this.options.instances, Date.now());
  }

  /**
   * Spends `cost` points once the bucket holds them, waiting for its refill meanwhile: for what is
   * never refused (a leave), so it is never free either. At most what one instance may spend alone
   * (a bucket / instances) is asked, so the wait ends even for an operation larger than the bucket.
   */
  async takeWhenAvailable(key: string, budget: Budget, cost: number): Promise<BucketState> {
    const charge = Math.min(cost, Math.max(1, Math.floor(budget.capacity / this.options.instances)));
    for (;;) {
      const decision = this.take(key, budget, charge);
      if (decision.admitted) return decision.state;
      const missing = Math.max(1, charge - decision.state.currentlyAvailable);
      await new Promise((resolve) => setTimeout(resolve, Math.max(MIN_WAIT_MS, (missing / budget.rate) * 1000)));
    }
  }

  /** The bucket as this instance sees it, spending nothing (for an answer refused before any charge). */
  state(key: string, budget: Budget, now = Date.now()): BucketState {
    return stateOf(this.entries.get(key), budget, this.reachable, this.options.instances, now);
  }

  /** The last point spent: the next request is refused at the door, not after Yoga parsed it. */
  private admitted(entry: Entry, now: number): Decision {
    const state = bucketState(entry, this.reachable, this.options.instances, now);
    this.setDry(entry, state.currentlyAvailable < 1);
    return { admitted: true, state };
  }

  private setDry(entry: Entry, dry: boolean): void {
    if (entry.dry !== dry) this.dryEntries += dry ? 1 : -1;
    entry.dry = dry;
  }

  /**
   * For a caller refused lately (or whose last point is spent), while no point is available: the
   * refusal again, asking nothing of the operation (the transport refuses a flood before parsing
   * it). Each point back lets one request through to be charged, not all that come meanwhile.
   */
  refusedAgain(key: string, now = Date.now()): Refusal | null {
    const entry = this.entries.get(key);
    if (!entry?.dry) return null;
    if (now - entry.passedAt > PASS_MS) entry.passed = 0;
    const refused = refusal(entry, 1, this.reachable, this.options.instances, now);
    if (doorAvailable(entry, this.reachable, this.options.instances, now) >= 1 + entry.passed) {
      entry.passed++;
      entry.passedAt = now;
      return null;
    }
    entry.lastUsed = now;
    return refused;
  }

  private entry(key: string, budget: Budget, now: number): Entry {
    let entry = this.entries.get(key);
    if (!entry) {
      entry = newEntry(budget, this.options.instances, now);
      this.entries.set(key, entry);
      this.schedule(key);
    }
    return entry;
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
      void this.runSync();
    }, this.options.syncMs).unref();
  }

  /** One sync at a time: `applyGrant` settles what was owed when the request left. */
  private runSync(): Promise<void> {
    this.syncing = this.sync(false).finally(() => {
      this.syncing = null;
      if (this.reachable) this.schedule(null);
    });
    return this.syncing;
  }

  /** Asks the store for `key`'s slice now, after any sync in flight (unless that one brought it `enough`), and waits for the answer. */
  private async syncNow(key: string, enough: () => boolean): Promise<void> {
    while (this.syncing) await this.syncing;
    if (this.stopped || enough()) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.dirty.add(key);
    await this.runSync();
  }

  private async sync(final: boolean): Promise<void> {
    const now = Date.now();
    const requests: LeaseRequest[] = [];
    const givenBack = new Set<string>();
    for (const key of this.dirty) {
      const entry = this.entries.get(key);
      if (!entry) continue;
      const giveBack = final || now - entry.lastUsed >= IDLE_MS;
      requests.push(leaseRequest(key, entry, this.options.instances, giveBack));
      if (giveBack) givenBack.add(key);
    }
    this.dirty.clear();
    if (requests.length === 0) return;
    try {
      const grants = await this.options.store.lease(requests);
      const answeredAt = Date.now();
      const byKey = new Map(requests.map((request) => [request.key, request]));
      for (const grant of grants) {
        const entry = this.entries.get(grant.key);
        if (!entry || applyGrant(entry, byKey.get(grant.key)!, grant, this.options.instances, answeredAt, givenBack.has(grant.key))) continue;
        this.setDry(entry, false);
        this.entries.delete(grant.key);
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
      if (idle || entry.owed > 0 || entry.lease < slice(entry.budget, this.options.instances) / 2 || !this.reachable) this.dirty.add(key);
    }
    this.schedule(null, now);
  }
}

