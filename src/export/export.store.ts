import { sql, type Kysely } from 'kysely';
import type { Database } from '../db/schema.js';

/**
 * The reads of a user's export (src/export): every query here runs inside the export's one
 * REPEATABLE READ READ ONLY transaction, so all of them see one snapshot. Read-only: the tables
 * keep their owners for every write. Each list is a keyset page in the export's fixed order, on the
 * indexes that already serve the user's reads (signal_user_at_idx, cohort_contribution_user_at_idx).
 */

/** The snapshot's instant (database clock, ns) and the user's standing in it. */
export async function snapshotHead(trx: Kysely<Database>, userId: string) {
  const { rows } = await sql<{ now_ns: string; status: string | null; left_at_ns: string | null; rejoined_at_ns: string | null }>`
    SELECT now_ns()::text AS now_ns, m.status, m.left_at_ns::text AS left_at_ns, m.rejoined_at_ns::text AS rejoined_at_ns
      FROM (SELECT 1) AS one LEFT JOIN community_membership m ON m.user_id = ${userId}::numeric`.execute(trx);
  return rows[0]!;
}

export function leaveEpisodes(trx: Kysely<Database>, userId: string, afterLeftAtNs: string, limit: number) {
  return trx
    .selectFrom('leave_episode')
    .select([
      'left_at_ns',
      'rejoined_at_ns',
      'left_reason',
      'left_reason_text',
      'left_policy_version',
      'rejoined_reason',
      'rejoined_reason_text',
      'rejoined_policy_version',
    ])
    .where('user_id', '=', userId)
    .where('left_at_ns', '>', afterLeftAtNs)
    .orderBy('left_at_ns')
    .limit(limit)
    .execute();
}

export type SignalRow = Awaited<ReturnType<typeof signals>>[number];

/** Oldest first by (at_ns, id). */
export function signals(trx: Kysely<Database>, userId: string, after: readonly [string, string], limit: number) {
  return trx
    .selectFrom('signal')
    .select(['id', 'item_id', 'kind', 'weight_micros', 'occurred_at', 'surface', 'cohort_ids', 'at_ns', 'forwarded', 'event_id'])
    .where('user_id', '=', userId)
    .where((eb) => eb(eb.refTuple('at_ns', 'id'), '>', eb.tuple(after[0], after[1])))
    .orderBy('at_ns')
    .orderBy('id')
    .limit(limit)
    .execute();
}

/** The (at_ns, id) of the user's `limit`-th signal after `after`; undefined when fewer are left. */
export async function signalKeyAhead(trx: Kysely<Database>, userId: string, after: readonly [string, string], limit: number) {
  const row = await trx
    .selectFrom('signal')
    .select(['at_ns', 'id'])
    .where('user_id', '=', userId)
    .where((eb) => eb(eb.refTuple('at_ns', 'id'), '>', eb.tuple(after[0], after[1])))
    .orderBy('at_ns')
    .orderBy('id')
    .offset(limit - 1)
    .limit(1)
    .executeTakeFirst();
  return row && ([row.at_ns, row.id] as const);
}

/**
 * The user's community entries still in the aggregates (the ledger view's cohort-less half) in
 * (after, upTo], by (at_ns, signal_id). Bounded by a range of the user's signals, not a LIMIT: over
 * the view the planner sorts every remaining entry for a LIMIT (a page would cost the whole rest).
 */
export function communityContributions(
  trx: Kysely<Database>,
  userId: string,
  after: readonly [string, string],
  upTo: readonly [string, string] | undefined,
) {
  let query = trx
    .selectFrom('contribution')
    .select(['signal_id', 'cohort_id', 'item_id', 'weight_micros', 'at_ns'])
    .where('user_id', '=', userId)
    .where('cohort_id', 'is', null)
    .where((eb) => eb(eb.refTuple('at_ns', 'signal_id'), '>', eb.tuple(after[0], after[1])));
  if (upTo) query = query.where((eb) => eb(eb.refTuple('at_ns', 'signal_id'), '<=', eb.tuple(upTo[0], upTo[1])));
  return query.orderBy('at_ns').orderBy('signal_id').execute();
}

export type ContributionRow = Awaited<ReturnType<typeof communityContributions>>[number];

/** The user's cohort entries, by (at_ns, signal_id, cohort_id). */
export function cohortContributions(trx: Kysely<Database>, userId: string, after: readonly [string, string, string], limit: number) {
  return trx
    .selectFrom('contribution')
    .select(['signal_id', 'cohort_id', 'item_id', 'weight_micros', 'at_ns'])
    .where('user_id', '=', userId)
    .where('cohort_id', 'is not', null)
    .where((eb) => eb(eb.refTuple('at_ns', 'signal_id', 'cohort_id'), '>', eb.tuple(after[0], after[1], after[2])))
    .orderBy('at_ns')
    .orderBy('signal_id')
    .orderBy('cohort_id')
    .limit(limit)
    .execute();
}

/** Every recorded change of every processor's state for the user's purges, by (purge, processor, change). */
export function acknowledgements(trx: Kysely<Database>, userId: string, afterId: string, limit: number) {
  return trx
    .selectFrom('purge_acknowledgement_change as c')
    .innerJoin('community_purge as p', 'p.id', 'c.purge_id')
    .innerJoin('downstream_processor as d', 'd.id', 'c.processor_id')
    .select(['c.id', 'c.purge_id', 'd.subject', 'd.name', 'c.state', 'c.reason', 'c.acknowledged_at'])
    .where('p.user_id', '=', userId)
    .where('c.id', '>', afterId)
    .orderBy('c.id')
    .limit(limit)
    .execute();
}
