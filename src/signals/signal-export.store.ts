import pg from 'pg';

/**
 * The signal store's reads for a user's export (src/export), as `COPY … TO STDOUT` statements the
 * export runs inside its snapshot: PostgreSQL builds each record as one NDJSON line (`row_to_json`:
 * the text JSON.stringify gives for these values, which test/data-export.test.ts checks byte for
 * byte) and streams them, so Node never holds a row. Lines and fields are docs/api.md "Your data to
 * take away".
 *
 * COPY's text format would escape the backslashes of JSON; CSV passes a value verbatim unless it
 * holds the quote, the delimiter or a line break, and JSON text holds none of these: it escapes every
 * control character (U+0001, U+0002, line breaks). Each line ends in "\n".
 */
const LINES = `WITH (FORMAT csv, QUOTE E'\\x01', DELIMITER E'\\x02')`;

/** COPY takes no parameters: the user id goes in as a quoted literal, cast to its column's type. */
const user = (userId: string) => `${pg.escapeLiteral(userId)}::u64`;

/** The user's signals, forwarded or not, by (at_ns, id), on signal_user_at_idx. */
export function signalLinesCopy(userId: string): string {
  return `COPY (SELECT row_to_json(r)::text FROM signal p, LATERAL (SELECT 'signal' AS type, p.id::text AS "signalId",
            p.item_id AS "itemId", p.kind, p.weight_micros::text AS "weightMicros",
            to_char(p.occurred_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS "occurredAt", p.surface,
            p.cohort_ids AS "cohortIds", p.at_ns::text AS "atNs", p.forwarded, p.event_id AS "eventId") r
          WHERE p.user_id = ${user(userId)} ORDER BY p.at_ns, p.id) TO STDOUT ${LINES}`;
}

/**
 * The user's community entries still in the aggregates, by (at_ns, signal_id): the first half of
 * the ledger view `contribution` (forwarded signals above every purge's cursor, migration 0015),
 * read from `signal` itself, on signal_user_at_idx.
 */
export function communityContributionLinesCopy(userId: string): string {
  return `COPY (SELECT row_to_json(r)::text FROM signal p, LATERAL (SELECT ${contribution('p.id', 'NULL::text')}) r
          WHERE p.user_id = ${user(userId)} AND p.forwarded
            AND NOT EXISTS (SELECT 1 FROM community_purge c
                             WHERE c.user_id = p.user_id AND (p.at_ns, p.id) <= (c.cursor_at_ns, c.cursor_signal_id))
          ORDER BY p.at_ns, p.id) TO STDOUT ${LINES}`;
}

/** The user's cohort entries (cohort_contribution, the view's second half), by (at_ns, signal_id, cohort_id). */
export function cohortContributionLinesCopy(userId: string): string {
  return `COPY (SELECT row_to_json(r)::text FROM cohort_contribution p, LATERAL (SELECT ${contribution('p.signal_id', 'p.cohort_id')}) r
          WHERE p.user_id = ${user(userId)} ORDER BY p.at_ns, p.signal_id, p.cohort_id) TO STDOUT ${LINES}`;
}

function contribution(signalId: string, cohortId: string): string {
  return `'contribution' AS type, ${signalId}::text AS "signalId", ${cohortId} AS "cohortId", p.item_id AS "itemId",
          p.weight_micros::text AS "weightMicros", p.at_ns::text AS "atNs"`;
}
