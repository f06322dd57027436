import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../src/app.js';
import { eventually, sqlClient, startCluster, token, type Cluster } from './support/harness.js';

/** Small budgets, spent in a few requests, refilled at 1 point a second: nothing refills during a step. */
const BUDGETS = {
  FAIR_SHARE_USER_CAPACITY: '20',
  FAIR_SHARE_USER_RATE: '1',
  FAIR_SHARE_ADMIN_CAPACITY: '80',
  FAIR_SHARE_ADMIN_RATE: '1',
  FAIR_SHARE_MEMBERSHIP_CHANGES: '4',
  FAIR_SHARE_MEMBERSHIP_WINDOW_SECONDS: '3600',
  FAIR_SHARE_INSTANCES: '2',
};

let cluster: Cluster;
let a: App;
let b: App;
let db: pg.Client;
beforeAll(async () => {
  cluster = await startCluster([]);
  [a, b] = await Promise.all([cluster.startInstance(BUDGETS), cluster.startInstance(BUDGETS)]);
  db = cluster.db;
});
afterAll(async () => {
  await Promise.all([a?.stop(), b?.stop()]);
  await cluster?.stop();
});

async function post(app: App, bearer: string, query: string, variables?: Record<string, unknown>) {
  const response = await fetch(app.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json', authorization: `Bearer ${bearer}` },
    body: JSON.stringify({ query, variables }),
  });
  const body = (await response.json()) as { data?: Record<string, any> | null; errors?: { extensions?: Record<string, any> }[]; extensions?: Record<string, any> };
  return { status: response.status, ...body };
}

/** Cheap reads until one is refused 429 RATE_LIMITED `budget`, on both instances: the caller's budget is spent. */
async function spendBudget(bearer: string): Promise<void> {
  for (const app of [a, b]) {
    let refused = false;
    for (let i = 0; i < 200 && !refused; i++) {
      const answer = await post(app, bearer, '{ rateLimit { remaining } }');
      refused = answer.status === 429;
      if (refused) expect(answer.errors![0]!.extensions).toMatchObject({ code: 'RATE_LIMITED', limit: 'budget' });
    }
    expect(refused).toBe(true);
  }
}

const SIGNAL = 'mutation ($input: SignalInput!) { signal(input: $input) { status forwarded cohortsAttributed } }';
const LEAVE = 'mutation { leaveCommunityLayer { status leftAtNs } }';
const forwardedSince = async (userId: string, leftAtNs: string) =>
  Number((await db.query('SELECT count(*) AS n FROM signal WHERE user_id = $1 AND forwarded AND at_ns >= $2', [userId, leftAtNs])).rows[0].n);

