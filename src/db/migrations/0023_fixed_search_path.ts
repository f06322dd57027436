import { sql, type Kysely } from 'kysely';
import type { Compatibility } from './compatibility.js';
import { applySqlFiles, type SqlFile } from './sql-files.js';

/** expand: every function keeps its signature and its owner, which is the role earlier builds ran as. */
export const compatibility: Compatibility = 'expand';

/**
 * Every function and trigger function gets `SET search_path = public, pg_temp` (but the two
 * one-line helpers community_user_key and community_user_bucket, which stay inlinable and name
 * every operator and type in full instead: see their files), and the five
 * through which the service writes the boundary tables (membership, leave history, signals,
 * contributions, aggregates, purges) become SECURITY DEFINER, run as their owner (the migrating
 * role), with EXECUTE revoked from PUBLIC: the running role holds no write on those tables
 * (src/db/roles/app-privileges.ts). pg_temp last, as PostgreSQL's "Writing SECURITY DEFINER
 * Functions Safely" asks, so no temporary table can shadow one of ours.
 *
 * The schema is written into each file rather than taken with `SET search_path FROM CURRENT`: the
 * file alone then decides it, whoever applies it and from whatever session (the docs' change-a-
 * function procedure runs a file in psql, where FROM CURRENT would capture that session's path,
 * pg_temp first). The service's objects live in `public` (db/schema.sql is its dump).
 */
const FIXED: SqlFile[] = [
  ['now_ns', 2],
  ['community_user_key', 2],
  ['community_user_bucket', 2],
  ['require_read_committed', 2],
  ['lock_community_buckets', 2],
  ['membership_next_version', 2],
  ['community_membership_stamp', 2],
  ['community_membership_guard', 2],
  ['community_membership_purge_guard', 2],
  ['community_membership_notify', 2],
  ['community_purge_notify', 2],
  ['leave_episode_guard', 2],
  ['membership_event_from_membership', 2],
  ['membership_event_from_purge', 2],
  ['fair_share_lease', 2],
  ['verify_community_aggregates', 2],
  ['leave_community_layer', 4],
  ['rejoin_community_layer', 4],
  ['request_community_purge', 3],
  ['run_community_purge_chunk', 4],
  ['ingest_signals', 8],
];

export async function up(db: Kysely<unknown>): Promise<void> {
  await applySqlFiles(db, FIXED);
}

/** The previous versions; CREATE OR REPLACE keeps grants, so EXECUTE goes back to PUBLIC, every function's default. */
export async function down(db: Kysely<unknown>): Promise<void> {
  await applySqlFiles(
    db,
    FIXED.map(([name, version]) => [name, version - 1]),
  );
  await sql`GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA public TO PUBLIC`.execute(db);
}
