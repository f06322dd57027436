import { sql, type Kysely } from 'kysely';
import type { Compatibility } from './compatibility.js';
import { applySqlFiles } from './sql-files.js';

/** expand: A new trigger and its function. */
export const compatibility: Compatibility = 'expand';

/**
 * Purge progress is pushed, not polled: a trigger notifies `community_purge` on every change of a
 * purge (its request, each chunk, its end), so progress streams on every instance re-read a purge
 * only when it moved (src/purge/purge-progress-feed.ts).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await applySqlFiles(db, [['community_purge_notify', 1]]);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    DROP TRIGGER community_purge_notify ON community_purge;
    DROP FUNCTION community_purge_notify();
  `.execute(db);
}
