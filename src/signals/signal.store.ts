import { sql, type Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import { timestamptzText } from '../time/rfc3339.js';
import { WEIGHT_SCALE, type ValidSignal } from './signal-input.js';
import type { AggregateMismatch, Contribution, ContributionPosition, ItemAggregate, SignalReads } from './signal-reads.js';

/**
 * The one owner of the signal tables: signals, the contributions ledger (forwarded signals and
 * cohort_contribution) and the aggregates, and the check of one against the other. Writes go
 * through `ingest_signals` (src/db/sql/); a purge removes ledger entries only inside its own
 * functions, which purge.store.ts calls.
 */

/** A group of signals to store, as parallel arrays (index i describes signals[i]). */
export interface SignalGroup {
  signals: readonly ValidSignal[];
  /** The in-memory gate's answers: false when the cache knows the user LEFT. */
  gateOpen: readonly boolean[];
  /** Idempotency keys, unique per user (null: none, the signal is always stored anew). */
  eventIds: readonly (string | null)[];
}

export interface StoredSignal {
  signalId: string;
  forwarded: boolean;
  cohortsAttributed: number;
  /** This user's signal with the same event id was already stored; the outcome above is that one's. */
  duplicate: boolean;
}

/**
 * Stores a group of signals and fans out the forwardable ones: one statement, one transaction.
 * A signal whose (user, event id) is already stored, or appears earlier in the group, is not
 * stored again: it gets the stored signal's outcome with `duplicate` set.
 */
export async function ingestSignals(db: Kysely<Database>, { signals, gateOpen, eventIds }: SignalGroup): Promise<StoredSignal[]> {
  // Each column is filled in place, one pass over the group: these arrays are the statement's parameters.
  const n = signals.length;
  const userIds = new Array<string>(n);
  const itemIds = new Array<string>(n);
  const kinds = new Array<string>(n);
  const weights = new Array<number>(n);
  const occurredAt = new Array<string | null>(n);
  const surfaces = new Array<string | null>(n);
  const cohortOrds: number[] = [];
  const cohortIds: string[] = [];
  for (let i = 0; i < n; i++) {
    const signal = signals[i]!;
    userIds[i] = signal.userId;
    itemIds[i] = signal.itemId;
    kinds[i] = signal.kind;
    weights[i] = signal.weightMicros;
    occurredAt[i] = signal.occurredAt === null ? null : timestamptzText(signal.occurredAt);
    surfaces[i] = signal.surface;
    for (const cohortId of signal.cohortIds) {
      cohortOrds.push(i + 1);
      cohortIds.push(cohortId);
    }
  }
  const { rows } = await sql<{ r_signal_id: string; r_forwarded: boolean; r_cohorts_attributed: number; r_duplicate: boolean }>`
    SELECT * FROM ingest_signals(
      ${userIds}::text[], ${itemIds}::text[], ${kinds}::signal_kind[],
      ${weights}::bigint[], ${occurredAt}::timestamptz[], ${surfaces}::text[],
      ${gateOpen}::boolean[], ${cohortOrds}::int[], ${cohortIds}::text[], ${eventIds}::text[])
  `.execute(db);
  return rows.map((row) => ({
    signalId: row.r_signal_id,
    forwarded: row.r_forwarded,
    cohortsAttributed: row.r_cohorts_attributed,
    duplicate: row.r_duplicate,
  }));
}

/** The reads of the signal tables resolvers make (the contract is in signal-reads.ts). */
export class SignalStoreReads implements SignalReads {
  constructor(private readonly db: Kysely<Database>) {}

  async communityAggregate(itemId: string): Promise<ItemAggregate> {
    const row = await this.db
      .selectFrom('community_item_aggregate')
      .select([sql<string>`coalesce(sum(signal_count), 0)`.as('count'), sql<string>`coalesce(sum(weight_micros_sum), 0)`.as('weight')])
      .where('item_id', '=', itemId)
      .executeTakeFirstOrThrow();
    return toAggregate(itemId, row);
  }

  async cohortAggregate(cohortId: string, itemId: string): Promise<ItemAggregate> {
    const row = await this.db
      .selectFrom('cohort_item_aggregate')
      .select([sql<string>`coalesce(sum(signal_count), 0)`.as('count'), sql<string>`coalesce(sum(weight_micros_sum), 0)`.as('weight')])
      .where('cohort_id', '=', cohortId)
      .where('item_id', '=', itemId)
      .executeTakeFirstOrThrow();
    return toAggregate(itemId, row);
  }

  async contributions(userId: string, after: ContributionPosition | null, limit: number): Promise<Contribution[]> {
    const target = sql<string>`coalesce(cohort_id, '')`;
    let query = this.db
      .selectFrom('contribution')
      .select(['signal_id', 'cohort_id', 'item_id', 'weight_micros', 'at_ns'])
      .where('user_id', '=', userId)
      .orderBy('at_ns')
      .orderBy('signal_id')
      .orderBy(target)
      .limit(limit);
    if (after) {
      query = query.where((eb) =>
        eb(eb.tuple(eb.ref('at_ns'), eb.ref('signal_id'), target), '>', eb.tuple(after.atNs, after.signalId, after.cohortId)),
      );
    }
    const rows = await query.execute();
    return rows.map((row) => ({
      signalId: row.signal_id,
      target: row.cohort_id ?? 'community',
      cohortId: row.cohort_id,
      itemId: row.item_id,
      weight: Number(row.weight_micros) / WEIGHT_SCALE,
      atNs: row.at_ns,
    }));
  }

  async verifyAggregates(itemId: string | null): Promise<AggregateMismatch[]> {
    const { rows } = await sql<{
      target: string;
      item_id: string;
      ledger_count: string;
      aggregate_count: string;
      ledger_weight: string;
      aggregate_weight: string;
    }>`SELECT * FROM verify_community_aggregates(${itemId}::text)`.execute(this.db);
    return rows.map((row) => ({
      target: row.target === '' ? 'community' : row.target,
      cohortId: row.target === '' ? null : row.target,
      itemId: row.item_id,
      ledgerCount: Number(row.ledger_count),
      aggregateCount: Number(row.aggregate_count),
      ledgerWeight: Number(row.ledger_weight) / WEIGHT_SCALE,
      aggregateWeight: Number(row.aggregate_weight) / WEIGHT_SCALE,
    }));
  }
}

function toAggregate(itemId: string, row: { count: string; weight: string }): ItemAggregate {
  return { itemId, signalTotal: row.count, weightMicros: row.weight };
}
