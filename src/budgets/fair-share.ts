import type { Budget } from '../config/groups/fair-share.js';
import {
  ahead,
  alone,
  bucketState,
  doorAvailable,
  doorRefusal,
  estimate,
  newEntry,
  PASS_MS,
  refusal,
  slice,
  stateOf,
} from './budget-entry.js';
import type { BucketState, Decision, Entry, Refusal } from './budget-entry.js';
import { LeaseSync, type LeaseSyncOptions } from './lease-sync.js';

export type { BucketState, Decision, Refusal } from './budget-entry.js';

/** takeWhenAvailable asks again no sooner than this (a lease may arrive meanwhile). */
const MIN_WAIT_MS = 20;

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
  private readonly leases: LeaseSync;
  /** Entries whose `dry` is set: while none is, the door has nobody to refuse and asks nothing. */
  private dryEntries = 0;

  constructor(private readonly options: LeaseSyncOptions) {
    this.leases = new LeaseSync(options, (entry) => this.setDry(entry, false));
  }

  /** Whether some caller here is refused lately (or spent its last point): the door's first, cheapest question. */
  get refusing(): boolean {
    return this.dryEntries > 0;
  }

  /** Whether the shared buckets answered lately (false: each budget is enforced here alone, at 1/instances). */
  get shared(): boolean {
    return this.leases.shared;
  }

  start(): void {
    this.leases.start();
  }

  /** Gives back every lease held (best effort: an unreachable store refills them by itself). */
  stop(): Promise<void> {
    return this.leases.stop();
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
      if (entry.lease < slice(budget, instances) / 2) this.leases.schedule(key);
      return this.admitted(entry, now);
    }
    const shortfall = cost - entry.lease;
    const admit = this.leases.shared
      ? estimate(entry, now) - entry.owed >= shortfall && (entry.owed === 0 || entry.owed + shortfall <= ahead(budget, instances))
      : own >= shortfall;
    if (admit) {
      entry.lease = 0;
      // Owed while alone is capped: after a long outage the debt never exceeds one full bucket.
      entry.owed = this.leases.shared ? entry.owed + shortfall : Math.min(budget.capacity, entry.owed + shortfall);
      entry.alone = Math.max(0, own - cost);
      this.leases.schedule(key);
      return this.admitted(entry, now);
    }
    this.setDry(entry, true);
    return refusal(entry, cost, this.leases.shared, instances, now);
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
    if (entry.lease < 1 && this.leases.shared && entry.nextAskAt <= Date.now()) {
      await this.leases.syncNow(key, () => (this.leases.entries.get(key)?.lease ?? 0) >= 1);
      entry = this.entry(key, budget, Date.now());
    }
    if (entry.lease >= 1 || !this.leases.shared) return this.take(key, budget, 1);
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
    return stateOf(this.leases.entries.get(key), budget, this.leases.shared, this.options.instances, now);
  }

  /** The last point spent: the next request is refused at the door, not after Yoga parsed it. */
  private admitted(entry: Entry, now: number): Decision {
    const state = bucketState(entry, this.leases.shared, this.options.instances, now);
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
    const entry = this.leases.entries.get(key);
    if (!entry?.dry) return null;
    if (now - entry.passedAt > PASS_MS) entry.passed = 0;
    const available = doorAvailable(entry, this.leases.shared, this.options.instances, now);
    if (available >= 1 + entry.passed) {
      entry.passed++;
      entry.passedAt = now;
      return null;
    }
    entry.lastUsed = now;
    return doorRefusal(entry, this.leases.shared, this.options.instances, now, 1 + entry.passed - available);
  }

  private entry(key: string, budget: Budget, now: number): Entry {
    let entry = this.leases.entries.get(key);
    if (!entry) {
      entry = newEntry(budget, this.options.instances, now);
      this.leases.entries.set(key, entry);
      this.leases.schedule(key);
    }
    return entry;
  }
}
