import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../src/app.js';
import { post } from './support/fair-share-requests.js';
import { eventually, metric, sqlClient, startCluster, token, type Cluster } from './support/harness.js';
import { lockSignalTable, signalLockWaiters } from './support/signal-table-lock.js';

/** Small budgets, spent in a few requests, refilled at 10 points a second: a leave past them waits 1.1 s at most. */
const BUDGETS = {
  FAIR_SHARE_USER_CAPACITY: '20',
  FAIR_SHARE_USER_RATE: '10',
  FAIR_SHARE_ADMIN_CAPACITY: '200',
  FAIR_SHARE_ADMIN_RATE: '10',
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

/** Reads of 20 points (a bucket of history) until one is refused 429 RATE_LIMITED `budget`, on both instances. */
async function spendBudget(bearer: string): Promise<void> {
  for (const app of [a, b]) {
    let refused = false;
    for (let i = 0; i < 200 && !refused; i++) {
      const answer = await post(app, bearer, '{ communityLayerStatus { history(last: 19) { leftAtNs } } }');
      refused = answer.status === 429;
      if (refused) expect(answer.errors![0]!.extensions).toMatchObject({ code: 'RATE_LIMITED', limit: 'budget' });
    }
    expect(refused).toBe(true);
  }
}

const SIGNAL = 'mutation ($input: SignalInput!) { signal(input: $input) { status forwarded cohortsAttributed } }';
const LEAVE = 'mutation { leaveCommunityLayer { status leftAtNs } }';
const forwardedSince = async (userId: string, leftAtNs: string) =>
  Number(
    (await db.query('SELECT count(*) AS n FROM signal WHERE user_id = $1 AND forwarded AND at_ns >= $2', [userId, leftAtNs])).rows[0].n,
  );

describe('a leave is never refused', () => {
  it('after an admin spent its budget and the membership-change limit flipping the user, and the user spent theirs', async () => {
    const admin = await token('9001', 'community:admin');
    const user = await token('7001');
    // The admin flips user 7001 until a rejoin is refused: the rejoin limit is spent (leaves never count).
    const flip = (change: string) => post(a, admin, `mutation { ${change}CommunityLayer(userId: "7001") { status } }`);
    let rejoin = null;
    for (let i = 0; i < 10 && rejoin?.status !== 429; i++) {
      expect((await flip('leave')).status).toBe(200);
      rejoin = await flip('rejoin');
    }
    expect(rejoin!.status).toBe(429);
    expect(rejoin!.errors![0]!.extensions).toMatchObject({ code: 'RATE_LIMITED', limit: 'membershipChanges' });
    // The user is ACTIVE again (an operator's rejoin by SQL, which the limit does not see).
    await db.query("SELECT rejoin_community_layer('7001')");
    expect((await db.query("SELECT status FROM community_membership WHERE user_id = '7001'")).rows[0].status).toBe('ACTIVE');
    await spendBudget(admin);
    await spendBudget(user);

    // The user's own leave, on either instance, goes through (the second waits its turn and is a no-op).
    const [left, again] = await Promise.all([post(a, user, LEAVE), post(b, user, LEAVE)]);
    expect([left.status, again.status]).toEqual([200, 200]);
    expect(left.data!['leaveCommunityLayer'].status).toBe('LEFT');
    expect(again.data!['leaveCommunityLayer']).toEqual(left.data!['leaveCommunityLayer']);
    // A leave that found the bucket empty waited for its points: it says what it spent.
    expect(left.extensions!['cost']).toMatchObject({ requestedQueryCost: 11, actualQueryCost: 11 });

    // A signal sent for them right after (by a service, whose budget is its own) is kept for them only.
    const service = await token('leave-test-sender', 'signals:write');
    const sent = await post(a, service, SIGNAL, {
      input: { userId: '7001', itemId: 'after-leave', kind: 'LIKE', context: { cohortIds: ['berlin'] } },
    });
    expect(sent.status).toBe(200);
    expect(sent.data!['signal']).toEqual({ status: 'LEFT', forwarded: false, cohortsAttributed: 0 });
    // …and the user's own: refused by their spent budget, or kept for them. Neither is forwarded.
    const own = await post(b, user, SIGNAL, { input: { userId: '7001', itemId: 'own-after-leave', kind: 'LIKE' } });
    expect(own.status === 429 || own.data!['signal'].forwarded === false).toBe(true);
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
    const mixed = await post(
      a,
      user,
      'mutation { leaveCommunityLayer { status } signal(input: { userId: "7003", itemId: "x", kind: VIEW }) { forwarded } }',
    );
    expect(mixed.status).toBe(429);
    const alone = await post(a, user, LEAVE);
    expect(alone.status).toBe(200);
  });

  it('leaves past the budget wait for their points, one at a time: never refused, never free', async () => {
    const user = await token('7004');
    const before = await metric(a, 'community_fair_share_admitted_cost_total', { class: 'user' });
    // Three leaves of 11 points from a bucket of 20, at once: the third waits for the refill.
    const answers = await Promise.all([post(a, user, LEAVE), post(a, user, LEAVE), post(a, user, LEAVE)]);
    expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200]);
    for (const answer of answers) expect(answer.extensions!['cost']).toMatchObject({ requestedQueryCost: 11, actualQueryCost: 11 });
    expect((await metric(a, 'community_fair_share_admitted_cost_total', { class: 'user' })) - before).toBe(33);
  });
});

describe('a leave while signals are shed', () => {
  it('goes through while the signal queue is full and signals get 503 OVERLOADED', async () => {
    const app = await cluster.startInstance({ SIGNAL_QUEUE_MAX: '4', SIGNAL_BATCH_MAX: '2', SIGNAL_BATCH_CONCURRENCY: '1' });
    const blocker = await sqlClient(cluster.databaseUrl);
    try {
      await lockSignalTable(blocker);
      const service = await token('leave-test-flood', 'signals:write');
      const send = (itemId: string) => post(app, service, SIGNAL, { input: { userId: '7010', itemId, kind: 'VIEW' } });
      // One group stalls in the database first, then the queue behind it fills (a burst sent at once
      // could be shed before the first group is formed, and leave the queue short of full).
      const queued = [send('stalled')];
      await eventually(async () => (await signalLockWaiters(blocker)) === 1);
      queued.push(...Array.from({ length: 4 }, (_, i) => send(`q-${i}`)));
      await eventually(() => app.services.signals.full);
      const shed = await post(app, service, SIGNAL, { input: { userId: '7010', itemId: 'shed', kind: 'VIEW' } });
      expect(shed.status).toBe(503);
      expect(shed.errors![0]!.extensions).toMatchObject({ code: 'OVERLOADED' });
      // Another user than the stalled signals' (theirs hold that user's lock in the database).
      const left = await post(app, await token('7011'), LEAVE);
      expect(left.status).toBe(200);
      expect(left.data!['leaveCommunityLayer'].status).toBe('LEFT');
      await blocker.query('ROLLBACK');
      // Queued before the leave: stored once the lock is gone, every one.
      expect((await Promise.all(queued)).map((answer) => answer.status)).toEqual([200, 200, 200, 200, 200]);
    } finally {
      await blocker.end();
      await app.stop();
    }
  });
});
