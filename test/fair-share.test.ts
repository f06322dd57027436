import type pg from 'pg';
import { describe, expect, it, onTestFinished } from 'vitest';
import type { App } from '../src/app.js';
import { metric, token, type Cluster } from './support/harness.js';
import { subscribe } from './support/sse.js';
import {
  BUDGETS,
  expectEmptyBucketRefusal,
  expectRateLimited,
  floodUntilRefused,
  post,
  SIGNAL,
  SIGNALS,
  signal,
  signalsOf,
  useBudgetedPair,
} from './support/fair-share-requests.js';
import { operationFrom } from './support/websocket-from-address.js';

let cluster: Cluster;
let a: App;
let b: App;
let db: pg.Client;
useBudgetedPair((started, first, second) => ((cluster = started), (a = first), (b = second), (db = started.db)));

describe('fair share: a budget per caller, in the response', () => {
  it('states the budget on every response: headers, extensions.cost and rateLimit, as the cost model counts', async () => {
    const bearer = await token('5001');
    const response = await post(
      a,
      bearer,
      '{ communityLayerStatus { history(last: 7) { leftAtNs } } rateLimit { cost limit remaining restoreRate principalClass } }',
    );
    expect(response.status).toBe(200);
    // The cost model: the membership (1), 7 history entries (7), the rateLimit object (1).
    const cost = response.extensions!['cost'];
    expect(cost).toMatchObject({ requestedQueryCost: 9, actualQueryCost: 9, throttleStatus: { maximumAvailable: 20, restoreRate: 1 } });
    expect(response.data!['rateLimit']).toMatchObject({
      cost: 9,
      limit: 20,
      restoreRate: 1,
      principalClass: 'user',
      remaining: cost.throttleStatus.currentlyAvailable,
    });
    expect(cost.throttleStatus.currentlyAvailable).toBeLessThanOrEqual(20 - 9 + 1);
    expect(response.headers.get('ratelimit-policy')).toBe('"user";q=20;w=20');
    expect(response.headers.get('ratelimit')).toMatch(new RegExp(`^"user";r=${cost.throttleStatus.currentlyAvailable};t=\\d+$`));
  });

  it('states the budget on answers refused before they execute: a parse error, a validation error, no token', async () => {
    const bearer = await token('5013');
    for (const query of ['{ this is not GraphQL', '{ noSuchField }']) {
      const refused = await post(a, bearer, query);
      expect(refused.errors!.length).toBeGreaterThan(0);
      expect(refused.headers.get('ratelimit-policy')).toBe('"user";q=20;w=20');
      expect(refused.headers.get('ratelimit')).toMatch(/^"user";r=\d+;t=\d+$/);
    }
    const anonymous = await fetch(a.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: '{ noSuchField }' }),
    });
    expect(anonymous.headers.get('ratelimit-policy')).toBe('"anonymous";q=5;w=5');
    expect(anonymous.headers.get('ratelimit')).toMatch(/^"anonymous";r=\d+;t=\d+$/);
  });

  it('keys anonymous WebSocket callers by their address, as over HTTP: one spending its bucket leaves another address its own', async () => {
    // Loopback answers from any 127/8 address: two clients, two addresses, no token.
    const ask = (localAddress: string) => operationFrom(a, localAddress, '{ rateLimit { principalClass } }');
    let refused = null;
    for (let i = 0; i < 20 && !refused; i++) {
      const answer = await ask('127.0.0.3');
      if (answer.errors) refused = answer.errors[0]!.extensions;
    }
    expect(refused).toMatchObject({ code: 'RATE_LIMITED', limit: 'budget' });
    const other = await ask('127.0.0.2');
    expect(other.errors).toBeUndefined();
    expect(other.data).toEqual({ rateLimit: { principalClass: 'anonymous' } });
  });

  it('gives a named service the budget configured for it, and other services the default', async () => {
    const ask = async (sub: string) =>
      (await post(a, await token(sub, 'signals:write'), '{ rateLimit { limit restoreRate principalClass } }')).data!['rateLimit'];
    expect(await ask('big-service')).toEqual({ limit: 1000, restoreRate: 10, principalClass: 'service' });
    expect(await ask('small-service')).toEqual({ limit: 20_000, restoreRate: 5_000, principalClass: 'service' });
  });

  it('refuses a caller beyond its budget: 429, Retry-After, RATE_LIMITED, the headers, and nothing written', async () => {
    const before = await metric(a, 'community_fair_share_refused_cost_total', { class: 'user' });
    const { admitted, refusal } = await floodUntilRefused([a], '5002');
    expect(admitted).toBeGreaterThanOrEqual(20);
    expect(refusal.headers.get('ratelimit-policy')).toBe('"user";q=20;w=20');
    expect(refusal.data ?? null).toBeNull();
    // Refused at the door (its last point spent, the body unread), so no requested cost: the batch test has Yoga's.
    expectEmptyBucketRefusal(refusal);
    expect(await signalsOf(db, '5002')).toBe(admitted);
    expect(await metric(a, 'community_fair_share_refused_cost_total', { class: 'user' })).toBeGreaterThan(before);
  });

  it('refuses a caller refused lately again before parsing its request, while its bucket holds no point', async () => {
    const bearer = await token('5012');
    await floodUntilRefused([a], '5012');
    // Not even a document: a parse error would be a 400; the refusal comes first. (Retried while a
    // point was refilled in between, which sends the request on to be parsed: on a loaded machine
    // that may happen several times over, as requests slow to the refill's pace; the signal before
    // spends such a point.)
    let early: Awaited<ReturnType<typeof post>> | null = null;
    for (let i = 0; i < 50 && early?.status !== 429; i++) {
      await post(a, bearer, SIGNAL, { input: signal('5012', 500 + i) });
      early = await post(a, bearer, '{ this is not GraphQL');
    }
    expectEmptyBucketRefusal(early!);
  });

  it('charges a batch per signal: one larger than the budget is refused whole, and batches spend it as fast as singles', async () => {
    const bearer = await token('5003');
    const batch = (size: number, from: number) => ({ inputs: Array.from({ length: size }, (_, i) => signal('5003', from + i)) });
    const tooLarge = await post(a, bearer, SIGNALS, batch(21, 0));
    expect(tooLarge.status).toBe(429);
    expect(tooLarge.extensions!['cost']).toMatchObject({ requestedQueryCost: 21, actualQueryCost: 0 });
    const first = await post(a, bearer, SIGNALS, batch(15, 100));
    expect(first.status).toBe(200);
    expect(first.extensions!['cost']).toMatchObject({ requestedQueryCost: 15, actualQueryCost: 15 });
    const second = await post(a, bearer, SIGNALS, batch(15, 200));
    expect(second.status).toBe(429);
    expect(await signalsOf(db, '5003')).toBe(15);
  });

  it("limits one user's rejoins, whoever asks, never a leave, while another user's leave goes through", async () => {
    // An admin flips (its budget holds many changes: each costs 11 points, a user's bucket 20); the limit is 3 rejoins.
    const admin = await token('9', 'community:admin');
    const flip = (i: number, change: string) => post([a, b][i % 2]!, admin, `mutation { ${change}(userId: "5004") { status } }`);
    // Flip until the limit is spent: an instance may refuse early while another holds a lease
    // (never late), so a refusal before the third rejoin is the limit too, and the flips go on.
    let rejoins = 0;
    for (let i = 0; rejoins < 3; i++) {
      expect(i, 'rejoins admitted within 40 flips').toBeLessThan(40);
      expect((await flip(i, 'leaveCommunityLayer')).status).toBe(200);
      const rejoin = await flip(i + 1, 'rejoinCommunityLayer');
      if (rejoin.status === 200) {
        rejoins++;
        continue;
      }
      expectRateLimited(rejoin, 'membershipChanges');
    }
    // Spent, exactly: the admin's next rejoin is refused on either instance, and on a new one,
    // which knows nothing of the bucket yet (it asks the store, it does not assume a full one).
    const late = await cluster.startInstance(BUDGETS);
    onTestFinished(() => late.stop());
    for (const app of [a, b, late]) {
      expect((await post(app, admin, 'mutation { leaveCommunityLayer(userId: "5004") { status } }')).status).toBe(200);
      const refused = await post(app, admin, 'mutation { rejoinCommunityLayer(userId: "5004") { status } }');
      expectRateLimited(refused, 'membershipChanges');
    }
    // The limit spent, a leave still goes through, by the admin or the user; a rejoin, by either, does not.
    expect((await post(b, admin, 'mutation { leaveCommunityLayer(userId: "5004") { status } }')).status).toBe(200);
    expect((await post(a, await token('5004'), 'mutation { leaveCommunityLayer { status } }')).status).toBe(200);
    const byUser = await post(b, await token('5004'), 'mutation { rejoinCommunityLayer { status } }');
    expectRateLimited(byUser, 'membershipChanges');
    // Still LEFT: the refused rejoin wrote nothing.
    expect((await db.query("SELECT status FROM community_membership WHERE user_id = '5004'")).rows[0].status).toBe('LEFT');
    const other = await post(a, await token('5005'), 'mutation { leaveCommunityLayer { status } }');
    expect(other.status).toBe(200);
    expect(other.data!['leaveCommunityLayer']).toEqual({ status: 'LEFT' });
    // A change is charged its work beside its objects: 10 and the membership.
    expect(other.extensions!['cost']).toMatchObject({ requestedQueryCost: 11, actualQueryCost: 11 });
  });

  it('enforces one budget across two instances, not one each', async () => {
    const started = Date.now();
    const { admitted } = await floodUntilRefused([a, b], '5006');
    // Let the leases settle, then spend what is left on either instance: together about one budget.
    let more = 0;
    for (let i = 0; i < 60; i++) {
      const response = await post([b, a][i % 2]!, await token('5006'), SIGNAL, { input: signal('5006', 1000 + i) });
      if (response.status === 200) more++;
    }
    const refilled = Math.ceil((Date.now() - started) / 1000) * 1;
    // Two budgets would be 40 and more; one is 20, its refill, and at most one slice per instance ahead.
    expect(admitted + more).toBeLessThanOrEqual(20 + refilled + 2 * Math.ceil(20 / 8));
    expect(await signalsOf(db, '5006')).toBe(admitted + more);
  });

  it('charges a subscription when it opens: beyond the budget, 429 and one RATE_LIMITED error event, then the end', async () => {
    const bearer = await token('5007');
    const spend = await post(a, bearer, SIGNALS, { inputs: Array.from({ length: 20 }, (_, i) => signal('5007', i)) });
    expect(spend.status).toBe(200);
    // Costlier than what refills while the batch is answered on a loaded machine (its door opens at 1 point).
    const stream = await subscribe(a, 'subscription { communityLayerStatusChanged { status history(last: 15) { leftAtNs } } }', {}, bearer);
    expect(stream.status).toBe(429);
    expect(Number(stream.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    const event = await stream.next();
    expect(event?.data.data ?? null).toBeNull();
    expect(event?.data.errors[0].extensions).toMatchObject({ code: 'RATE_LIMITED', limit: 'budget' });
    expect((await stream.next())?.event).toBe('complete');
    expect(a.services.statusFeed.subscribers).toBe(0);
  });
});
