import { sql, type Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import { EPISODE_COLUMNS, gatedSignals, toLeaveEpisode, toMembership, type LeaveEpisode, type Membership } from './membership.store.js';

/** Membership store: the states subscriptions share, read for many watched users at once. */

/** A user's state with the newest page of their history, as subscriptions share it. */
export interface MembershipState {
  membership: Membership;
  /** The newest leaves, oldest first (at most the page size asked for). */
  recentLeaves: LeaveEpisode[];
  leaveCount: number;
}

/** A watched user and the version of the state already held for them. */
export interface WatchedVersion {
  userId: string;
  /** null: the user had no row; undefined: nothing held yet (always read). */
  version: string | null | undefined;
}

/**
 * One statement for any number of watched users: the state, newest `recentLeaves` leaves and
 * leave count of each whose version differs from the one held; unchanged users cost an index probe.
 */
export async function readChangedStates(
  db: Kysely<Database>,
  watched: readonly WatchedVersion[],
  recentLeaves: number,
): Promise<MembershipState[]> {
  if (watched.length === 0) return [];
  // -1 is no version at all, so a user with nothing held is always "changed".
  const held = watched.map((user) => (user.version === undefined ? '-1' : user.version));
  const rows = await db
    .selectFrom(
      sql<{ user_id: string; held: string | null }>`unnest(${watched.map((user) => user.userId)}::numeric[], ${held}::int8[])`.as<'w'>(
        sql`w(user_id, held)`,
      ),
    )
    .leftJoin('community_membership as m', 'm.user_id', 'w.user_id')
    .leftJoinLateral(
      (eb) =>
        eb
          .selectFrom('leave_episode as e')
          .select([...EPISODE_COLUMNS, gatedSignals.as('gated_signals')])
          .whereRef('e.user_id', '=', 'w.user_id')
          .orderBy('e.left_at_ns', 'desc')
          .limit(recentLeaves)
          .as('e'),
      (join) => join.onTrue(),
    )
    .select(['w.user_id', 'm.status', 'm.left_at_ns as current_left_at_ns', 'm.version', ...EPISODE_COLUMNS, 'e.gated_signals'])
    .select(sql<string>`(SELECT count(*) FROM leave_episode c WHERE c.user_id = w.user_id)`.as('leave_count'))
    .where(sql<boolean>`m.version IS DISTINCT FROM w.held`)
    .orderBy('w.user_id')
    .orderBy('e.left_at_ns')
    .execute();
  const states = new Map<string, MembershipState>();
  for (const row of rows) {
    let state = states.get(row.user_id);
    if (!state) {
      const membership =
        row.status === null
          ? toMembership(row.user_id, undefined)
          : { userId: row.user_id, status: row.status, leftAtNs: row.current_left_at_ns, version: row.version };
      state = { membership, recentLeaves: [], leaveCount: Number(row.leave_count) };
      states.set(row.user_id, state);
    }
    if (row.left_at_ns !== null) {
      state.recentLeaves.push(toLeaveEpisode({ ...row, left_at_ns: row.left_at_ns }));
    }
  }
  return [...states.values()];
}
