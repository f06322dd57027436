import type pg from 'pg';
import { beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../src/app.js';
import { eventually, gql, type Cluster, useCluster } from './support/harness.js';

const STATUS = `query ($userId: UInt64!) { communityLayerStatus(userId: $userId) { status leftAtNs history { leftAtNs rejoinedAtNs } } }`;
const SIGNAL = `mutation ($userId: UInt64!) { signal(input: { userId: $userId, itemId: "guard-item", kind: VIEW }) { forwarded } }`;

let app: App;
let db: pg.Client;
useCluster(
  [{}],
  (cluster) =>
    ({
      db,
      apps: [app],
    } = cluster as Cluster & { apps: [App] }),
);

/** Both membership tables and the clock, as text: what a refused statement must leave alone. */
async function membershipState(): Promise<string> {
  const { rows } = await db.query(`SELECT
    (SELECT json_agg(m ORDER BY user_id) FROM community_membership m)::text AS memberships,
    (SELECT json_agg(e ORDER BY user_id, left_at_ns) FROM leave_episode e)::text AS episodes,
    (SELECT version FROM membership_clock)::text AS clock`);
  return JSON.stringify(rows[0]);
}

async function status(userId: string) {
  return (await gql(app, STATUS, { userId })).data!.communityLayerStatus;
}

/** Runs `statements` in one transaction, rolled back whatever happens; returns the error. */
async function attempt(statements: string[]): Promise<(Error & { code?: string; detail?: string }) | null> {
  await db.query('BEGIN');
  try {
    for (const statement of statements) await db.query(statement);
    return null;
  } catch (error) {
    return error as Error & { code?: string };
  } finally {
    await db.query('ROLLBACK');
  }
}

describe('direct SQL on the membership tables', () => {
  // 800 is LEFT, 801 left and rejoined, 802 never seen.
  beforeAll(async () => {
    await gql(app, `mutation { leaveCommunityLayer(userId: "800") { status } }`);
    await gql(app, `mutation { leaveCommunityLayer(userId: "801") { status } }`);
    await gql(app, `mutation { rejoinCommunityLayer(userId: "801") { status } }`);
  });

  const refused: [string, string[]][] = [
    ['insert a LEFT row', [`INSERT INTO community_membership (user_id, status, left_at_ns) VALUES (802, 'LEFT', now_ns())`]],
    ['insert an ACTIVE row', [`INSERT INTO community_membership (user_id, status) VALUES (802, 'ACTIVE')`]],
    [
      'set a LEFT user ACTIVE (the next leave then failed for ever)',
      [`UPDATE community_membership SET status = 'ACTIVE', left_at_ns = NULL WHERE user_id = 800`],
    ],
    [
      'set a user LEFT (no episode, no fenced boundary)',
      [`UPDATE community_membership SET status = 'LEFT', left_at_ns = now_ns() WHERE user_id = 801`],
    ],
    ['move a boundary', [`UPDATE community_membership SET left_at_ns = left_at_ns - 1 WHERE user_id = 800`]],
    ['change rejoined_at_ns', [`UPDATE community_membership SET rejoined_at_ns = now_ns() WHERE user_id = 801`]],
    ['renumber a user', [`UPDATE community_membership SET user_id = 803 WHERE user_id = 801`]],
    ['delete a LEFT user (ACTIVE without a rejoin)', [`DELETE FROM community_membership WHERE user_id = 800`]],
    ['truncate the memberships', ['TRUNCATE community_membership']],
    ['insert an episode', [`INSERT INTO leave_episode (user_id, left_at_ns) VALUES (802, now_ns())`]],
    ['close an episode', [`UPDATE leave_episode SET rejoined_at_ns = now_ns() WHERE user_id = 800`]],
    ['delete history', [`DELETE FROM leave_episode WHERE user_id = 801`]],
    ['truncate the history', ['TRUNCATE leave_episode']],
    [
      'write after a leave in the same transaction (the functions clear their permission)',
      ['SELECT leave_community_layer(804)', `UPDATE community_membership SET status = 'ACTIVE', left_at_ns = NULL WHERE user_id = 804`],
    ],
    [
      "write another user's row after a leave in the same transaction",
      ['SELECT leave_community_layer(805)', `UPDATE community_membership SET status = 'ACTIVE', left_at_ns = NULL WHERE user_id = 800`],
    ],
  ];

  it.each(refused)('refuses to %s, naming the functions to call, and changes nothing', async (_name, statements) => {
    const before = await membershipState();
    const error = await attempt(statements);
    expect(error?.code).toBe('23000');
    expect(error?.message).toMatch(/rejoin_community_layer\(user_id\)/);
    expect(await membershipState()).toBe(before);
  });

  it('a refused status change leaves the user able to leave and rejoin as before', async () => {
    await gql(app, `mutation { leaveCommunityLayer(userId: "810") { status } }`);
    expect(await attempt([`UPDATE community_membership SET status = 'ACTIVE', left_at_ns = NULL WHERE user_id = 810`])).not.toBeNull();
    await gql(app, `mutation { rejoinCommunityLayer(userId: "810") { status } }`);
    const left = (await gql(app, `mutation { leaveCommunityLayer(userId: "810") { status history { leftAtNs } } }`)).data!;
    expect(left.leaveCommunityLayer).toMatchObject({ status: 'LEFT' });
    expect(left.leaveCommunityLayer.history).toHaveLength(2);
  });

  it('the supported statements keep the boundary, the history and every cache right', async () => {
    const userId = '820';
    const cache = app.services.membershipCache.cache;
    await db.query('SELECT * FROM leave_community_layer($1)', [userId]);
    await eventually(() => cache.isLeft(userId));
    expect((await gql(app, SIGNAL, { userId })).data!.signal.forwarded).toBe(false);
    await db.query('SELECT * FROM rejoin_community_layer($1)', [userId]);
    await eventually(() => !cache.isLeft(userId));
    expect((await gql(app, SIGNAL, { userId })).data!.signal.forwarded).toBe(true);

    // An update that changes no membership column passes; it is a new version like any write.
    const touched = await db.query('UPDATE community_membership SET updated_at = now() WHERE user_id = $1 RETURNING version::text', [
      userId,
    ]);
    expect(touched.rowCount).toBe(1);

    // Erasing an ACTIVE user's record: the row goes, the history a purge needs stays.
    const history = (await status(userId)).history;
    expect(history).toHaveLength(1);
    const erased = await db.query('DELETE FROM community_membership WHERE user_id = $1 RETURNING version::text', [userId]);
    expect(erased.rowCount).toBe(1);
    await eventually(() => cache.appliedVersion > BigInt(touched.rows[0].version));
    expect(await status(userId)).toEqual({ status: 'ACTIVE', leftAtNs: null, history });

    // Leaving again after the erase: a new row and episode, the boundary after the last rejoin.
    const { rows } = await db.query('SELECT left_at_ns::text FROM leave_community_layer($1)', [userId]);
    await eventually(() => cache.isLeft(userId));
    expect(BigInt(rows[0].left_at_ns)).toBeGreaterThanOrEqual(BigInt(history[0].rejoinedAtNs));
    expect((await status(userId)).history).toEqual([...history, { leftAtNs: rows[0].left_at_ns, rejoinedAtNs: null }]);
  });
});
