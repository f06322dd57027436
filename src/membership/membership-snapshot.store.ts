import { sql, type Kysely } from 'kysely';
import type { LeftUsersReader, MembershipDelta, MembershipSource } from './cache/membership-source.js';
import type { Database } from '../db/schema.js';
import { decodeMembershipNotification, MEMBERSHIP_CHANNEL } from './membership-notification.js';

/** Membership store: the snapshot reads the in-memory cache is filled and resynced from. */

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
      const fetchPage = (after: string) =>
        sql<{ packed: Uint8Array | null; last: string | null }>`
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
