import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../src/app.js';
import { aggregateMismatches, boundaryViolations, type Operation } from '../tooling/invariants.js';
import { eventually, freshDatabase, metric, sqlClient, startApp } from './support/harness.js';
import { rawPost } from './support/raw-answer.js';
import { membershipOn, signalsOn } from './support/recorded-operations.js';
import { lockSignalTable, signalLockWaiters } from './support/signal-table-lock.js';

const SIGNAL = `mutation ($input: SignalInput!) { signal(input: $input) { signalId forwarded cohortsAttributed } }`;
const SIGNALS = `mutation ($inputs: [SignalInput!]!) { signals(inputs: $inputs) { signalId forwarded cohortsAttributed } }`;
/** The sender library's one operation (packages/sender/src/operations.graphql). */
const SEND_SIGNALS = `mutation SendSignals($inputs: [SignalInput!]!) { sendSignals(inputs: $inputs, invalid: SKIP) { storedCount invalidCount } }`;

const signalOf = (userId: string, itemId: string) => ({ input: { userId, itemId, kind: 'VIEW' } });

describe('load shedding', () => {
  let databaseUrl: string;
  let app: App;

  beforeAll(async () => {
    databaseUrl = await freshDatabase();
    app = await startApp(databaseUrl, {
      SIGNAL_QUEUE_MAX: '20',
      SIGNAL_BATCH_MAX: '5',
      SIGNAL_BATCH_CONCURRENCY: '1',
      DB_LOCK_TIMEOUT_MS: '600000',
      DB_STATEMENT_TIMEOUT_MS: '600000',
    });
  });

  afterAll(() => app?.stop());

  it('refuses past the queue bound at once with 503 OVERLOADED, drops abandoned work, and drains to empty', async () => {
    const blocker = await sqlClient(databaseUrl);
    const before = await blocker.query('SELECT count(*)::int AS n FROM signal');
    // Inserts into signal wait behind this lock: the first group stalls in the database.
    await lockSignalTable(blocker);
    const stalled = rawPost(app, SIGNAL, signalOf('7', 'stalled'));
    await eventually(async () => (await signalLockWaiters(blocker)) === 1);

    const abort = new AbortController();
    const abandoned = rawPost(app, SIGNAL, signalOf('7', 'abandoned'), abort.signal).catch((error: unknown) => error);
    await eventually(() => app.services.signals.queued === 1);
    abort.abort();
    await eventually(() => app.services.signals.queued === 0);
    expect(await abandoned).toBeInstanceOf(Error);

    const accepted = Array.from({ length: 20 }, (_, i) => rawPost(app, SIGNAL, signalOf('7', `accepted-${i}`)));
    await eventually(() => app.services.signals.queued === 20);
    const shed = await Promise.all(Array.from({ length: 10 }, (_, i) => rawPost(app, SIGNAL, signalOf('7', `shed-${i}`))));
    // Answered while the database is still blocked: nothing waited for it.
    expect(app.services.signals.queued).toBe(20);
    for (const response of shed) {
      expect(response.status).toBe(503);
      expect(response.retryAfter).toBe('1');
      expect(response.body.errors?.[0]?.extensions?.code).toBe('OVERLOADED');
      expect(response.body.errors?.[0]?.extensions).not.toHaveProperty('http');
    }

    await blocker.query('ROLLBACK');
    const results = await Promise.all([stalled, ...accepted]);
    for (const result of results) expect(result.status).toBe(200);
    expect(app.services.signals.queued).toBe(0);

    const items = await blocker.query(`SELECT item_id FROM signal WHERE user_id = 7 ORDER BY item_id`);
    expect(items.rows.map((row) => row.item_id)).toEqual(['stalled', ...Array.from({ length: 20 }, (_, i) => `accepted-${i}`)].sort());
    expect((await blocker.query('SELECT count(*)::int AS n FROM signal')).rows[0].n - before.rows[0].n).toBe(21);
    const metrics = await (await fetch(app.metricsUrl)).text();
    expect(metrics).toMatch(/^community_signal_requests_shed_total 10$/m);
    expect(metrics).toMatch(/^community_signals_abandoned_total 1$/m);
    expect(metrics).toMatch(/^community_signal_queue_depth 0$/m);
    await blocker.end();
  });

  it("sheds every field declared as signal ingestion before its input is read: signal, signals and the sender's sendSignals", async () => {
    const blocker = await sqlClient(databaseUrl);
    await lockSignalTable(blocker);
    const stalled = rawPost(app, SIGNAL, signalOf('9', 'stalled'));
    await eventually(async () => (await signalLockWaiters(blocker)) === 1);
    const accepted = Array.from({ length: 20 }, (_, i) => rawPost(app, SIGNAL, signalOf('9', `accepted-${i}`)));
    try {
      await eventually(() => app.services.signals.full);
      const shedBefore = await metric(app, 'community_signal_requests_shed_total');
      // Invalid inputs: past the shedding, each would be answered BAD_USER_INPUT, or as a SKIPped item.
      const invalid = { userId: '9', itemId: '', kind: 'VIEW' };
      const answers = [
        await rawPost(app, SIGNAL, { input: invalid }),
        await rawPost(app, SIGNALS, { inputs: [invalid] }),
        await rawPost(app, SEND_SIGNALS, { inputs: [invalid] }),
      ];
      expect(answers.map((answer) => `${answer.status} ${String(answer.body.errors?.[0]?.extensions?.code)}`)).toEqual(
        Array(3).fill('503 OVERLOADED'),
      );
      expect(await metric(app, 'community_signal_requests_shed_total')).toBe(shedBefore + 3);
    } finally {
      await blocker.query('ROLLBACK');
    }
    for (const result of await Promise.all([stalled, ...accepted])) expect(result.status).toBe(200);
    await blocker.end();
  });
});

