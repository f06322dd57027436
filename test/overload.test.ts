import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../src/app.js';
import { aggregateMismatches, boundaryViolations, type Operation } from '../tooling/invariants.js';
import { eventually, freshDatabase, gql, metric, sqlClient, startApp, token, type GraphQLResponse } from './support/harness.js';

const SIGNAL = `mutation ($input: SignalInput!) { signal(input: $input) { signalId forwarded cohortsAttributed } }`;
const SIGNALS = `mutation ($inputs: [SignalInput!]!) { signals(inputs: $inputs) { signalId forwarded cohortsAttributed } }`;
/** The sender library's one operation (packages/sender/src/operations.graphql). */
const SEND_SIGNALS = `mutation SendSignals($inputs: [SignalInput!]!) { sendSignals(inputs: $inputs, invalid: SKIP) { storedCount invalidCount } }`;

/** The raw HTTP answer, to check status and headers too. */
async function post(app: App, query: string, variables: Record<string, unknown>, signal?: AbortSignal) {
  const response = await fetch(app.url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/graphql-response+json',
      authorization: `Bearer ${await token('1', 'signals:write community:admin')}`,
    },
    body: JSON.stringify({ query, variables }),
    signal,
  });
  return {
    status: response.status,
    retryAfter: response.headers.get('retry-after'),
    body: (await response.json()) as Omit<GraphQLResponse, 'status'>,
  };
}

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
    await blocker.query('BEGIN; LOCK TABLE signal IN SHARE ROW EXCLUSIVE MODE');
    const stalled = post(app, SIGNAL, signalOf('7', 'stalled'));
    await eventually(
      async () =>
        (
          await blocker.query(
            `SELECT 1 FROM pg_locks WHERE database = (SELECT oid FROM pg_database WHERE datname = current_database()) AND NOT granted AND relation = 'signal'::regclass`,
          )
        ).rowCount === 1,
    );

    const abort = new AbortController();
    const abandoned = post(app, SIGNAL, signalOf('7', 'abandoned'), abort.signal).catch((error: unknown) => error);
    await eventually(() => app.services.signals.queued === 1);
    abort.abort();
    await eventually(() => app.services.signals.queued === 0);
    expect(await abandoned).toBeInstanceOf(Error);

    const accepted = Array.from({ length: 20 }, (_, i) => post(app, SIGNAL, signalOf('7', `accepted-${i}`)));
    await eventually(() => app.services.signals.queued === 20);
    const shed = await Promise.all(Array.from({ length: 10 }, (_, i) => post(app, SIGNAL, signalOf('7', `shed-${i}`))));
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
    await blocker.query('BEGIN; LOCK TABLE signal IN SHARE ROW EXCLUSIVE MODE');
    const stalled = post(app, SIGNAL, signalOf('9', 'stalled'));
    await eventually(
      async () =>
        (
          await blocker.query(
            `SELECT 1 FROM pg_locks WHERE database = (SELECT oid FROM pg_database WHERE datname = current_database()) AND NOT granted AND relation = 'signal'::regclass`,
          )
        ).rowCount === 1,
    );
    const accepted = Array.from({ length: 20 }, (_, i) => post(app, SIGNAL, signalOf('9', `accepted-${i}`)));
    try {
      await eventually(() => app.services.signals.full);
      const shedBefore = await metric(app, 'community_signal_requests_shed_total');
      // Invalid inputs: past the shedding, each would be answered BAD_USER_INPUT, or as a SKIPped item.
      const invalid = { userId: '9', itemId: '', kind: 'VIEW' };
      const answers = [
        await post(app, SIGNAL, { input: invalid }),
        await post(app, SIGNALS, { inputs: [invalid] }),
        await post(app, SEND_SIGNALS, { inputs: [invalid] }),
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
      await blocker.query('BEGIN; LOCK TABLE signal IN SHARE ROW EXCLUSIVE MODE');
      const response = await post(app, SIGNAL, signalOf('8', 'locked-out'));
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
        post(app, status, { userId: String(i) }).then((answer) => {
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
      const start = performance.now();
      const response = await gql(apps[instance]!, SIGNALS, { inputs });
      const end = performance.now();
      expect(response.errors).toBeUndefined();
      response.data!.signals.forEach((outcome: { signalId: string; forwarded: boolean; cohortsAttributed: number }, i: number) =>
        history.push({ kind: 'signal', userId: inputs[i]!.userId, instance, start, end, ok: true, ...outcome }),
      );
    };
    const membership = async (kind: 'leave' | 'rejoin', userId: string, instance: number) => {
      const start = performance.now();
      const response = await gql(apps[instance]!, `mutation ($userId: UInt64!) { ${kind}CommunityLayer(userId: $userId) { status } }`, {
        userId,
      });
      history.push({ kind, userId, instance, start, end: performance.now(), ok: !response.errors });
    };
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

/** A POST whose last byte is held back: the server has the headers and waits for the rest. */
function heldBackPost(app: App, bearer: string, body: string) {
  const bytes = Buffer.from(body);
  const request = http.request(app.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'content-length': bytes.length, authorization: `Bearer ${bearer}` },
  });
  const response = new Promise<{ status: number; retryAfter: string | undefined; body: Omit<GraphQLResponse, 'status'> }>(
    (resolve, reject) => {
      request.once('error', reject);
      request.once('response', (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.once('end', () =>
          resolve({ status: res.statusCode!, retryAfter: res.headers['retry-after'], body: JSON.parse(Buffer.concat(chunks).toString()) }),
        );
      });
    },
  );
  request.write(bytes.subarray(0, -1));
  return { response, finish: () => request.end(bytes.subarray(-1)), abandon: () => request.destroy() };
}

describe('the door for bulk requests', () => {
  let databaseUrl: string;
  let app: App;
  let bearer: string;
  const batch = (tag: string) =>
    JSON.stringify({
      query: SIGNALS,
      variables: { inputs: Array.from({ length: 30 }, (_, i) => ({ userId: '9', itemId: `${tag}-${i}`, kind: 'VIEW' })) },
    });

  beforeAll(async () => {
    databaseUrl = await freshDatabase();
    // Never busy: these cases are about places at the door, not the event loop's load.
    // Held-back bodies stay within BULK_BODY_TIMEOUT_MS however slow the machine (test/slow-clients.test.ts covers it).
    app = await startApp(databaseUrl, {
      BULK_REQUEST_BYTES: '1024',
      BULK_REQUESTS_MAX: '1',
      BULK_REQUESTS_WAITING_MAX: '1',
      BULK_MAX_EVENT_LOOP_UTILIZATION: '1',
      BULK_BODY_TIMEOUT_MS: '600000',
    });
    bearer = await token('1', 'signals:write community:admin');
  });

  afterAll(() => app?.stop());

  it('holds BULK_REQUESTS_MAX + BULK_REQUESTS_WAITING_MAX places, bodies still arriving included, and refuses the rest at once; small requests pass; a client that leaves frees its place', async () => {
    expect(Buffer.byteLength(batch('x'))).toBeGreaterThan(1024);
    const shedBefore = await metric(app, 'community_signal_requests_shed_total');

    const first = heldBackPost(app, bearer, batch('first'));
    await eventually(async () => (await metric(app, 'community_bulk_requests_waiting')) === 1);
    const gone = heldBackPost(app, bearer, batch('gone'));
    await eventually(async () => (await metric(app, 'community_bulk_requests_waiting')) === 2);
    gone.abandon();
    await expect(gone.response).rejects.toThrow();
    await eventually(async () => (await metric(app, 'community_bulk_requests_waiting')) === 1);

    const second = heldBackPost(app, bearer, batch('second'));
    await eventually(async () => (await metric(app, 'community_bulk_requests_waiting')) === 2);
    const refused = heldBackPost(app, bearer, batch('refused'));
    refused.finish();
    const answer = await refused.response;
    expect(answer.status).toBe(503);
    expect(answer.retryAfter).toBe('1');
    expect(answer.body.errors?.[0]?.extensions?.code).toBe('OVERLOADED');
    // Small requests do not queue behind batches.
    const status = await gql(app, `query { communityLayerStatus(userId: "9") { status } }`);
    expect(status.status).toBe(200);
    expect(status.data?.communityLayerStatus.status).toBe('ACTIVE');
    // A body still arriving holds no place to decode.
    expect(await metric(app, 'community_bulk_requests_in_progress')).toBe(0);

    first.finish();
    second.finish();
    expect((await first.response).status).toBe(200);
    expect((await second.response).status).toBe(200);
    await eventually(async () => (await metric(app, 'community_bulk_requests_in_progress')) === 0);

    const db = await sqlClient(databaseUrl);
    const written = await db.query(
      `SELECT split_part(item_id, '-', 1) AS tag, count(*)::int AS n FROM signal WHERE user_id = 9 GROUP BY 1 ORDER BY 1`,
    );
    expect(written.rows).toEqual([
      { tag: 'first', n: 30 },
      { tag: 'second', n: 30 },
    ]);
    expect(await metric(app, 'community_signal_requests_shed_total')).toBe(shedBefore + 1);
    await db.end();
  });

  it('a batch leaves the door once decoded: waiting for its commit holds no place there', async () => {
    const blocker = await sqlClient(databaseUrl);
    await blocker.query('BEGIN; LOCK TABLE signal IN SHARE ROW EXCLUSIVE MODE');
    const stalled = heldBackPost(app, bearer, batch('stalled'));
    stalled.finish();
    const waitingOnLock = async () =>
      (
        await blocker.query(
          `SELECT count(*)::int AS n FROM pg_locks WHERE database = (SELECT oid FROM pg_database WHERE datname = current_database()) AND NOT granted AND relation = 'signal'::regclass`,
        )
      ).rows[0].n;
    await eventually(async () => (await waitingOnLock()) === 1);
    expect(await metric(app, 'community_bulk_requests_in_progress')).toBe(0);
    // With one place at the door, a second batch gets in only if the first left it.
    const next = heldBackPost(app, bearer, batch('next'));
    next.finish();
    await eventually(async () => (await waitingOnLock()) === 2);
    expect(await metric(app, 'community_bulk_requests_in_progress')).toBe(0);
    await blocker.query('ROLLBACK');
    expect((await stalled.response).status).toBe(200);
    expect((await next.response).status).toBe(200);
    await blocker.end();
  });
});
