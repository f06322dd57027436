import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { Database } from '../db/schema.js';

/**
 * The signal store's reads for a user's export (src/export), run inside the export's snapshot. Each
 * page comes back as a few strings of NDJSON lines that PostgreSQL builds (`row_to_json`: the text
 * JSON.stringify gives for these values, which test/data-export.test.ts checks byte for byte), so
 * Node allocates a string per chunk instead of an object, a Date and a string per field of every
 * row. Lines and fields are docs/api.md "Your data to take away".
 */

export type SignalKey = readonly [atNs: string, signalId: string];
export type CohortKey = readonly [atNs: string, signalId: string, cohortId: string];

/** A page of records as lines, in chunks of at most LINE_CHUNK records. */
export interface LinePage<Key> {
  records: number;
  /** Each chunk's lines, each line ending in "\n". */
  chunks: { records: number; lines: string }[];
  /** The key of the page's last record, where the next page starts; null for an empty page. */
  last: Key | null;
}

/** Records a chunk: each chunk's string (~250 bytes a line) stays below V8's large-object size (128 KiB). */
const LINE_CHUNK = 250;

/** The user's signals, forwarded or not, by (at_ns, id), on signal_user_at_idx. */
export function signalLines(trx: Kysely<Database>, userId: string, after: SignalKey, limit: number): Promise<LinePage<SignalKey>> {
  return linePage(
    trx,
    sql`SELECT *, row_number() OVER (ORDER BY at_ns, id) AS n FROM signal
         WHERE user_id = ${userId} AND (at_ns, id) > (${after[0]}::bigint, ${after[1]}::bigint) ORDER BY at_ns, id LIMIT ${limit}`,
    sql`'signal' AS type, p.id::text AS "signalId", p.item_id AS "itemId", p.kind, p.weight_micros::text AS "weightMicros",
        to_char(p.occurred_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS "occurredAt", p.surface,
        p.cohort_ids AS "cohortIds", p.at_ns::text AS "atNs", p.forwarded, p.event_id AS "eventId"`,
    sql`p.at_ns::text, p.id::text`,
  );
}

/**
 * The user's community entries still in the aggregates, by (at_ns, signal_id): the first half of
 * the ledger view `contribution` (forwarded signals above every purge's cursor, migration 0015),
 * read from `signal` itself because over the view the planner sorts every remaining entry for a LIMIT.
 */
export function communityContributionLines(
  trx: Kysely<Database>,
  userId: string,
  after: SignalKey,
  limit: number,
): Promise<LinePage<SignalKey>> {
  return linePage(
    trx,
    sql`SELECT s.id AS signal_id, s.item_id, s.weight_micros, s.at_ns, row_number() OVER (ORDER BY s.at_ns, s.id) AS n
          FROM signal s
         WHERE s.user_id = ${userId} AND s.forwarded AND (s.at_ns, s.id) > (${after[0]}::bigint, ${after[1]}::bigint)
           AND NOT EXISTS (SELECT 1 FROM community_purge c
                            WHERE c.user_id = s.user_id AND (s.at_ns, s.id) <= (c.cursor_at_ns, c.cursor_signal_id))
         ORDER BY s.at_ns, s.id LIMIT ${limit}`,
    contributionRecord(sql`NULL::text`),
    sql`p.at_ns::text, p.signal_id::text`,
  );
}

/** The user's cohort entries (cohort_contribution, the view's second half), by (at_ns, signal_id, cohort_id). */
export function cohortContributionLines(
  trx: Kysely<Database>,
  userId: string,
  after: CohortKey,
  limit: number,
): Promise<LinePage<CohortKey>> {
  return linePage(
    trx,
    sql`SELECT *, row_number() OVER (ORDER BY at_ns, signal_id, cohort_id) AS n FROM cohort_contribution
         WHERE user_id = ${userId} AND (at_ns, signal_id, cohort_id) > (${after[0]}::bigint, ${after[1]}::bigint, ${after[2]})
         ORDER BY at_ns, signal_id, cohort_id LIMIT ${limit}`,
    contributionRecord(sql`p.cohort_id`),
    sql`p.at_ns::text, p.signal_id::text, p.cohort_id`,
  );
}

function contributionRecord(cohortId: RawBuilder<unknown>) {
  return sql`'contribution' AS type, p.signal_id::text AS "signalId", ${cohortId} AS "cohortId", p.item_id AS "itemId",
             p.weight_micros::text AS "weightMicros", p.at_ns::text AS "atNs"`;
}

/** One page: `rows` numbered `n` in order, `record` the select list of a line over them (`p`), `key` a row's key. */
async function linePage<Key>(
  trx: Kysely<Database>,
  rows: RawBuilder<unknown>,
  record: RawBuilder<unknown>,
  key: RawBuilder<unknown>,
): Promise<LinePage<Key>> {
  const result = await sql<{ records: number; lines: string; last: Key }>`
    WITH p AS MATERIALIZED (${rows})
    SELECT count(*)::int AS records,
           string_agg(row_to_json(r)::text || E'\n', '' ORDER BY p.n) AS lines,
           (array_agg(json_build_array(${key}) ORDER BY p.n DESC))[1] AS last
      FROM p, LATERAL (SELECT ${record}) AS r
     GROUP BY (p.n - 1) / ${sql.lit(LINE_CHUNK)}
     ORDER BY (p.n - 1) / ${sql.lit(LINE_CHUNK)}`.execute(trx);
  const chunks = result.rows;
  return { records: chunks.reduce((sum, chunk) => sum + chunk.records, 0), chunks, last: chunks.at(-1)?.last ?? null };
}
