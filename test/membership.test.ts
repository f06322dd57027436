import type pg from 'pg';
import { describe, expect, it } from 'vitest';
import type { App } from '../src/app.js';
import { gql, rowCounts, startApp, type Cluster, useCluster } from './support/harness.js';
import { BAD_USER_IDS } from './support/strict-input-cases.js';

const MEMBERSHIP = `userId status leftAtNs leftAt history { leftAtNs rejoinedAtNs gatedSignals }`;
const STATUS = `query ($userId: UInt64!) { communityLayerStatus(userId: $userId) { ${MEMBERSHIP} } }`;
const LEAVE = `mutation ($userId: UInt64!) { leaveCommunityLayer(userId: $userId) { ${MEMBERSHIP} } }`;
const REJOIN = `mutation ($userId: UInt64!) { rejoinCommunityLayer(userId: $userId) { ${MEMBERSHIP} } }`;

let cluster: Cluster;
let databaseUrl: string;
let app: App;
let db: pg.Client;
// 24 concurrent leaves of one user, and dozens of flips of another: more membership changes than
// fair share lets one user make by default (test/fair-share.test.ts tests that limit).
useCluster(
  [{}],
  (started) => {
    cluster = started;
    ({
      databaseUrl,
      db,
      apps: [app],
    } = started as Cluster & { apps: [App] });
  },
  'direct',
  { FAIR_SHARE_MEMBERSHIP_CHANGES: '100000' },
);

async function databaseNowNs(): Promise<bigint> {
  const { rows } = await db.query('SELECT now_ns()::text AS ns');
  return BigInt(rows[0].ns);
}

describe('membership semantics', () => {
  it('a user never seen is ACTIVE with empty history, and reading writes nothing', async () => {
    const before = await rowCounts(db);
    const { data, errors } = await gql(app, STATUS, { userId: '7' });
    expect(errors).toBeUndefined();
    expect(data!.communityLayerStatus).toEqual({ userId: '7', status: 'ACTIVE', leftAtNs: null, leftAt: null, history: [] });
    expect(await rowCounts(db)).toBe(before);
  });

  it('leave records the boundary from the database clock and opens an episode', async () => {
    const lower = await databaseNowNs();
    const { data, errors } = await gql(app, LEAVE, { userId: '11' });
    const upper = await databaseNowNs();
    expect(errors).toBeUndefined();
    const left = data!.leaveCommunityLayer;
    expect(left.status).toBe('LEFT');
    const boundary = BigInt(left.leftAtNs);
    expect(boundary >= lower && boundary <= upper).toBe(true);
    expect(new Date(left.leftAt).getTime()).toBe(Number(boundary / 1_000_000n));
    expect(left.leftAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}Z$/);
    expect(left.history).toEqual([{ leftAtNs: left.leftAtNs, rejoinedAtNs: null, gatedSignals: 0 }]);

    const status = await gql(app, STATUS, { userId: '11' });
    expect(status.data!.communityLayerStatus).toEqual(left);
  });

  it('leaving while LEFT changes nothing: the boundary never moves', async () => {
    const first = await gql(app, LEAVE, { userId: '12' });
    const { rows: before } = await db.query('SELECT version FROM community_membership WHERE user_id = 12');
    const second = await gql(app, LEAVE, { userId: '12' });
    expect(second.data).toEqual(first.data);
    const { rows: after } = await db.query('SELECT version FROM community_membership WHERE user_id = 12');
    expect(after).toEqual(before);
  });

  it('rejoin closes the episode and keeps history; rejoining while ACTIVE changes nothing', async () => {
    const never = await gql(app, REJOIN, { userId: '13' });
    expect(never.data!.rejoinCommunityLayer).toMatchObject({ status: 'ACTIVE', history: [] });
    expect(await db.query('SELECT 1 FROM community_membership WHERE user_id = 13').then((r) => r.rowCount)).toBe(0);

    const first = (await gql(app, LEAVE, { userId: '13' })).data!.leaveCommunityLayer;
    const rejoined = (await gql(app, REJOIN, { userId: '13' })).data!.rejoinCommunityLayer;
    expect(rejoined.status).toBe('ACTIVE');
    expect(rejoined.leftAtNs).toBeNull();
    expect(rejoined.leftAt).toBeNull();
    expect(rejoined.history).toHaveLength(1);
    expect(rejoined.history[0].leftAtNs).toBe(first.leftAtNs);
    expect(BigInt(rejoined.history[0].rejoinedAtNs)).toBeGreaterThan(BigInt(first.leftAtNs));

    const again = (await gql(app, REJOIN, { userId: '13' })).data!.rejoinCommunityLayer;
    expect(again).toEqual(rejoined);

    const second = (await gql(app, LEAVE, { userId: '13' })).data!.leaveCommunityLayer;
    expect(BigInt(second.leftAtNs)).toBeGreaterThan(BigInt(rejoined.history[0].rejoinedAtNs));
    expect(second.history.map((e: { leftAtNs: string }) => e.leftAtNs)).toEqual([first.leftAtNs, second.leftAtNs]);
    expect(second.history[1].rejoinedAtNs).toBeNull();
  });

  it('concurrent leaves of one user produce one episode and one boundary', async () => {
    const results = await Promise.all(Array.from({ length: 24 }, () => gql(app, LEAVE, { userId: '14' })));
    const boundaries = new Set(results.map((r) => r.data!.leaveCommunityLayer.leftAtNs));
    expect(boundaries.size).toBe(1);
    const { rows } = await db.query('SELECT left_at_ns::text FROM leave_episode WHERE user_id = 14');
    expect(rows).toEqual([{ left_at_ns: [...boundaries][0] }]);
  });
});

