import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import {
  cohortItemAggregate,
  communityItemAggregate,
  listContributions,
  verifyAggregates,
  type AggregateMismatch,
  type Contribution,
  type ContributionPosition,
  type ItemAggregate,
} from './signal.store.js';

export type { AggregateMismatch, Contribution, ContributionPosition, ItemAggregate } from './signal.store.js';

/** What the stored signals add up to, as resolvers read it: aggregates, a user's ledger, the ledger check. */
export class SignalReads {
  constructor(private readonly db: Kysely<Database>) {}

  communityAggregate(itemId: string): Promise<ItemAggregate> {
    return communityItemAggregate(this.db, itemId);
  }

  cohortAggregate(cohortId: string, itemId: string): Promise<ItemAggregate> {
    return cohortItemAggregate(this.db, cohortId, itemId);
  }

  /** A user's ledger entries oldest first, after `position`. */
  contributions(userId: string, after: ContributionPosition | null, limit: number): Promise<Contribution[]> {
    return listContributions(this.db, userId, after, limit);
  }

  /** Aggregates recomputed from the ledger (one item, or all): every one that differs. */
  verifyAggregates(itemId: string | null): Promise<AggregateMismatch[]> {
    return verifyAggregates(this.db, itemId);
  }
}
