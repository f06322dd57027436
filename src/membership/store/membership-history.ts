import { sql, type Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import { gatedSignals } from './gated-signals.js';
import { toLeaveEpisode, toMembership, type LeaveEpisode, type Membership } from './membership-records.js';

/** Membership store: one user's state and the pages of their leaves. */

export async function findMembership(db: Kysely<Database>, userId: string): Promise<Membership> {
  const row = await db
    .selectFrom('community_membership')
    .selectAll()
    .where('user_id', '=', userId)
    .executeTakeFirst();
  return toMembership(userId, row);
}

/** A page of a user's leaves: the `last` ones that began before `before` (all when null). */
export interface LeavePage {
  last: number;
  /** A `leftAtNs`: only older leaves. */
  before: string | null;
}

/** The page's leaves, oldest first, with what the gate held back from each. */
export async function listLeaveEpisodes(db: Kysely<Database>, userId: string, page: LeavePage): Promise<LeaveEpisode[]> {
  const rows = await db
    .selectFrom('leave_episode as e')
    .select(['e.left_at_ns', 'e.rejoined_at_ns', gatedSignals.as('gated_signals')])
    .where('e.user_id', '=', userId)
    .$if(page.before !== null, (qb) => qb.where('e.left_at_ns', '<', page.before!))
    .orderBy('e.left_at_ns', 'desc')
    .limit(page.last)
    .execute();
  return rows.reverse().map(toLeaveEpisode);
}

export async function countLeaves(db: Kysely<Database>, userId: string): Promise<number> {
  const row = await db
    .selectFrom('leave_episode')
    .select(sql<string>`count(*)`.as('n'))
    .where('user_id', '=', userId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}
