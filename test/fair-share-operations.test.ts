import { Sender } from '@community-layer/sender';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../src/app.js';
import { BUDGETS, post, SIGNAL, SIGNALS, signal, signalsOf, useBudgetedPair } from './support/fair-share-requests.js';
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
    const statuses: number[] = [];
    for (let i = 0; i < times; i++) statuses.push((await post(app, bearer, '{ rateLimit { remaining } }')).status);
    return { admitted: statuses.filter((status) => status === 200).length, refused: statuses.filter((status) => status === 429).length };
  };

  it('keeps enforcing, at budget / FAIR_SHARE_INSTANCES, neither open nor closed, and shares again once it answers', async () => {
    // Another session holds the buckets' table: every lease request waits, then fails.
    await db.query('BEGIN');
    await db.query('LOCK TABLE fair_share_bucket IN ACCESS EXCLUSIVE MODE');
    try {
      const during = await ask('5010', 30);
      // Ahead of its first lease an instance may spend budget / instances (10 of 20), and no more.
      expect(during.admitted).toBeGreaterThanOrEqual(1);
      expect(during.admitted).toBeLessThanOrEqual(10 + 2);
      expect(during.admitted + during.refused).toBe(30);
      await eventually(() => !app.services.fairShare.shared);
      const alone = await ask('5011', 30);
      expect(alone.admitted).toBeGreaterThanOrEqual(1);
      expect(alone.admitted).toBeLessThanOrEqual(10 + 2);
      expect(alone.admitted + alone.refused).toBe(30);
    } finally {
      await db.query('ROLLBACK');
    }
    await eventually(() => app.services.fairShare.shared, 20_000);
  });
});
