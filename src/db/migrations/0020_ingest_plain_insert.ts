import { sql, type Kysely } from 'kysely';
import type { Compatibility } from './compatibility.js';
import { applySqlFiles } from './sql-files.js';

/** expand: A new function; ingest_signals replaced with the same signature. */
export const compatibility: Compatibility = 'expand';

/**
 * ingest_signals v6: a group is first stored with a plain insert, which signal_user_event_idx
 * checks as it goes; only a group with a duplicate event id is stored again by
 * ingest_signals_deduplicating (v5's ON CONFLICT statement under its own name).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await applySqlFiles(db, [
    ['ingest_signals_deduplicating', 1],
    ['ingest_signals', 6],
  ]);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await applySqlFiles(db, [['ingest_signals', 5]]);
  await sql`DROP FUNCTION ingest_signals_deduplicating(text[], text[], signal_kind[], bigint[], timestamptz[], text[], boolean[], int[], text[], text[])`.execute(
    db,
  );
}
