import { sql, type Kysely } from 'kysely';
import type { Compatibility } from './compatibility.js';
import { applySqlFiles } from './sql-files.js';

/**
 * Purged ranges are marked by their boundary, not per row: a purge chunk no longer rewrites each
 * purged signal (`signal.purge_id`, an UPDATE of the row and its index entries) but only moves
 * the purge's cursor. The cursor is the purge's watermark: the `contribution` view leaves out a
 * user's forwarded signals at or below (in (at_ns, id) order) the cursor of any of their purges. A
 * running purge's cursor is its last committed chunk's last signal; a finished purge's is
 * (boundary_ns - 1, max), i.e. every signal with at_ns below the boundary (checked below).
 *
 * Exact because a user's forwarded signals after a rejoin are stamped at or above the rejoin
 * (ingest_signals: at least the row's rejoined_at_ns), which is above the leave that bounded the
 * purge, and no purge runs while its user can be forwarded (community_membership_purge_guard): a
 * watermark never covers a later contribution. A signal at the boundary's nanosecond is not below
 * it and stays. One way around it remains: a membership row erased after the rejoin leaves
 * ingest_signals only the clock, so a database clock stepped back past the boundary would stamp a
 * new contribution below it (the fence for that belongs in ingest_signals, as leave has it).
 *
 * Rows already marked: finished purges' cursors move to their boundary, then the migration
 * checks that the watermarks hide exactly the marked signals (and refuses to go on otherwise)
 * before dropping the column.
 */
const WATERMARK = sql`
  NOT EXISTS (SELECT 1 FROM community_purge p
               WHERE p.user_id = s.user_id AND (s.at_ns, s.id) <= (p.cursor_at_ns, p.cursor_signal_id))`;

/** contract: drops signal.purge_id, a column the builds since 0007 have in their typed schema (src/db/schema.ts). */
export const compatibility: Compatibility = 'contract';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    ALTER TABLE community_purge DISABLE TRIGGER community_purge_notify;
    UPDATE community_purge SET cursor_at_ns = boundary_ns - 1, cursor_signal_id = 9223372036854775807
     WHERE status = 'FINISHED';
    ALTER TABLE community_purge ENABLE TRIGGER community_purge_notify;
    ALTER TABLE community_purge ADD CONSTRAINT finished_at_boundary
      CHECK (status <> 'FINISHED' OR (cursor_at_ns = boundary_ns - 1 AND cursor_signal_id = 9223372036854775807));
  `.execute(db);
  const { rows } = await sql<{ n: string }>`
    SELECT count(*) AS n FROM signal s
     WHERE s.forwarded AND s.user_id IN (SELECT p.user_id FROM community_purge p)
       AND (s.purge_id IS NULL) IS DISTINCT FROM (${WATERMARK})`.execute(db);
  if (Number(rows[0]!.n) > 0) {
    throw new Error(`0015: ${rows[0]!.n} purged signals disagree with their purges' cursors; the purge_id marks are kept`);
  }
  await sql`
    CREATE OR REPLACE VIEW contribution AS
      SELECT s.user_id, s.id AS signal_id, NULL::text AS cohort_id, s.item_id, s.weight_micros, s.at_ns
        FROM signal s WHERE s.forwarded AND ${WATERMARK}
      UNION ALL
      SELECT c.user_id, c.signal_id, c.cohort_id, c.item_id, c.weight_micros, c.at_ns
        FROM cohort_contribution c;
    ALTER TABLE signal DROP COLUMN purge_id;
  `.execute(db);
  await applySqlFiles(db, [
    ['request_community_purge', 2],
    ['run_community_purge_chunk', 3],
  ]);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    ALTER TABLE signal ADD COLUMN purge_id bigint;
    UPDATE signal s SET purge_id = p.id FROM community_purge p
     WHERE p.user_id = s.user_id AND s.forwarded AND s.at_ns >= p.from_ns
       AND (s.at_ns, s.id) <= (p.cursor_at_ns, p.cursor_signal_id);
    CREATE OR REPLACE VIEW contribution AS
      SELECT s.user_id, s.id AS signal_id, NULL::text AS cohort_id, s.item_id, s.weight_micros, s.at_ns
        FROM signal s WHERE s.forwarded AND s.purge_id IS NULL
      UNION ALL
      SELECT c.user_id, c.signal_id, c.cohort_id, c.item_id, c.weight_micros, c.at_ns
        FROM cohort_contribution c;
    ALTER TABLE community_purge DROP CONSTRAINT finished_at_boundary;
  `.execute(db);
  await applySqlFiles(db, [
    ['request_community_purge', 1],
    ['run_community_purge_chunk', 2],
  ]);
}
