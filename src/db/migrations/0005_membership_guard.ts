import { sql, type Kysely } from 'kysely';
import type { Compatibility } from './compatibility.js';
import { applySqlFiles } from './sql-files.js';

/** expand: The guards refuse direct writes, which no build makes (leave and rejoin are replaced here). */
export const compatibility: Compatibility = 'expand';

/**
 * Direct SQL on the membership tables is either what the boundary functions would do or refused
 * (community_membership_guard.sql, leave_episode_guard.sql); leave and rejoin name the user they
 * write so the guards let them through. The leave history outlives an erased membership row, so a
 * purge still finds the user's boundaries: the foreign key that deleted it with the row goes.
 *
 * Also the LEFT users' index: the cache's start-up count and read, and the backstop's count, scan
 * the LEFT users rather than the whole table (rejoined users included).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    ALTER TABLE leave_episode DROP CONSTRAINT leave_episode_user_id_fkey;
    CREATE INDEX community_membership_left_idx ON community_membership (user_id) WHERE status = 'LEFT';
  `.execute(db);
  await applySqlFiles(db, [
    ['leave_community_layer', 3],
    ['rejoin_community_layer', 3],
    ['community_membership_guard', 1],
    ['leave_episode_guard', 1],
  ]);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    DROP TRIGGER leave_episode_guard_truncate ON leave_episode;
    DROP TRIGGER leave_episode_guard ON leave_episode;
    DROP TRIGGER community_membership_guard_truncate ON community_membership;
    DROP TRIGGER community_membership_guard ON community_membership;
    DROP FUNCTION leave_episode_guard, community_membership_guard;
    DROP INDEX community_membership_left_idx;
  `.execute(db);
  await applySqlFiles(db, [
    ['leave_community_layer', 2],
    ['rejoin_community_layer', 2],
  ]);
  // Fails while the history of an erased membership row exists: it would have to go with the row.
  await sql`
    ALTER TABLE leave_episode ADD CONSTRAINT leave_episode_user_id_fkey
      FOREIGN KEY (user_id) REFERENCES community_membership (user_id) ON DELETE CASCADE;
  `.execute(db);
}
