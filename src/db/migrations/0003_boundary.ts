import { sql, type Kysely } from 'kysely';
import type { Compatibility } from './compatibility.js';
import { applySqlFiles } from './sql-files.js';

/** expand: New functions only. */
export const compatibility: Compatibility = 'expand';

/**
 * The boundary between a user's shared contributions and their leaves, enforced in the database
 * (each function's file under src/db/sql/ says how).
 *
 * Lock order: leave and rejoin take the user's advisory lock exclusively; signal ingestion takes it
 * shared (in key order, so batches never deadlock against each other through a waiting leave).
 * Every timestamp is taken after the lock is granted, and the state is read in a later statement,
 * whose READ COMMITTED snapshot includes whatever the previous lock holder committed. So no
 * contribution falls inside [left_at_ns, rejoined_at_ns), and nothing sent after a leave returned
 * is forwarded, whatever any in-memory cache believes.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await applySqlFiles(db, [
    ['require_read_committed', 1],
    ['leave_community_layer', 1],
    ['rejoin_community_layer', 1],
    ['ingest_signals', 1],
  ]);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    DROP FUNCTION ingest_signals, rejoin_community_layer, leave_community_layer, require_read_committed;
  `.execute(db);
}