describe('timeouts are retryable', () => {
  let databaseUrl: string;

  beforeAll(async () => {
    databaseUrl = await freshDatabase();
  });

  it('a lock wait past lock_timeout gets 503 SERVICE_UNAVAILABLE and writes nothing', async () => {
    const app = await startApp(databaseUrl, { DB_LOCK_TIMEOUT_MS: '100' }, { membershipSync: false });
    const blocker = await sqlClient(databaseUrl);
    try {
      await lockSignalTable(blocker);
      const response = await rawPost(app, SIGNAL, signalOf('8', 'locked-out'));
      await blocker.query('ROLLBACK');
      expect(response.status).toBe(503);
      expect(response.retryAfter).toBe('1');
      expect(response.body.errors?.[0]?.extensions?.code).toBe('SERVICE_UNAVAILABLE');
      expect((await blocker.query(`SELECT count(*)::int AS n FROM signal WHERE item_id = 'locked-out'`)).rows[0].n).toBe(0);
    } finally {
      await blocker.end();
      await app.stop();
    }
  });

  it('waiting past the pool-acquire timeout gets the same retryable answer; the requests holding connections finish', async () => {
    const app = await startApp(
      databaseUrl,
      { DB_POOL_MAX: '2', DB_ACQUIRE_TIMEOUT_MS: '1000', DB_LOCK_TIMEOUT_MS: '600000' },
      { membershipSync: false },
    );
    const blocker = await sqlClient(databaseUrl);
    try {
      const status = `query ($userId: UInt64!) { communityLayerStatus(userId: $userId) { status } }`;
      await blocker.query('BEGIN; LOCK TABLE community_membership IN ACCESS EXCLUSIVE MODE');
      let refused = 0;
      const answers = Array.from({ length: 6 }, (_, i) =>
        rawPost(app, status, { userId: String(i) }).then((answer) => {
          if (answer.status !== 200) refused++;
          return answer;
        }),
      );
      // Two requests hold both pooled connections, waiting on the lock, and cannot finish while
      // it is held; the other four wait for the pool until they are refused.
      await eventually(() => refused === 4, 30_000);
      await blocker.query('ROLLBACK');
      const settled = await Promise.all(answers);
      const outcomes = settled.map((answer) =>
        answer.status === 200 ? 'ok' : `${answer.status} ${String(answer.body.errors?.[0]?.extensions?.code)} ${answer.retryAfter}`,
      );
      expect(outcomes.filter((outcome) => outcome === 'ok')).toHaveLength(2);
      expect(outcomes.filter((outcome) => outcome === '503 SERVICE_UNAVAILABLE 1')).toHaveLength(4);
    } finally {
      await blocker.end();
      await app.stop();
    }
  });
});

describe('full batches on PostgreSQL default lock settings', () => {
  let databaseUrl: string;
  let apps: App[];

  beforeAll(async () => {
    databaseUrl = await freshDatabase();
    const environment = { SIGNAL_BATCH_CONCURRENCY: '8', DB_POOL_MAX: '12', SIGNAL_QUEUE_MAX: '8000' };
    apps = await Promise.all([startApp(databaseUrl, environment), startApp(databaseUrl, environment)]);
  });

  afterAll(() => Promise.all(apps.map((app) => app.stop())));

  it('8 concurrent 1000-user batches with leaves in between succeed with max_locks_per_transaction = 64; I1–I3 hold', async () => {
    const db = await sqlClient(databaseUrl);
    expect((await db.query('SHOW max_locks_per_transaction')).rows[0].max_locks_per_transaction).toBe('64');
    const history: Operation[] = [];
    const batch = async (round: number, instance: number) => {
      const inputs = Array.from({ length: 1000 }, (_, i) => ({
        userId: String(100_000 + i),
        itemId: `item-${(i + round) % 7}`,
        kind: 'LIKE',
        context: { cohortIds: [`c-${i % 3}`, `c-${(i + round) % 5}`] },
      }));
      history.push(...(await signalsOn(apps[instance]!, inputs, instance)));
    };
    const membership = async (kind: 'leave' | 'rejoin', userId: string, instance: number) =>
      history.push(await membershipOn(apps[instance]!, kind, userId, instance));
    await Promise.all([
      ...Array.from({ length: 8 }, (_, round) => batch(round, round % 2)),
      ...Array.from({ length: 40 }, (_, i) => membership(i % 4 === 3 ? 'rejoin' : 'leave', String(100_000 + i * 23), i % 2)),
    ]);
    expect(history.filter((op) => op.kind === 'signal')).toHaveLength(8000);
    expect(history.every((op) => op.ok)).toBe(true);
    expect(await boundaryViolations(db, history)).toEqual([]);
    expect(await aggregateMismatches(db)).toEqual([]);
    await db.end();
  });
});
