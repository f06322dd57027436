import type { Logger } from 'pino';
import { applyGrant, IDLE_MS, leaseRequest, slice, type Entry } from './budget-entry.js';
import type { LeaseRequest, LeaseStore } from './lease.store.js';

/** How often idle leases are returned and, while the store is unreachable, it is tried again. */
const SWEEP_MS = 250;
/** How often buckets idle past their refill are deleted (forgetAfterSeconds): rows stay a minute at most past it. */
const FORGET_EVERY_MS = 10_000;

export interface LeaseSyncOptions {
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
 * The buckets one instance holds, kept in step with the shared store in the background: marked
 * buckets are asked for in one round trip `syncMs` after the first mark, one sync at a time; a sweep
 * gives idle leases back, settles debts and tries an unreachable store again; idle rows are deleted.
 * FairShare spends from these entries; this decides when the store hears of them.
 */
export class LeaseSync {
  readonly entries = new Map<string, Entry>();
  private readonly dirty = new Set<string>();
  private syncing: Promise<void> | null = null;
  private timer: NodeJS.Timeout | null = null;
  private sweeper: NodeJS.Timeout | null = null;
  private forgetter: NodeJS.Timeout | null = null;
  private reachable = true;
  private stopped = false;

  /** `forgotten`: an entry dropped after its lease went back (its owner stops counting it). */
  constructor(
    private readonly options: LeaseSyncOptions,
    private readonly forgotten: (entry: Entry) => void,
  ) {}

  /** Whether the shared buckets answered lately (false: each budget is enforced here alone, at 1/instances). */
  get shared(): boolean {
    return this.reachable;
  }

  start(): void {
    this.sweeper = setInterval(() => this.sweep(), SWEEP_MS).unref();
    // Unreachable now and then is fine: the next round deletes what this one left.
    this.forgetter = setInterval(
      () => void this.options.store.forgetIdle(this.options.forget).catch(() => undefined),
      FORGET_EVERY_MS,
    ).unref();
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

  /** Marks a bucket for the next lease request; a request goes out `syncMs` after the first mark. */
  schedule(key: string | null, now = Date.now()): void {
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
  async syncNow(key: string, enough: () => boolean): Promise<void> {
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
        if (!entry || applyGrant(entry, byKey.get(grant.key)!, grant, this.options.instances, answeredAt, givenBack.has(grant.key)))
          continue;
        this.forgotten(entry);
        this.entries.delete(grant.key);
      }
      if (!this.reachable) this.options.logger.info('fair share: the lease store answers again; budgets are shared again');
      this.reachable = true;
    } catch (error) {
      for (const request of requests) this.dirty.add(request.key);
      if (this.reachable)
        this.options.logger.warn(
          { err: error },
          'fair share: the lease store is unreachable; each instance enforces budget / FAIR_SHARE_INSTANCES alone',
        );
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
