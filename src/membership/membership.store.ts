import { sql, type Kysely } from 'kysely';
import type { Database, MembershipRow, MembershipStatus } from '../db/schema.js';
import { INT8_MAX } from '../ids/int8.js';

/**
 * The membership store (this file and the other `membership-*.store.ts` beside it) is the one owner
 * of the membership tables (community_membership, leave_episode, membership_clock, membership_event):
 * every query on them is in these files, the boundary functions they call live in src/db/sql/.
 * This one: the records it returns, one user's state and the pages of their leaves, the two writes.
 */

export interface Membership {
  userId: string;
  status: MembershipStatus;
  /** The current boundary (ns since the epoch, decimal); null while ACTIVE. */
  leftAtNs: string | null;
  /** The membership version of this state; null for a user who never left. */
  version: string | null;
}

export interface LeaveEpisode {
  leftAtNs: string;
  rejoinedAtNs: string | null;
  /** Signals the gate held back from this leave until the next one (decimal: a count can outgrow 2^53). */
  gatedSignals: string;
}

export interface MembershipWrite {
  membership: Membership;
  /** False when the call found the user already in the requested state. */
  changed: boolean;
}

export function toMembership(userId: string, row: MembershipRow | undefined): Membership {
  // A user with no row never left: ACTIVE.
  if (!row) return { userId, status: 'ACTIVE', leftAtNs: null, version: null };
  return { userId, status: row.status, leftAtNs: row.left_at_ns, version: row.version };
}

export function toLeaveEpisode(row: { left_at_ns: string; rejoined_at_ns: string | null; gated_signals: string | null }): LeaveEpisode {
  return { leftAtNs: row.left_at_ns, rejoinedAtNs: row.rejoined_at_ns, gatedSignals: row.gated_signals ?? '0' };
}

/**
 * Signals held back from leave `e` until the user's next leave (the gated-signals index; the next
 * leave through the primary key), so a page costs the same however long the history is. Selected
 * beside `leave_episode as e`.
 */
export const gatedSignals = sql<string>`(
  SELECT count(*) FROM signal s
   WHERE s.user_id = e.user_id AND NOT s.forwarded AND s.at_ns >= e.left_at_ns
     AND s.at_ns < coalesce(
       (SELECT min(n.left_at_ns) FROM leave_episode n WHERE n.user_id = e.user_id AND n.left_at_ns > e.left_at_ns),
       ${sql.lit(INT8_MAX.toString())})
)`;

export async function findMembership(db: Kysely<Database>, userId: string): Promise<Membership> {
  const row = await db.selectFrom('community_membership').selectAll().where('user_id', '=', userId).executeTakeFirst();
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

/** What both boundary functions return. */
interface ChangeRow {
  changed: boolean;
  status: MembershipStatus;
  left_at_ns: string | null;
  version: string | null;
}

/** Leaving twice returns the existing record: the boundary never moves. */
export async function leave(db: Kysely<Database>, userId: string): Promise<MembershipWrite> {
  const { rows } = await sql<ChangeRow>`SELECT * FROM leave_community_layer(${userId})`.execute(db);
  return toChange(userId, rows[0]!);
}

export async function rejoin(db: Kysely<Database>, userId: string): Promise<MembershipWrite> {
  const { rows } = await sql<ChangeRow>`SELECT * FROM rejoin_community_layer(${userId})`.execute(db);
  return toChange(userId, rows[0]!);
}

function toChange(userId: string, row: ChangeRow): MembershipWrite {
  return {
    changed: row.changed,
    membership: { userId, status: row.status, leftAtNs: row.left_at_ns, version: row.version },
  };
}
