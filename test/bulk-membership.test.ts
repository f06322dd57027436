import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../src/app.js';
import { eventually, gql, rowCounts, sqlClient, token, useCluster } from './support/harness.js';
import { leave, purge, send } from './support/purge-requests.js';
import { receiver, type Receiver } from './support/webhook-receivers.js';

const RESULT = `userId outcome membership { userId status leftAtNs } refusal { code }`;
const MANY = (verb: 'leave' | 'rejoin') => `mutation ($userIds: [UInt64!]!, $reason: ConsentReason) {
  ${verb}CommunityLayerMany(userIds: $userIds, reason: $reason) { results { ${RESULT} } changed unchanged refused }
}`;
const STATUS = `query ($userId: UInt64!) { communityLayerStatus(userId: $userId) { userId status leftAtNs } }`;

let app: App;
let db: pg.Client;
let databaseUrl: string;
let hook: Receiver;
beforeAll(async () => {
  hook = await receiver((_req, res) => void res.writeHead(200).end());
});
afterAll(() => hook.close());
useCluster(
  [{}],
  (cluster) => {
    app = cluster.apps[0]!;
    db = cluster.db;
    databaseUrl = cluster.databaseUrl;
  },
  'direct',
  {
    // One signal per purge chunk and a long pause: a purge stays RUNNING while the test rejoins.
    PURGE_CHUNK_SIZE: '1',
    PURGE_CHUNK_PAUSE_MS: '60000',
    WEBHOOK_ALLOWED_DESTINATIONS: '127.0.0.1',
    WEBHOOK_POLL_MS: '100',
    // Two rejoins a day per user: a third is refused (RATE_LIMITED).
    FAIR_SHARE_MEMBERSHIP_CHANGES: '2',
    FAIR_SHARE_MEMBERSHIP_WINDOW_SECONDS: '86400',
  },
);

async function many(verb: 'leave' | 'rejoin', userIds: unknown[], bearer?: string) {
  return gql(app, MANY(verb), { userIds }, bearer);
}

/** Rows of `table` per user, among those matching `condition`. */
async function perUser(table: string, condition: string, userIds: string[]): Promise<Map<string, number>> {
  const { rows } = await db.query(
    `SELECT user_id::text, count(*)::int AS n FROM ${table} WHERE ${condition} AND user_id = ANY($1::u64[]) GROUP BY user_id`,
    [userIds],
  );
  return new Map(rows.map((row) => [row.user_id, row.n]));
}

