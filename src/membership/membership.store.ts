import { sql, type Kysely, type Selectable } from 'kysely';
import type { Database, LeaveEpisodeTable, MembershipRow, MembershipStatus } from '../db/schema.js';
import { INT8_MAX } from '../ids/int8.js';
import { toConsent, type Consent, type ConsentReason } from './consent.js';

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
  /** Why it began, and why it ended; null where nothing was recorded (and while it lasts, for the rejoin). */
  leaveConsent: Consent | null;
  rejoinConsent: Consent | null;
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

/** The episode columns besides the gated signals, selected from `leave_episode as e`. */
export const EPISODE_COLUMNS = [
  'e.left_at_ns',
  'e.rejoined_at_ns',
  'e.left_reason',
  'e.left_reason_text',
  'e.left_policy_version',
  'e.rejoined_reason',
  'e.rejoined_reason_text',
  'e.rejoined_policy_version',
] as const;

type EpisodeRow = Selectable<LeaveEpisodeTable> & { gated_signals: string | null };

export function toLeaveEpisode(row: Omit<EpisodeRow, 'user_id'>): LeaveEpisode {
  return {
    leftAtNs: row.left_at_ns,
    rejoinedAtNs: row.rejoined_at_ns,
    gatedSignals: row.gated_signals ?? '0',
    leaveConsent: toConsent(row.left_reason, row.left_reason_text, row.left_policy_version),
    rejoinConsent: toConsent(row.rejoined_reason, row.rejoined_reason_text, row.rejoined_policy_version),
  };
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
    .select([...EPISODE_COLUMNS, gatedSignals.as('gated_signals')])
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

/** Why the user's leave at `leftAtNs` happened; null for no such leave or none recorded. */
export async function findLeaveConsent(db: Kysely<Database>, userId: string, leftAtNs: string): Promise<Consent | null> {
  const row = await db
    .selectFrom('leave_episode')
    .select(['left_reason', 'left_reason_text', 'left_policy_version'])
    .where('user_id', '=', userId)
    .where('left_at_ns', '=', leftAtNs)
    .executeTakeFirst();
  return row ? toConsent(row.left_reason, row.left_reason_text, row.left_policy_version) : null;
}

/** Whether one of the user's leaves, current or past, was for `reason`. */
export async function hasLeftFor(db: Kysely<Database>, userId: string, reason: ConsentReason): Promise<boolean> {
  const row = await db
    .selectFrom('leave_episode')
    .select(sql<boolean>`true`.as('found'))
    .where('user_id', '=', userId)
    .where('left_reason', '=', reason)
    .limit(1)
    .executeTakeFirst();
  return row !== undefined;
}

/** What both boundary functions return. */
interface ChangeRow {
  changed: boolean;
  status: MembershipStatus;
  left_at_ns: string | null;
  version: string | null;
}

/** Leaving twice returns the existing record: the boundary never moves, the first reason stays. */
export async function leave(db: Kysely<Database>, userId: string, consent: Consent): Promise<MembershipWrite> {
  const { rows } = await sql<ChangeRow>`SELECT * FROM leave_community_layer(${userId}, ${consent.reason}::consent_reason,
    ${consent.reasonText}::text, ${consent.policyVersion}::text)`.execute(db);
  return toChange(userId, rows[0]!);
}

export async function rejoin(db: Kysely<Database>, userId: string, consent: Consent): Promise<MembershipWrite> {
  const { rows } = await sql<ChangeRow>`SELECT * FROM rejoin_community_layer(${userId}, ${consent.reason}::consent_reason,
    ${consent.reasonText}::text, ${consent.policyVersion}::text)`.execute(db);
  return toChange(userId, rows[0]!);
}

function toChange(userId: string, row: ChangeRow): MembershipWrite {
  return {
    changed: row.changed,
    membership: { userId, status: row.status, leftAtNs: row.left_at_ns, version: row.version },
  };
}
