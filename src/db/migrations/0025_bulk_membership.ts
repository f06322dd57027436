import { sql, type Kysely } from 'kysely';
import type { Compatibility } from './compatibility.js';
import { applySqlFiles } from './sql-files.js';

/** expand: two new functions; nothing an earlier build uses changes. */
export const compatibility: Compatibility = 'expand';

/**
 * Bulk leave and rejoin (docs/api.md, "Bulk leave and rejoin"): one call per lock bucket runs the
 * one-user functions for each of its users in one transaction, a running purge reported per user
 * instead of failing the others. The app role gets EXECUTE with every function (src/db/roles/).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await applySqlFiles(db, [
    ['leave_community_layer_many', 1],
    ['rejoin_community_layer_many', 1],
  ]);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    DROP FUNCTION leave_community_layer_many(u64[], consent_reason, text, text);
    DROP FUNCTION rejoin_community_layer_many(u64[], consent_reason, text, text);
  `.execute(db);
}