describe('bulk leave and rejoin', () => {
  it('leaves a few hundred users one by one as a single leave would, in input order; a repeat is UNCHANGED', async () => {
    const { data: registered } = await gql(
      app,
      `mutation ($url: String!) { registerWebhookEndpoint(url: $url, eventKinds: [LEFT]) { endpoint { id } } }`,
      { url: hook.url },
    );
    // Not sorted, across every bucket: the answer follows the input, not the buckets.
    const userIds = Array.from({ length: 300 }, (_, i) => String(900_000 + ((i * 7919) % 1000)));
    const first = await many('leave', userIds);
    expect(first.errors).toBeUndefined();
    const bulk = first.data!.leaveCommunityLayerMany;
    expect(bulk).toMatchObject({ changed: 300, unchanged: 0, refused: 0 });
    // Charged as 300 leaves (10 each) plus its objects: the answer, and per user a result, a membership, a refusal.
    expect((first as { extensions?: { cost?: { actualQueryCost: number } } }).extensions?.cost?.actualQueryCost).toBe(1 + 300 * 13);
    expect(bulk.results.map((result: { userId: string }) => result.userId)).toEqual(userIds);
    for (const result of bulk.results) {
      expect(result).toMatchObject({ outcome: 'CHANGED', refusal: null, membership: { userId: result.userId, status: 'LEFT' } });
    }
    const episodes = await perUser('leave_episode', `left_reason = 'ADMIN'`, userIds);
    const events = await perUser('membership_event', `kind = 'LEFT' AND reason = 'ADMIN'`, userIds);
    for (const userId of userIds) {
      expect([episodes.get(userId), events.get(userId)]).toEqual([1, 1]);
    }
    for (const result of bulk.results.slice(0, 20)) {
      expect((await gql(app, STATUS, { userId: result.userId })).data!.communityLayerStatus).toEqual(result.membership);
    }

    const before = await rowCounts(db);
    const again = (await many('leave', userIds)).data!.leaveCommunityLayerMany;
    expect(again).toMatchObject({ changed: 0, unchanged: 300, refused: 0 });
    expect(again.results.map((result: { outcome: string }) => result.outcome)).toEqual(userIds.map(() => 'UNCHANGED'));
    expect(again.results.map((result: { membership: unknown }) => result.membership)).toEqual(
      bulk.results.map((result: { membership: unknown }) => result.membership),
    );
    expect(await rowCounts(db)).toBe(before);

    // One webhook delivery per changed user, each delivered to the loopback receiver.
    const endpointId = registered!.registerWebhookEndpoint.endpoint.id;
    await eventually(async () => {
      const { rows } = await db.query(
        `SELECT count(DISTINCT e.user_id)::int AS users, count(*)::int AS n FROM webhook_delivery d
           JOIN membership_event e ON e.position = d.event_position WHERE d.endpoint_id = $1 AND d.status = 'DELIVERED'`,
        [endpointId],
      );
      return rows[0].users === 300 && rows[0].n === 300;
    }, 60_000);
    expect(hook.requests).toBeGreaterThanOrEqual(300);
  });

  it('commits bucket by bucket: users of a free bucket are LEFT while another bucket waits for its lock', async () => {
    const holder = await sqlClient(databaseUrl);
    try {
      await holder.query('BEGIN');
      await holder.query('SELECT lock_community_buckets(ARRAY[community_user_bucket(841)], false)');
      const call = many('leave', ['840', '841']);
      const statusOf = async (userId: number) =>
        (await db.query('SELECT status FROM community_membership WHERE user_id = $1', [userId])).rows[0]?.status ?? 'ACTIVE';
      await eventually(async () => (await statusOf(840)) === 'LEFT');
      expect(await statusOf(841)).toBe('ACTIVE');
      await holder.query('COMMIT');
      expect((await call).data!.leaveCommunityLayerMany.changed).toBe(2);
      expect(await statusOf(841)).toBe('LEFT');
    } finally {
      await holder.end();
    }
  });

  it('refuses malformed, repeated, too many or no ids with BAD_USER_INPUT naming each position, writing nothing', async () => {
    const before = await rowCounts(db);
    const malformed = await many('leave', ['1', 'abc', '2', '-5']);
    expect(malformed.errors!.map((error) => [error.extensions?.code, error.extensions?.argument])).toEqual([
      ['BAD_USER_INPUT', 'userIds[1]'],
      ['BAD_USER_INPUT', 'userIds[3]'],
    ]);
    const repeated = await many('rejoin', ['1', '2', '1', '3', '2']);
    expect(repeated.errors![0]!.extensions).toMatchObject({
      code: 'BAD_USER_INPUT',
      argument: 'userIds[2]',
      invalid: [
        { argument: 'userIds[2]', message: expect.stringContaining('userIds[0]') },
        { argument: 'userIds[4]', message: expect.stringContaining('userIds[1]') },
      ],
    });
    for (const userIds of [Array.from({ length: 5001 }, (_, i) => String(i + 1)), []]) {
      const refused = await many('leave', userIds);
      expect(refused.errors![0]!.extensions).toMatchObject({ code: 'BAD_USER_INPUT', argument: 'userIds' });
    }
    expect(await rowCounts(db)).toBe(before);
  });

  it('rejoins in place: a running purge is REFUSED, an ACTIVE user UNCHANGED, LEFT users CHANGED', async () => {
    await send(app, '810', 3);
    await leave(app, '810');
    expect((await purge(app, '810')).data?.purgeCommunityContributions.status).toBe('RUNNING');
    await many('leave', ['811', '875']);
    const answer = await many('rejoin', ['811', '810', '812', '875']);
    expect(answer.errors).toBeUndefined();
    const bulk = answer.data!.rejoinCommunityLayerMany;
    expect(bulk).toMatchObject({ changed: 2, unchanged: 1, refused: 1 });
    expect(
      bulk.results.map((result: { outcome: string; refusal: { code: string } | null }) => [result.outcome, result.refusal?.code]),
    ).toEqual([
      ['CHANGED', undefined],
      ['REFUSED', 'PURGE_IN_PROGRESS'],
      ['UNCHANGED', undefined],
      ['CHANGED', undefined],
    ]);
    expect(bulk.results[1].membership).toBeNull();
    const { rows } = await db.query(`SELECT user_id::text, status FROM community_membership WHERE user_id IN (810, 811, 875) ORDER BY 1`);
    expect(rows).toEqual([
      { user_id: '810', status: 'LEFT' },
      { user_id: '811', status: 'ACTIVE' },
      { user_id: '875', status: 'ACTIVE' },
    ]);
  });

  it('refuses in place a user whose own rejoin limit is spent, and the call to a caller who is not community:admin', async () => {
    for (let round = 0; round < 2; round++) {
      await many('leave', ['820']);
      expect((await many('rejoin', ['820'])).data!.rejoinCommunityLayerMany.changed).toBe(1);
    }
    await many('leave', ['820', '821']);
    const bulk = (await many('rejoin', ['820', '821'])).data!.rejoinCommunityLayerMany;
    expect(
      bulk.results.map((result: { outcome: string; refusal: { code: string } | null }) => [result.outcome, result.refusal?.code]),
    ).toEqual([
      ['REFUSED', 'RATE_LIMITED'],
      ['CHANGED', undefined],
    ]);

    const before = await rowCounts(db);
    for (const bearer of [await token('830', 'signals:write'), await token('830')]) {
      const refused = await many('leave', ['830'], bearer);
      expect(refused.errors![0]!.extensions?.code).toBe('FORBIDDEN');
    }
    expect(await rowCounts(db)).toBe(before);
  });
});