describe('a leave is never refused', () => {
  it('after an admin spent its budget and the membership-change limit flipping the user, and the user spent theirs', async () => {
    const admin = await token('9001', 'community:admin');
    const user = await token('7001');
    // The admin flips user 7001 twice, then asks to rejoin them until the rejoin limit is spent: they end ACTIVE.
    for (const flip of ['leave', 'rejoin', 'leave', 'rejoin']) {
      const answer = await post(a, admin, `mutation { ${flip}CommunityLayer(userId: "7001") { status } }`);
      expect([flip, answer.status, answer.errors]).toEqual([flip, 200, undefined]);
    }
    let rejoin = await post(b, admin, 'mutation { rejoinCommunityLayer(userId: "7001") { status } }');
    for (let i = 0; i < 10 && rejoin.status === 200; i++) rejoin = await post(b, admin, 'mutation { rejoinCommunityLayer(userId: "7001") { status } }');
    expect(rejoin.status).toBe(429);
    expect(rejoin.errors![0]!.extensions).toMatchObject({ code: 'RATE_LIMITED', limit: 'membershipChanges' });
    expect((await db.query("SELECT status FROM community_membership WHERE user_id = '7001'")).rows[0].status).toBe('ACTIVE');
    await spendBudget(admin);
    await spendBudget(user);

    // The user's own leave, on either instance, goes through (the second waits its turn and is a no-op).
    const [left, again] = await Promise.all([post(a, user, LEAVE), post(b, user, LEAVE)]);
    expect([left.status, again.status]).toEqual([200, 200]);
    expect(left.data!['leaveCommunityLayer'].status).toBe('LEFT');
    expect(again.data!['leaveCommunityLayer']).toEqual(left.data!['leaveCommunityLayer']);
    // A leave that found the bucket empty still says what the budget is: nothing left.
    expect(left.extensions!['cost']).toMatchObject({ requestedQueryCost: 11, actualQueryCost: 11, throttleStatus: { currentlyAvailable: 0 } });

    // A signal sent for them right after (by a service, whose budget is its own) is kept for them only.
    const service = await token('leave-test-sender', 'signals:write');
    const sent = await post(a, service, SIGNAL, { input: { userId: '7001', itemId: 'after-leave', kind: 'LIKE', context: { cohortIds: ['berlin'] } } });
    expect(sent.status).toBe(200);
    expect(sent.data!['signal']).toEqual({ status: 'LEFT', forwarded: false, cohortsAttributed: 0 });
    // …and the user's own signal is refused by their spent budget: neither is forwarded.
    const own = await post(b, user, SIGNAL, { input: { userId: '7001', itemId: 'own-after-leave', kind: 'LIKE' } });
    expect(own.status).toBe(429);
    expect(await forwardedSince('7001', left.data!['leaveCommunityLayer'].leftAtNs)).toBe(0);

    // The admin, its budget spent too, leaves another user for them: never refused either.
    const forOther = await post(b, admin, 'mutation { leaveCommunityLayer(userId: "7002") { status } }');
    expect(forOther.status).toBe(200);
    expect(forOther.data!['leaveCommunityLayer'].status).toBe('LEFT');
    // Rejoins stay limited, whoever asks: the user's own rejoin is refused by the spent limit.
    const back = await post(a, user, 'mutation { rejoinCommunityLayer { status } }');
    expect(back.status).toBe(429);
    expect((await db.query("SELECT status FROM community_membership WHERE user_id = '7001'")).rows[0].status).toBe('LEFT');
  });

  it('a leave sent alongside other fields is charged like any operation (only a leave alone is exempt)', async () => {
    const user = await token('7003');
    await spendBudget(user);
    const mixed = await post(a, user, 'mutation { leaveCommunityLayer { status } signal(input: { userId: "7003", itemId: "x", kind: VIEW }) { forwarded } }');
    expect(mixed.status).toBe(429);
    const alone = await post(a, user, LEAVE);
    expect(alone.status).toBe(200);
  });

  it('leaves past the budget hold back the caller\'s other operations: they are owed, not free', async () => {
    const user = await token('7004');
    for (let i = 0; i < 3; i++) expect((await post(a, user, LEAVE)).status).toBe(200);
    // 3 leaves of 11 points spent more than the bucket of 20: reads get what slices were leased ahead
    // (2.5 points each), where leaves not charged would have left 20 - 11 = 9 of them.
    let reads = 0;
    while ((await post(a, user, '{ rateLimit { remaining } }')).status === 200 && reads < 20) reads++;
    expect(reads).toBeLessThanOrEqual(5);
  });
});

describe('a leave while signals are shed', () => {
  it('goes through while the signal queue is full and signals get 503 OVERLOADED', async () => {
    const app = await cluster.startInstance({ SIGNAL_QUEUE_MAX: '4', SIGNAL_BATCH_MAX: '2', SIGNAL_BATCH_CONCURRENCY: '1' });
    const blocker = await sqlClient(cluster.databaseUrl);
    try {
      await blocker.query('BEGIN; LOCK TABLE signal IN SHARE ROW EXCLUSIVE MODE');
      const service = await token('leave-test-flood', 'signals:write');
      const queued = Array.from({ length: 10 }, (_, i) => post(app, service, SIGNAL, { input: { userId: '7010', itemId: `q-${i}`, kind: 'VIEW' } }));
      await eventually(() => app.services.signals.full);
      const shed = await post(app, service, SIGNAL, { input: { userId: '7010', itemId: 'shed', kind: 'VIEW' } });
      expect(shed.status).toBe(503);
      expect(shed.errors![0]!.extensions).toMatchObject({ code: 'OVERLOADED' });
      // Another user than the stalled signals' (theirs hold that user's lock in the database).
      const left = await post(app, await token('7011'), LEAVE);
      expect(left.status).toBe(200);
      expect(left.data!['leaveCommunityLayer'].status).toBe('LEFT');
      await blocker.query('ROLLBACK');
      // Queued before the leave (stored once the lock is gone) or shed: answered, every one.
      expect((await Promise.all(queued)).every((answer) => answer.status === 200 || answer.status === 503)).toBe(true);
    } finally {
      await blocker.end();
      await app.stop();
    }
  });
});
