import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../src/app.js';
import { eventually, metric, startCluster, token, type Cluster } from './support/harness.js';
import { subscribe } from './support/sse.js';

/** A feed reader with a bucket of 30 points refilled at 30 a second; users with 20 at 1 a second. */
const BUDGETS = {
  FAIR_SHARE_SERVICES: 'stream-reader=30/30,page-reader=30/30',
  FAIR_SHARE_USER_CAPACITY: '20',
  FAIR_SHARE_USER_RATE: '1',
  FAIR_SHARE_INSTANCES: '1',
};
const CHANGES = 'subscription ($after: String) { communityMembershipChanges(after: $after) { cursor userId } }';
const EVENTS = 100;

let cluster: Cluster;
let app: App;
let db: pg.Client;
beforeAll(async () => {
  cluster = await startCluster([]);
  app = await cluster.startInstance(BUDGETS);
  db = cluster.db;
  // History to replay: a leave of each of EVENTS users, written by SQL as an operator may.
  await db.query('SELECT leave_community_layer(g::text::u64) FROM generate_series(90001, 90000 + $1) g', [EVENTS]);
});
afterAll(async () => {
  await app?.stop();
  await cluster?.stop();
});

/** Opens the change feed from the start, as a client does: again after Retry-After while refused 429. */
async function openFeed(bearer: string) {
  let stream = await subscribe(app, CHANGES, { after: null }, bearer);
  await eventually(async () => {
    if (stream.status !== 429) return true;
    stream.close();
    stream = await subscribe(app, CHANGES, { after: null }, bearer);
    return false;
  }, 30_000);
  return stream;
}

async function post(bearer: string, query: string, variables?: Record<string, unknown>) {
  const response = await fetch(app.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json', authorization: `Bearer ${bearer}` },
    body: JSON.stringify({ query, variables }),
  });
  return {
    status: response.status,
    ...((await response.json()) as { data?: Record<string, any>; errors?: { extensions?: Record<string, any> }[] }),
  };
}

describe('a subscription pays for what it delivers', () => {
  it('replayed history costs per event what a page does: the stream slows to the budget, in order, nothing missed', async () => {
    const bearer = await token('stream-reader', 'community:feed', '1h');
    const before = await metric(app, 'community_fair_share_admitted_cost_total', { class: 'service' });
    const stream = await subscribe(app, CHANGES, { after: null }, bearer);
    expect(stream.status).toBe(200);
    const users: string[] = [];
    while (users.length < EVENTS) {
      const event = await stream.next();
      expect(event?.event).toBe('next');
      users.push(event!.data.data.communityMembershipChanges.userId);
    }
    stream.close();
    expect(users).toEqual(Array.from({ length: EVENTS }, (_, i) => String(90001 + i)));
    // One point to open (which brings the first event), one for every event after it: 100 in all, three
    // budgets of 30 and what refilled meanwhile; the stream waited for the refill rather than end.
    const spent = (await metric(app, 'community_fair_share_admitted_cost_total', { class: 'service' })) - before;
    expect(spent).toBe(EVENTS);
  });

  it('re-opening the stream from an old cursor is charged again for every event it replays', async () => {
    const bearer = await token('stream-reader', 'community:feed', '1h');
    const spend = async () => {
      const before = await metric(app, 'community_fair_share_admitted_cost_total', { class: 'service' });
      const stream = await openFeed(bearer);
      for (let i = 0; i < 40; i++) expect((await stream.next())?.event).toBe('next');
      stream.close();
      return (await metric(app, 'community_fair_share_admitted_cost_total', { class: 'service' })) - before;
    };
    expect(await spend()).toBeGreaterThanOrEqual(40);
    expect(await spend()).toBeGreaterThanOrEqual(40);
  });

  it('a paging reader pays the same per event, and the budget a stream spent holds back its other requests', async () => {
    const pager = await token('page-reader', 'community:feed', '1h');
    const page = await post(pager, '{ communityMembershipChangePage(first: 20) { changes { cursor } } }');
    expect(page.status).toBe(200);
    expect(page.data!['communityMembershipChangePage'].changes).toHaveLength(20);
    // The stream reader, its bucket emptied by a stream of 30 events, is refused its next page at once.
    // More history first: the stream keeps the bucket dry for as long as it replays (10 s here), so a
    // page asked for late on a loaded machine is still refused.
    await db.query('SELECT leave_community_layer(g::text::u64) FROM generate_series(90101, 90400) g');
    const bearer = await token('stream-reader', 'community:feed', '1h');
    const stream = await openFeed(bearer);
    for (let i = 0; i < 31; i++) expect((await stream.next())?.event).toBe('next');
    const refused = await post(bearer, '{ communityMembershipChangePage(first: 20) { changes { cursor } } }');
    stream.close();
    expect(refused.status).toBe(429);
    expect(refused.errors![0]!.extensions).toMatchObject({ code: 'RATE_LIMITED', limit: 'budget' });
  });

  it('the status stream pays per change too, charged to the user who reads it', async () => {
    const user = await token('90500');
    const admin = await token('9', 'community:admin');
    const stream = await subscribe(app, 'subscription { communityLayerStatusChanged { status } }', {}, user);
    expect((await stream.next())?.data.data.communityLayerStatusChanged.status).toBe('ACTIVE');
    const before = await metric(app, 'community_fair_share_admitted_cost_total', { class: 'user' });
    // One change at a time: the stream keeps only the latest state a client has not taken (never a
    // queue), so changes made faster than it reads may arrive as one.
    const seen = [];
    for (const flip of ['leave', 'rejoin', 'leave']) {
      expect((await post(admin, `mutation { ${flip}CommunityLayer(userId: "90500") { status } }`)).status).toBe(200);
      seen.push((await stream.next())?.data.data.communityLayerStatusChanged.status);
    }
    stream.close();
    expect(seen).toEqual(['LEFT', 'ACTIVE', 'LEFT']);
    // Each change costs what opening did (the membership: 1), charged to the user who reads the stream.
    expect((await metric(app, 'community_fair_share_admitted_cost_total', { class: 'user' })) - before).toBe(3);
  });
});

describe('what an operation that ran reports it cost', () => {
  it('never less than the fields it resolved: an empty page costs what its page and the items it could hold do', async () => {
    // An admin (a user's bucket here, 20, is smaller than this query's cost).
    const user = await token('9', 'community:admin');
    const query = '{ communityContributions(userId: "90600", first: 10) { edges { node { signalId } } } }';
    for (const accept of ['application/graphql-response+json', 'text/event-stream']) {
      const response = await fetch(app.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept, authorization: `Bearer ${user}` },
        body: JSON.stringify({ query }),
      });
      const text = await response.text();
      const body = JSON.parse(accept === 'text/event-stream' ? /^data: (.*)$/m.exec(text)![1]! : text);
      expect(body.data.communityContributions.edges).toEqual([]);
      // The connection (1) and 10 edges of an edge and a node each (20): what was charged, and spent.
      expect(body.extensions.cost).toMatchObject({ requestedQueryCost: 21, actualQueryCost: 21 });
    }
  });
});
