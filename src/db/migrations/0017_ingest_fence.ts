import { sql, type Kysely } from 'kysely';
import type { Compatibility } from './compatibility.js';
import { applySqlFiles } from './sql-files.js';

/** expand: An index; ingest_signals replaced with the same signature. */
export const compatibility: Compatibility = 'expand';

/**
 * ingest_signals v5. A signal of a user without a membership row (erased while ACTIVE) is stamped
 * no lower than their last rejoin in the leave history, as leave_community_layer fences its
 * boundary: with the clock stepped back past an earlier purge's boundary, a new contribution would
 * otherwise fall below that purge's watermark (the gap migration 0015 names). The history is read
 * only while the clock is behind everyone's newest rejoin, found by a new index.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`CREATE INDEX leave_episode_rejoined_idx ON leave_episode (rejoined_at_ns) WHERE rejoined_at_ns IS NOT NULL`.execute(db);
  await applySqlFiles(db, [['ingest_signals', 5]]);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await applySqlFiles(db, [['ingest_signals', 4]]);
  await sql`DROP INDEX leave_episode_rejoined_idx`.execute(db);
}
