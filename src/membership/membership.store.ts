import { sql, type Kysely } from 'kysely';
import type { LeftUsersReader, MembershipDelta, MembershipSource } from '../cache/membership-source.js';
import type { Database, MembershipRow, MembershipStatus } from '../db/schema.js';
import { decodeMembershipNotification, MEMBERSHIP_CHANNEL } from './membership-notification.js';

/**
 * The one owner of the membership tables (community_membership, leave_episode, membership_clock):
 * every query on them is here, the boundary functions they call live in src/db/sql/.
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
  /** Signals the gate held back from this leave until the next one. */
  gatedSignals: number;
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

/** Every leave, oldest first, with what the gate held back from it. */
export async function listLeaveEpisodes(db: Kysely<Database>, userId: string): Promise<LeaveEpisode[]> {
  const rows = await db
    .with('episode', (qb) =>
      qb
        .selectFrom('leave_episode')
        .select(['user_id', 'left_at_ns', 'rejoined_at_ns'])
        .select(sql<string | null>`lead(left_at_ns) OVER (ORDER BY left_at_ns)`.as('next_left_at_ns'))
        .where('user_id', '=', userId),
    )
    .selectFrom('episode as e')
    .select(['e.left_at_ns', 'e.rejoined_at_ns'])
    .select((eb) =>
      eb
        .selectFrom('signal as s')
        .select(sql<string>`count(*)`.as('n'))
        .whereRef('s.user_id', '=', 'e.user_id')
        .where('s.forwarded', '=', false)
        .whereRef('s.at_ns', '>=', 'e.left_at_ns')
        .where((w) => w.or([w('e.next_left_at_ns', 'is', null), w('s.at_ns', '<', w.ref('e.next_left_at_ns'))]))
        .as('gated_signals'),
    )
    .orderBy('e.left_at_ns')
    .execute();
  return rows.map((row) => ({
    leftAtNs: row.left_at_ns,
    rejoinedAtNs: row.rejoined_at_ns,
    gatedSignals: Number(row.gated_signals ?? 0),
  }));
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
