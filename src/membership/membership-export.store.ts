import { sql, type Kysely } from 'kysely';
import type { Database } from '../db/schema.js';

/**
 * The membership store's reads for a user's export (src/export), run inside the export's one
 * REPEATABLE READ READ ONLY snapshot: the user's standing, and their leave episodes in keyset pages.
 */

/** The snapshot's instant (database clock, ns) and the user's standing in it. */
export async function exportHead(trx: Kysely<Database>, userId: string) {
  const { rows } = await sql<{ now_ns: string; status: string | null; left_at_ns: string | null; rejoined_at_ns: string | null }>`
    SELECT now_ns()::text AS now_ns, m.status, m.left_at_ns::text AS left_at_ns, m.rejoined_at_ns::text AS rejoined_at_ns
      FROM (SELECT 1) AS one LEFT JOIN community_membership m ON m.user_id = ${userId}::numeric`.execute(trx);
  return rows[0]!;
}

export type LeaveEpisodeRow = Awaited<ReturnType<typeof leaveEpisodesAfter>>[number];

/** The user's leave episodes, oldest first, after the one that began at `afterLeftAtNs`. */
export function leaveEpisodesAfter(trx: Kysely<Database>, userId: string, afterLeftAtNs: string, limit: number) {
  return trx
    .selectFrom('leave_episode')
    .select([
      'left_at_ns',
      'rejoined_at_ns',
      'left_reason',
      'left_reason_text',
      'left_policy_version',
      'rejoined_reason',
      'rejoined_reason_text',
      'rejoined_policy_version',
    ])
    .where('user_id', '=', userId)
    .where('left_at_ns', '>', afterLeftAtNs)
    .orderBy('left_at_ns')
    .limit(limit)
    .execute();
}
