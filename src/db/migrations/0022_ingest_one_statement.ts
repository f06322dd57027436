import { sql, type Kysely } from 'kysely';
import type { Compatibility } from './compatibility.js';
import { applySqlFiles } from './sql-files.js';

/** expand: ingest_signals keeps its signature; the dropped ingest_signals_deduplicating was called only by the ingest_signals v6 replaced here, never by a build. */
export const compatibility: Compatibility = 'expand';

/**
 * ingest_signals v7: the plain and the deduplicating paths are one statement, run again with
 * duplicates skipped after the plain insert met one; ingest_signals_deduplicating, which repeated
 * that statement but for its ON CONFLICT, is dropped.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await applySqlFiles(db, [['ingest_signals', 7]]);
  await sql`DROP FUNCTION ingest_signals_deduplicating(text[], text[], signal_kind[], bigint[], timestamptz[], text[], boolean[], int[], text[], text[])`.execute(
    db,
  );
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await applySqlFiles(db, [
    ['ingest_signals_deduplicating', 1],
    ['ingest_signals', 6],
  ]);
}
