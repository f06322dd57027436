import { sql, type Kysely } from 'kysely';
import type { LeftUsersReader, MembershipDelta, MembershipSource } from './cache/membership-source.js';
import type { Database, MembershipRow, MembershipStatus } from '../db/schema.js';
import { decodeMembershipNotification, MEMBERSHIP_CHANNEL } from './membership-notification.js';

/**
 * The one owner of the membership tables (community_membership, leave_episode, membership_clock):
 * every query on them is here, the boundary functions they call live in src/db/sql/.
 */

const INT8_MAX = '9223372036854775807';

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

/**
 * Signals held back from leave `e` until the user's next leave (the gated-signals index; the next
 * leave through the primary key), so a page costs the same however long the history is.
 */
const gatedSignals = sql<string>`(
  SELECT count(*) FROM signal s
   WHERE s.user_id = e.user_id AND NOT s.forwarded AND s.at_ns >= e.left_at_ns
     AND s.at_ns < coalesce(
       (SELECT min(n.left_at_ns) FROM leave_episode n WHERE n.user_id = e.user_id AND n.left_at_ns > e.left_at_ns),
       ${sql.lit(INT8_MAX)})
)`;

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
          .select(['e.left_at_ns', 'e.rejoined_at_ns', gatedSignals.as('gated_signals')])
          .whereRef('e.user_id', '=', 'w.user_id')
          .orderBy('e.left_at_ns', 'desc')
          .limit(recentLeaves)
          .as('e'),
      (join) => join.onTrue(),
    )
    .select(['w.user_id', 'm.status', 'm.left_at_ns as current_left_at_ns', 'm.version', 'e.left_at_ns', 'e.rejoined_at_ns', 'e.gated_signals'])
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
      state.recentLeaves.push(toLeaveEpisode({ left_at_ns: row.left_at_ns, rejoined_at_ns: row.rejoined_at_ns, gated_signals: row.gated_signals }));
    }
  }
  return [...states.values()];
}

function toLeaveEpisode(row: { left_at_ns: string; rejoined_at_ns: string | null; gated_signals: string | null }): LeaveEpisode {
  return { leftAtNs: row.left_at_ns, rejoinedAtNs: row.rejoined_at_ns, gatedSignals: row.gated_signals ?? '0' };
}

function toMembership(userId: string, row: MembershipRow | undefined): Membership {
  // A user with no row never left: ACTIVE.
  if (!row) return { userId, status: 'ACTIVE', leftAtNs: null, version: null };
  return { userId, status: row.status, leftAtNs: row.left_at_ns, version: row.version };
}

const RESTORE_BATCH = 50_000;

/** The membership store as the cache sees it. */
export function membershipSource(db: Kysely<Database>): MembershipSource {
  return {
    channel: MEMBERSHIP_CHANNEL,
    decodeNotification: decodeMembershipNotification,
    readLeftUsers: (reader) => readLeftUsers(db, reader),
    readChangesSince: (version) => readChangesSince(db, version),
  };
}

/**
 * Streams LEFT users from one REPEATABLE READ snapshot: their count first (the cache is sized from
 * it), then pages in user order through the partial index of LEFT users, never the rejoined ones.
 * Each page is one bytea of packed keys, not a row per user, so the driver allocates a few buffers
 * per page instead of an object and a string per user; the next page is requested before the
 * current one is handed over.
 */
function readLeftUsers(db: Kysely<Database>, reader: LeftUsersReader): Promise<bigint> {
  return db
    .transaction()
    .setIsolationLevel('repeatable read')
    .setAccessMode('read only')
    .execute(async (trx) => {
      const head = await clockAndLeftCount(trx);
      reader.expect(Number(head.left_count));
      // community_user_key is the u64 minus 2^63 (int8): its big-endian bytes are the u64's with
      // the top bit flipped, flipped back below.
      const fetchPage = (after: string) => sql<{ packed: Uint8Array | null; last: string | null }>`
        SELECT string_agg(int8send(community_user_key(p.user_id)), ''::bytea) AS packed, max(p.user_id) AS last
          FROM (SELECT user_id FROM community_membership
                 WHERE status = 'LEFT' AND user_id > ${after}::numeric
                 ORDER BY user_id LIMIT ${RESTORE_BATCH}) AS p`.execute(trx);
      let pending = fetchPage('-1');
      for (;;) {
        const { packed, last } = (await pending).rows[0]!;
        if (!packed || !last) break;
        const full = packed.length === RESTORE_BATCH * 8;
        if (full) pending = fetchPage(last);
        for (let i = 0; i < packed.length; i += 8) packed[i]! ^= 0x80;
        reader.add(packed);
        if (!full) break;
      }
      return BigInt(head.version);
    });
}

/** The membership version and the number of LEFT users, in the caller's snapshot. */
function clockAndLeftCount(trx: Kysely<Database>): Promise<{ version: string; left_count: string }> {
  return trx
    .selectFrom('membership_clock')
    .select('version')
    .select((eb) =>
      eb.selectFrom('community_membership').select(sql<string>`count(*)`.as('n')).where('status', '=', 'LEFT').as('left_count'),
    )
    .$narrowType<{ left_count: string }>()
    .executeTakeFirstOrThrow();
}

function readChangesSince(db: Kysely<Database>, since: bigint): Promise<MembershipDelta> {
  return db
    .transaction()
    .setIsolationLevel('repeatable read')
    .setAccessMode('read only')
    .execute(async (trx) => {
      const head = await clockAndLeftCount(trx);
      const rows = await trx
        .selectFrom('community_membership')
        .select(['user_id', 'status', 'version'])
        .where('version', '>', since.toString())
        .orderBy('version')
        .execute();
      return {
        version: BigInt(head.version),
        leftCount: Number(head.left_count),
        rows: rows.map((row) => ({ userId: row.user_id, status: row.status, version: BigInt(row.version) })),
      };
    });
}
