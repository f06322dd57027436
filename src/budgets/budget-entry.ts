import type { Budget } from '../config/groups/fair-share.js';
import type { LeaseGrant, LeaseRequest } from './lease.store.js';

/** A bucket as the caller is told of it (Shopify's `throttleStatus`). */
export interface BucketState {
  maximumAvailable: number;
  currentlyAvailable: number;
  restoreRate: number;
}

export type Refusal = { admitted: false; state: BucketState; retryAfterSeconds: number };
export type Decision = { admitted: true; state: BucketState } | Refusal;

/** One principal's budget as one instance holds it (the arithmetic of src/budgets/fair-share.ts). */
export interface Entry {
  budget: Budget;
  /** Points leased to this instance and not spent yet. */
  lease: number;
  /** Points spent beyond the lease since the store last heard of them (paid at the next sync). */
  owed: number;
  /** What the shared bucket held when last seen, and when (ms): refilled since at `rate`. */
  seen: number;
  seenAt: number;
  lastUsed: number;
  /** This instance's own bucket, 1/instances of the budget: the rule while the store is unreachable. */
  alone: number;
  aloneAt: number;
  /** After a grant short of the slice (the bucket ran dry): not asked again before it refills one. */
  nextAskAt: number;
  /** Its last operation was refused or spent the last point: `refusedAgain` answers for it until a point is available. */
  dry: boolean;
  /** Requests `refusedAgain` let through since the last `take` (each may spend a point it saw), and when the last went. */
  passed: number;
  passedAt: number;
}

/** A request let through the door reaches `take` well within this, or it never will (it was invalid). */
export const PASS_MS = 1_000;

/** Unused leases go back after this long without a request. */
export const IDLE_MS = 5_000;

/** Never seen here: the bucket assumed full until the store says otherwise. */
export function newEntry(budget: Budget, instances: number, now: number): Entry {
  return {
    budget,
    lease: 0,
    owed: 0,
    seen: budget.capacity,
    seenAt: now,
    lastUsed: now,
    alone: budget.capacity / instances,
    aloneAt: now,
    nextAskAt: 0,
    dry: false,
    passed: 0,
    passedAt: 0,
  };
}

/** The shared bucket as last seen, refilled since. */
export function estimate(entry: Entry, now: number): number {
  return Math.min(entry.budget.capacity, entry.seen + ((now - entry.seenAt) / 1000) * entry.budget.rate);
}

/** This instance's own bucket, refilled to now. */
export function alone(entry: Entry, instances: number, now: number): number {
  const { capacity, rate } = entry.budget;
  entry.alone = Math.min(capacity / instances, entry.alone + ((now - entry.aloneAt) / 1000) * (rate / instances));
  entry.aloneAt = now;
  return entry.alone;
}

export function bucketState(entry: Entry, shared: boolean, instances: number, now: number): BucketState {
  const { capacity, rate } = entry.budget;
  const outside = shared ? estimate(entry, now) - entry.owed : alone(entry, instances, now);
  return {
    maximumAvailable: capacity,
    currentlyAvailable: Math.floor(Math.min(capacity, Math.max(0, entry.lease + outside))),
    restoreRate: rate,
  };
}

/**
 * What the door lets a dry caller's next request through for: its lease, and only this instance's
 * share of the shared bucket's refill (every instance sees the same refill; N letting through one
 * request per point each would send N times the refill on to be parsed and refused).
 */
export function doorAvailable(entry: Entry, shared: boolean, instances: number, now: number): number {
  return shared ? entry.lease + Math.max(0, estimate(entry, now) - entry.owed) / instances : alone(entry, instances, now);
}

/** A bucket this instance holds no entry for is full as far as it knows. */
export function stateOf(entry: Entry | undefined, budget: Budget, shared: boolean, instances: number, now: number): BucketState {
  return entry
    ? bucketState(entry, shared, instances, now)
    : { maximumAvailable: budget.capacity, currentlyAvailable: budget.capacity, restoreRate: budget.rate };
}

/**
 * A refusal of `cost` points. It says fewer than `cost` are left, whatever the bucket as a whole
 * holds: this instance could not spend them now (no lease granted yet, or as far ahead of its
 * leases as it may run), and a client told otherwise would retry at once, to be refused again.
 */
export function refusal(entry: Entry, cost: number, shared: boolean, instances: number, now: number): Refusal {
  const seen = bucketState(entry, shared, instances, now);
  const state = { ...seen, currentlyAvailable: Math.max(0, Math.min(seen.currentlyAvailable, Math.ceil(cost) - 1)) };
  const rate = shared ? entry.budget.rate : entry.budget.rate / instances;
  const missing = Math.max(cost - state.currentlyAvailable, 1);
  return { admitted: false, state, retryAfterSeconds: Math.max(1, Math.ceil(missing / rate)) };
}

/**
 * The door's refusal of a dry caller: this instance's share holds no point for it (`doorAvailable`
 * is `missing` short of the next request let through), so the answer says none is left, and asks
 * for a retry once that share has refilled it, not when the whole bucket would have.
 */
export function doorRefusal(entry: Entry, shared: boolean, instances: number, now: number, missing: number): Refusal {
  const { state } = refusal(entry, 1, shared, instances, now);
  return { admitted: false, state, retryAfterSeconds: Math.max(1, Math.ceil(missing / (entry.budget.rate / instances))) };
}

/** A slice: small enough that N instances' slices are a small part of the budget. */
export function slice(budget: Budget, instances: number): number {
  return Math.max(1, budget.capacity / (4 * instances));
}

/** How far ahead of its lease an instance may run between two answers: N instances at once, one budget. */
export function ahead(budget: Budget, instances: number): number {
  return Math.max(slice(budget, instances), budget.capacity / instances);
}

/** What to ask the store for this bucket: the next slice, or (idle, or shutting down) to give the lease back. */
export function leaseRequest(key: string, entry: Entry, instances: number, giveBack: boolean): LeaseRequest {
  const want = giveBack ? 0 : Math.max(0, slice(entry.budget, instances) - entry.lease);
  const settle = giveBack ? entry.owed - entry.lease : entry.owed;
  return { key, settle, want, capacity: entry.budget.capacity, rate: entry.budget.rate };
}

/**
 * Applies the store's answer to what was spent meanwhile; false: the entry can be forgotten.
 * `gaveBack` says what the request was: a request wanting nothing (its lease already a full slice) is not a give-back.
 */
export function applyGrant(
  entry: Entry,
  request: LeaseRequest,
  grant: LeaseGrant,
  instances: number,
  answeredAt: number,
  gaveBack: boolean,
): boolean {
  // Idle, and nothing spent since the request: its lease is back, nothing is owed.
  if (gaveBack && request.settle === entry.owed - entry.lease) return false;
  // What was spent from a lease given back meanwhile is owed now.
  entry.owed -= gaveBack ? request.settle + entry.lease : request.settle;
  entry.lease = (gaveBack ? 0 : entry.lease) + grant.granted;
  entry.seen = grant.available;
  entry.seenAt = answeredAt;
  const short = slice(entry.budget, instances) - grant.granted;
  entry.nextAskAt = !gaveBack && grant.granted < request.want ? answeredAt + (Math.max(short, 1) / entry.budget.rate) * 1000 : 0;
  return true;
}
