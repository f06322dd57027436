import { sql, type Kysely } from 'kysely';
import type { Compatibility } from './compatibility.js';
import { applySqlFiles } from './sql-files.js';

/** expand: Same signatures; the dropped lock functions were called only by the functions replaced here. */
export const compatibility: Compatibility = 'expand';

/**
 * The boundary guard locks 64 hashed user buckets instead of one advisory lock per user, so a full
 * 1000-user group needs at most 64 lock slots and runs on PostgreSQL's default
 * max_locks_per_transaction. The guarantee is unchanged: a leave still excludes every group that
 * holds its user's bucket.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await applySqlFiles(db, [
    ['community_user_bucket', 1],
    ['lock_community_buckets', 1],
    ['leave_community_layer', 2],
    ['rejoin_community_layer', 2],
    ['ingest_signals', 2],
  ]);
  await sql`DROP FUNCTION community_user_lock_hi, community_user_lock_lo`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await applySqlFiles(db, [
    ['community_user_lock_hi', 1],
    ['community_user_lock_lo', 1],
    ['leave_community_layer', 1],
    ['rejoin_community_layer', 1],
    ['ingest_signals', 1],
  ]);
  await sql`DROP FUNCTION lock_community_buckets, community_user_bucket`.execute(db);
}
