import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../src/app.js';
import { loadConfig } from '../src/config/config.js';
import { capturedLog, eventually, freshDatabase, readiness, rowCounts, sqlClient, startApp, token } from './support/harness.js';
import { StallingProxy } from './support/stalling-proxy.js';

const USER = '4200';
const WRITES = {
  leave: { query: 'mutation { leaveCommunityLayer(userId: "4200") { status } }' },
  signal: {
    query: 'mutation ($input: SignalInput!) { signal(input: $input) { signalId } }',
    variables: { input: { userId: USER, itemId: 'db-failure', kind: 'VIEW', context: { cohortIds: ['c'] } } },
  },
  signals: {
    query: 'mutation ($inputs: [SignalInput!]!) { signals(inputs: $inputs) { signalId } }',
    variables: { inputs: [{ userId: USER, itemId: 'db-failure', kind: 'LIKE', context: { cohortIds: ['c'] } }] },
  },
};

/** One request as a client sees it: status, Retry-After, the first error's code. */
async function send(app: App, operation: { query: string; variables?: unknown }) {
  const response = await fetch(app.url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/graphql-response+json',
      authorization: `Bearer ${await token('1', 'community:admin signals:write')}`,
    },
    body: JSON.stringify(operation),
  });
  const body = (await response.json()) as { errors?: { extensions?: { code?: string } }[] };
  return { status: response.status, retryAfter: response.headers.get('retry-after'), code: body.errors?.[0]?.extensions?.code ?? null };
}

async function expectRetryable(app: App) {
  for (const operation of Object.values(WRITES)) {
    expect(await send(app, operation)).toEqual({ status: 503, retryAfter: '1', code: 'SERVICE_UNAVAILABLE' });
  }
}

async function terminateSessions(admin: pg.Client, database: string) {
  await admin.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()', [database]);
}

describe('a read-only database (a standby, a demoted primary)', () => {
  let app: App;
  let admin: pg.Client;
  let database: string;

  beforeAll(async () => {
    const url = await freshDatabase();
    database = new URL(url).pathname.slice(1);
    admin = await sqlClient(url);
    app = await startApp(url);
  });
  afterAll(async () => {
    await app?.stop();
    await admin?.end();
  });

  it('answers every write with 503 SERVICE_UNAVAILABLE and Retry-After, turns /readyz false, writes nothing, and recovers by itself', async () => {
    expect((await send(app, WRITES.signal)).status).toBe(200);
    const before = await rowCounts(admin);
    await admin.query(`ALTER DATABASE ${database} SET default_transaction_read_only = on`);
    // What a demotion does to the sessions: they end, and the new ones are read-only.
    await terminateSessions(admin, database);
    await eventually(async () => (await readiness(app)).checks['database'] === false);
    await expectRetryable(app);
    // A second round: the sessions that answered read-only were dropped, and new ones are read-only too.
    await expectRetryable(app);
    expect((await readiness(app)).ok).toBe(false);
    await admin.query(`ALTER DATABASE ${database} RESET default_transaction_read_only`);
    await terminateSessions(admin, database);
    await eventually(async () => (await readiness(app)).ok);
    expect(await rowCounts(admin)).toEqual(before);
    expect((await send(app, WRITES.signal)).status).toBe(200);
    expect((await send(app, WRITES.leave)).status).toBe(200);
  });
});

describe('a database that stops answering (a TCP path that goes silent)', () => {
  let app: App;
  let admin: pg.Client;
  const proxy = new StallingProxy();

  beforeAll(async () => {
    const url = await freshDatabase();
    admin = await sqlClient(url);
    // The client deadline backs up statement_timeout, which a silent server never reports.
    app = await startApp(await proxy.start(url), {
      DB_STATEMENT_TIMEOUT_MS: '1000',
      DB_QUERY_TIMEOUT_MS: '2000',
      DB_ACQUIRE_TIMEOUT_MS: '1000',
    });
  });
  afterAll(async () => {
    proxy.resume();
    await app?.stop();
    await proxy.stop();
    await admin?.end();
  });

  it('answers requests that hold a connection with 503 and Retry-After instead of hanging, turns /readyz false, and recovers by itself', async () => {
    expect((await send(app, WRITES.signal)).status).toBe(200);
    expect(proxy.connections).toBeGreaterThan(0);
    proxy.stall();
    // Each of these takes one of the pooled connections that went silent, or waits for a new one.
    await Promise.all([expectRetryable(app), expectRetryable(app)]);
    expect((await readiness(app)).checks['database']).toBe(false);
    proxy.resume();
    await eventually(async () => (await readiness(app)).ok);
    expect((await send(app, WRITES.signal)).status).toBe(200);
  });
});

describe('a signal when the database stops answering', () => {
  const proxy = new StallingProxy();
  const log = capturedLog();
  let app: App;

  beforeAll(async () => {
    app = await startApp(
      await proxy.start(await freshDatabase()),
      { DB_STATEMENT_TIMEOUT_MS: '1000', DB_QUERY_TIMEOUT_MS: '2000', DB_ACQUIRE_TIMEOUT_MS: '1000' },
      { logger: log.logger },
    );
  });
  afterAll(async () => {
    proxy.resume();
    await app?.stop();
    await proxy.stop();
  });

  // Its 503 comes after one deadline, as a leave's or a status read's does: its group is not resent
  // (each resend would wait the deadline again) nor split into requests written one by one.
  it('answers 503 after one attempt of its group, then is stored once the database answers again', async () => {
    expect((await send(app, WRITES.signal)).status).toBe(200);
    proxy.stall();
    const answers = await Promise.all([send(app, WRITES.signal), send(app, WRITES.signals), send(app, WRITES.signal)]);
    expect(answers).toEqual(Array(3).fill({ status: 503, retryAfter: '1', code: 'SERVICE_UNAVAILABLE' }));
    const messages = log.entries.map((entry) => entry.msg);
    expect(messages).not.toContain('signal group failed; resending it with the same event ids');
    expect(messages).not.toContain('signal group failed; writing its requests one by one');
    proxy.resume();
    await eventually(async () => (await readiness(app)).ok);
    expect((await send(app, WRITES.signal)).status).toBe(200);
  });
});

describe('the client-side deadline', () => {
  it('defaults to a second past statement_timeout, and must exceed it when set', () => {
    expect(loadConfig({}).database).toMatchObject({ statementTimeoutMs: 5_000, queryTimeoutMs: 6_000 });
    expect(loadConfig({ DB_STATEMENT_TIMEOUT_MS: '600000' }).database.queryTimeoutMs).toBe(601_000);
    expect(() => loadConfig({ DB_STATEMENT_TIMEOUT_MS: '2000', DB_QUERY_TIMEOUT_MS: '2000' })).toThrow(
      /DB_QUERY_TIMEOUT_MS: must exceed DB_STATEMENT_TIMEOUT_MS/,
    );
  });
});
