import { Sender } from '@community-layer/sender';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../src/app.js';
import { BUDGETS, floodUntilRefused, post, SIGNAL, SIGNALS, signal, signalsOf, useBudgetedPair } from './support/fair-share-requests.js';
import { capturedLog, type Cluster, eventually, metric, token } from './support/harness.js';

/**
 * Fair share as the sender, operators and an outage meet it: the sender waits out refusals, the
 * access log names them, and budgets hold while the shared store does not answer. The budgets
 * themselves are in fair-share.test.ts.
 */

let cluster: Cluster;
let a: App;
let db: pg.Client;
useBudgetedPair((started, first) => ((cluster = started), (a = first), (db = started.db)));

describe('fair share and the sender', () => {
  it('the sender waits out 429 RATE_LIMITED and delivers every signal', async () => {
    const refusedBefore = await metric(a, 'community_fair_share_refused_cost_total', { class: 'service' });
    const sender = new Sender({
      url: a.url,
      token: await token('small-sender', 'signals:write', '1h'),
      maxBatchSize: 15,
      backoffMs: { initial: 10, max: 200 },
    });
    const outcomes = await Promise.all(Array.from({ length: 60 }, (_, i) => sender.send(signal('5013', i))));
    await sender.close();
    expect(outcomes.map((outcome) => outcome.result).filter((result) => result !== 'forwarded')).toEqual([]);
    expect(await signalsOf(db, '5013')).toBe(60);
    expect(await metric(a, 'community_fair_share_refused_cost_total', { class: 'service' })).toBeGreaterThan(refusedBefore);
  });
});

describe('fair share: refusals a client can act on', () => {
  it('while the bucket refills, a refusal at the door says no point is left, and to retry no sooner than a second', async () => {
    const bearer = await token('5014');
    await floodUntilRefused([a], '5014');
    // Asked again and again until the refill has let two more in: a point comes back each second,
    // and a dry caller's next request passes the door on this instance's share of it (a half, with
    // two instances), so for a while the bucket holds a point the door will not let through.
    const said = new Set<string>();
    let atTheDoor = 0;
    for (let admitted = 0, i = 1_000; admitted < 2; i++) {
      const response = await post(a, bearer, SIGNAL, { input: signal('5014', i) });
      if (response.status === 200) admitted++;
      // Refused before its body was read: no requested cost (refusals after parsing state theirs).
      else if (response.extensions?.['cost']?.requestedQueryCost === undefined) {
        atTheDoor++;
        said.add(
          JSON.stringify({
            status: response.status,
            ratelimit: response.headers.get('ratelimit')?.replace(/t=\d+$/, 't=…'),
            currentlyAvailable: response.extensions?.['cost']?.throttleStatus?.currentlyAvailable,
            retryAfterAtLeastOne: Number(response.headers.get('retry-after')) >= 1,
          }),
        );
      }
    }
    expect(atTheDoor).toBeGreaterThan(0);
    expect([...said].map((answer) => JSON.parse(answer))).toEqual([
      { status: 429, ratelimit: '"user";r=0;t=…', currentlyAvailable: 0, retryAfterAtLeastOne: true },
    ]);
  });
});

describe('fair share: what operators see', () => {
  it('the access log says which requests were limited', async () => {
    const { logger, entries } = capturedLog();
    const app = await cluster.startInstance({ ...BUDGETS, LOG_LEVEL: 'info', ACCESS_LOG_SAMPLE: '1' }, { logger });
    try {
      const bearer = await token('5008');
      const tooLarge = await post(app, bearer, SIGNALS, { inputs: Array.from({ length: 21 }, (_, i) => signal('5008', i)) });
      expect(tooLarge.status).toBe(429);
      const fine = await post(app, bearer, SIGNAL, { input: signal('5008', 99) });
      expect(fine.status).toBe(200);
      const lines = () => entries.filter((entry) => entry['log'] === 'access' && entry['path'] === '/graphql');
      await eventually(() => lines().length >= 2);
      expect(lines().map((line) => [line['status'], line['rateLimited'] ?? null])).toEqual([
        [429, 'budget'],
        [200, null],
      ]);
    } finally {
      await app.stop();
    }
  });
});

describe('fair share while its store does not answer', () => {
  let app: App;
  beforeAll(async () => {
    // Lock waits end after half a second here: the lease store fails fast while its table is held.
    app = await cluster.startInstance({ ...BUDGETS, DB_LOCK_TIMEOUT_MS: '500' });
  });
  afterAll(() => app?.stop());
  const ask = async (userId: string, times: number) => {
    const bearer = await token(userId);
    const started = Date.now();
    const statuses: number[] = [];
    // What each refusal said was left: never the point it refused (run ahead of its leases, the
    // instance stops while the shared bucket, as last seen, still holds points).
    const leftWhenRefused = new Set<string | null | undefined>();
    for (let i = 0; i < times; i++) {
      const response = await post(app, bearer, '{ rateLimit { remaining } }');
      statuses.push(response.status);
      if (response.status === 429) leftWhenRefused.add(response.headers.get('ratelimit')?.match(/;r=(\d+);/)?.[1]);
    }
    return {
      admitted: statuses.filter((status) => status === 200).length,
      refused: statuses.filter((status) => status === 429).length,
      leftWhenRefused: [...leftWhenRefused],
      // This instance's share of the refill while it asked (1 point a second between 2 instances).
      refilled: Math.ceil(((Date.now() - started) / 1000) * 0.5),
    };
  };

  it('keeps enforcing, at budget / FAIR_SHARE_INSTANCES, neither open nor closed, and shares again once it answers', async () => {
    // Another session holds the buckets' table: every lease request waits, then fails.
    await db.query('BEGIN');
    await db.query('LOCK TABLE fair_share_bucket IN ACCESS EXCLUSIVE MODE');
    try {
      const during = await ask('5010', 30);
      // Ahead of its first lease an instance may spend budget / instances (10 of 20) and its share of the refill, no more.
      expect(during.admitted).toBeGreaterThanOrEqual(1);
      expect(during.admitted).toBeLessThanOrEqual(10 + 2 + during.refilled);
      expect(during.admitted + during.refused).toBe(30);
      expect(during.leftWhenRefused).toEqual(['0']);
      await eventually(() => !app.services.fairShare.shared);
      const alone = await ask('5011', 30);
      expect(alone.admitted).toBeGreaterThanOrEqual(1);
      expect(alone.admitted).toBeLessThanOrEqual(10 + 2 + alone.refilled);
      expect(alone.admitted + alone.refused).toBe(30);
      expect(alone.leftWhenRefused).toEqual(['0']);
    } finally {
      await db.query('ROLLBACK');
    }
    await eventually(() => app.services.fairShare.shared, 20_000);
  });
});
