/**
 * What the stored signals add up to, as resolvers read it: aggregates, a user's ledger, the ledger
 * check. The signal store answers it (`SignalStoreReads` in signal.store.ts, which the composition
 * root hands resolvers); this file is the contract, so the API names no store.
 */
export interface SignalReads {
  /** Sums the shards of one item's community aggregate. */
  communityAggregate(itemId: string): Promise<ItemAggregate>;
  cohortAggregate(cohortId: string, itemId: string): Promise<ItemAggregate>;
  /** A user's ledger entries oldest first, after `position`, keyset-paginated. */
  contributions(userId: string, after: ContributionPosition | null, limit: number): Promise<Contribution[]>;
  /** Aggregates recomputed from the ledger (one item, or all): every (target, item) that differs. */
  verifyAggregates(itemId: string | null): Promise<AggregateMismatch[]>;
}

export interface ItemAggregate {
  itemId: string;
  /** Decimal strings: exact at any size. */
  signalTotal: string;
  weightMicros: string;
}

export interface Contribution {
  signalId: string;
  /** "community" or the cohort id. */
  target: string;
  cohortId: string | null;
  itemId: string;
  weight: number;
  atNs: string;
}

/** Where a page ends: contributions are ordered by (at_ns, signal_id, cohort id or '' for community). */
export interface ContributionPosition {
  atNs: string;
  signalId: string;
  cohortId: string;
}

export interface AggregateMismatch {
  target: string;
  cohortId: string | null;
  itemId: string;
  ledgerCount: number;
  aggregateCount: number;
  ledgerWeight: number;
  aggregateWeight: number;
}