describe('history pages', () => {
  const PAGE = `query ($userId: UInt64!, $last: Int, $before: UInt64) {
    communityLayerStatus(userId: $userId) { leaveCount history(last: $last, before: $before) { leftAtNs rejoinedAtNs gatedSignals } }
  }`;
  const page = async (variables: Record<string, unknown>) =>
    (await gql(app, PAGE, { userId: '30', ...variables })).data!.communityLayerStatus;

  it('returns the newest 20 leaves by default and pages back through the rest with before', async () => {
    const leftAt: string[] = [];
    for (let i = 0; i < 23; i++) {
      leftAt.push((await gql(app, LEAVE, { userId: '30' })).data!.leaveCommunityLayer.leftAtNs);
      // One signal held back during the second leave only: its count must land on that episode.
      if (i === 1) await gql(app, `mutation { signal(input: { userId: "30", itemId: "x", kind: VIEW }) { forwarded } }`);
      await gql(app, REJOIN, { userId: '30' });
    }
    const newest = await page({});
    expect(newest.leaveCount).toBe(23);
    expect(newest.history.map((e: { leftAtNs: string }) => e.leftAtNs)).toEqual(leftAt.slice(3));
    // The plain field, as existing clients select it, is the same newest page.
    const plain = (await gql(app, STATUS, { userId: '30' })).data!.communityLayerStatus.history;
    expect(plain).toEqual(newest.history);

    const older = await page({ before: newest.history[0].leftAtNs });
    expect(older.history.map((e: { leftAtNs: string }) => e.leftAtNs)).toEqual(leftAt.slice(0, 3));
    expect(older.history.map((e: { gatedSignals: number }) => e.gatedSignals)).toEqual([0, 1, 0]);
    expect(older.history.every((e: { rejoinedAtNs: string | null }) => e.rejoinedAtNs !== null)).toBe(true);
    expect((await page({ before: leftAt[0] })).history).toEqual([]);
    expect((await page({ last: 2, before: leftAt[5] })).history.map((e: { leftAtNs: string }) => e.leftAtNs)).toEqual(leftAt.slice(3, 5));
  });

  it.each([
    ['last 0', { last: 0 }, 'last'],
    ['last above 100', { last: 101 }, 'last'],
    ['before above int8', { before: '9223372036854775808' }, 'before'],
  ])('%s is BAD_USER_INPUT naming the argument', async (_label, variables, argument) => {
    const response = await gql(app, PAGE, { userId: '30', ...variables });
    expect(response.data?.communityLayerStatus ?? null).toBeNull();
    expect(response.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', argument });
  });
});

describe('UInt64 user ids', () => {
  it.each(['0', '9007199254740993', '9223372036854775808', '18446744073709551615'])('%s round-trips exactly', async (userId) => {
    const left = await gql(app, LEAVE, { userId });
    expect(left.errors).toBeUndefined();
    expect(left.data!.leaveCommunityLayer.userId).toBe(userId);
    const { rows } = await db.query('SELECT user_id::text FROM community_membership WHERE user_id = $1', [userId]);
    expect(rows).toEqual([{ user_id: userId }]);
    const status = await gql(app, `{ communityLayerStatus(userId: "${userId}") { userId status } }`);
    expect(status.data!.communityLayerStatus).toEqual({ userId, status: 'LEFT' });
  });

  it.each(BAD_USER_IDS)('%s is BAD_USER_INPUT as a variable and writes nothing', async (_label, userId) => {
    const before = await rowCounts(db);
    for (const operation of [LEAVE, REJOIN, STATUS]) {
      const response = await gql(app, operation, { userId });
      expect(response.status).toBeLessThan(500);
      expect(response.data ?? null).toBeNull();
      expect(response.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
      expect(response.errors?.[0]?.message).toContain('$userId');
    }
    expect(await rowCounts(db)).toBe(before);
  });

  it.each(BAD_USER_IDS.filter(([, value]) => typeof value === 'string'))(
    '%s is BAD_USER_INPUT as a literal, naming the argument',
    async (_label, userId) => {
      const before = await rowCounts(db);
      const response = await gql(app, `mutation { leaveCommunityLayer(userId: ${JSON.stringify(userId)}) { status } }`);
      expect(response.status).toBeLessThan(500);
      expect(response.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', argument: 'userId' });
      expect(await rowCounts(db)).toBe(before);
    },
  );
});

describe('durability', () => {
  it('a leave survives stopping the app and starting a new one on the same database', async () => {
    const left = (await gql(app, LEAVE, { userId: '21' })).data!.leaveCommunityLayer;
    await app.stop();
    cluster.apps[0] = app = await startApp(databaseUrl);
    expect(app.services.membershipCache.cache.isLeft('21')).toBe(true);
    const status = (await gql(app, STATUS, { userId: '21' })).data!.communityLayerStatus;
    expect(status).toEqual(left);
  });
});
