import type pg from 'pg';
import type { Case } from '../case.js';
import { graphql } from '../cluster.js';
import { ms, num } from '../format.js';

const USERS = 5_000;
const IN_FLIGHT = 32;
const LABEL = `27. bulk leave: one leaveCommunityLayerMany of ${num(USERS)} users vs ${num(USERS)} single leaves (${IN_FLIGHT} in flight)`;
const BULK_FIRST = 1_000_000;
const SINGLES_FIRST = 2_000_000;

const LEAVE = `mutation ($userId: UInt64!) { leaveCommunityLayer(userId: $userId) { status } }`;
const LEAVE_MANY = `mutation ($userIds: [UInt64!]!) { leaveCommunityLayerMany(userIds: $userIds) { changed unchanged refused } }`;

/**
 * Issue 50 item 1: the same work both ways on one server process (its own event loop, as the
 * client's is not its), in the same run: 5,000 ACTIVE users, each with a forwarded signal (the
 * leave fences its boundary above it), leave in one bulk call as an admin, and 5,000 others, alike,
 * leave one call each from a client keeping 32 calls in flight. A bulk call of 1,000 and 100 singles
 * warm the paths first, with the tables analyzed in between. Every answer must say CHANGED for every user, or the case fails.
 */
export const bulkLeave: Case = {
  labels: [LABEL],
  async run(cluster) {
    const url = await cluster.freshDatabase();
    const db = await cluster.sqlClient(url);
    const bulkUsers = idsFrom(BULK_FIRST, USERS);
    const singleUsers = idsFrom(SINGLES_FIRST, USERS);
    const warmUsers = idsFrom(3_000_000, 1_100);
    await seedSignals(db, [...bulkUsers, ...singleUsers, ...warmUsers]);
    const servers = await cluster.startProcesses(url, 1);
    const target = { url: servers.urls[0]! };
    const leaveMany = async (userIds: string[]) => {
      const { leaveCommunityLayerMany: answer } = await graphql(target, cluster.token, LEAVE_MANY, { userIds });
      if (answer.changed !== userIds.length) throw new Error(`bulk leave changed ${answer.changed} of ${userIds.length}`);
    };
    const leaveEach = (userIds: string[]) =>
      inFlight(userIds, IN_FLIGHT, async (userId) => {
        const { leaveCommunityLayer } = await graphql(target, cluster.token, LEAVE, { userId });
        if (leaveCommunityLayer.status !== 'LEFT') throw new Error(`user ${userId} is ${leaveCommunityLayer.status}`);
      });
    await leaveMany(warmUsers.slice(0, 1_000));
    // Statistics of tables that hold rows, as autovacuum keeps them in service: planned while they
    // were empty, every session's cached plan of the boundary functions scans them whole, and each
    // of 10,000 leaves then costs more than the one before (both sides alike, the bulk one most).
    await db.query('ANALYZE');
    await leaveEach(warmUsers.slice(1_000));

    let started = performance.now();
    await leaveMany(bulkUsers);
    const bulkMs = performance.now() - started;
    started = performance.now();
    await leaveEach(singleUsers);
    const singlesMs = performance.now() - started;
    const ratio = bulkMs / singlesMs;
    return [
      {
        case: LABEL,
        figure: `bulk ${ms(bulkMs)} (${num(USERS / (bulkMs / 1000))} users/s)`,
        ceiling: `singles ${ms(singlesMs)} (${num(USERS / (singlesMs / 1000))} users/s)`,
        ratio,
        target: '≤ 0.2',
        met: ratio <= 0.2,
        details: { users: USERS, inFlight: IN_FLIGHT, bulkMs, singlesMs },
      },
    ];
  },
};

const idsFrom = (first: number, count: number) => Array.from({ length: count }, (_, i) => String(first + i));

/** One forwarded signal per user, as if each had sent one an hour ago. */
async function seedSignals(db: pg.Client, userIds: string[]): Promise<void> {
  await db.query(
    `INSERT INTO signal (id, user_id, item_id, kind, weight_micros, cohort_ids, at_ns, forwarded)
     SELECT nextval('signal_id_seq'), u::u64, 'item-' || (u::bigint % 100), 'VIEW', 1000000, '{}', now_ns() - 3600000000000, true
       FROM unnest($1::text[]) AS u`,
    [userIds],
  );
  await db.query('VACUUM ANALYZE');
}

/** Runs `each` over `items`, `limit` at a time, in order of start. */
async function inFlight<T>(items: T[], limit: number, each: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: limit }, async () => {
      while (next < items.length) await each(items[next++]!);
    }),
  );
}
