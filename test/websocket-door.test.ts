import net from 'node:net';
import { TOKEN_HEADER_KEY } from 'graphql-sse';
import { createClient, type Client } from 'graphql-ws';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import type { App } from '../src/app.js';
import { eventually, freshDatabase, gql, metric, sqlClient, startApp, token } from './support/harness.js';

/**
 * Every transport passes the same admission (issue 25): over graphql-ws, large operations take the
 * HTTP bulk door's places (or are refused OVERLOADED) before they are parsed and coerced, and a
 * socket has a bounded number of operations in flight.
 */

const SIGNALS = `mutation Flood($inputs: [SignalInput!]!) { signals(inputs: $inputs) { forwarded } }`;
const STATUS = `query ($u: UInt64) { communityLayerStatus(userId: $u) { status } }`;
const WATCH = `subscription ($u: UInt64) { communityLayerStatusChanged(userId: $u) { status } }`;

interface Answer {
  data?: { signals?: { forwarded: number } } | null;
  errors?: { message: string; extensions?: Record<string, unknown> }[];
}

let app: App;
let db: pg.Client;
const clients: Client[] = [];

beforeAll(async () => {
  const databaseUrl = await freshDatabase();
  // The doors are under test, not the budgets: a user's 1000-signal batches may outrun a user's budget.
  app = await startApp(databaseUrl, {
    BULK_REQUESTS_MAX: '1',
    BULK_REQUESTS_WAITING_MAX: '2',
    // Held-back bodies keep their places however slow the machine (the default cuts them after 5 s).
    BULK_BODY_TIMEOUT_MS: '600000',
    WEBSOCKET_OPERATIONS_PER_SOCKET_MAX: '4',
    RETRY_AFTER_SECONDS: '2',
    FAIR_SHARE: 'false',
  });
  db = await sqlClient(databaseUrl);
});

afterAll(async () => {
  await Promise.all(clients.map((client) => client.dispose()));
  await db?.end();
  await app?.stop();
});

async function socket(userId: string): Promise<Client> {
  const client = createClient({
    url: app.url.replace(/^http/, 'ws'),
    webSocketImpl: WebSocket,
    connectionParams: { authorization: `Bearer ${await token(userId, 'signals:write')}` },
    retryAttempts: 0,
  });
  clients.push(client);
  return client;
}

/** One operation's answer: its result, or its errors (graphql-ws sends an error message for a refusal). */
function run(client: Client, query: string, variables: Record<string, unknown>): Promise<Answer> {
  return new Promise((resolve, reject) => {
    let answer: Answer = {};
    client.subscribe(
      { query, variables },
      {
        next: (result) => void (answer = result as Answer),
        error: (error) => (Array.isArray(error) ? resolve({ errors: error }) : reject(error)),
        complete: () => resolve(answer),
      },
    );
  });
}

/** 1,000 signals of `userId` (about 60 kB); `invalid`: the last one has a kind no enum has, so coercion would refuse it. */
function batch(userId: string, invalid: boolean): Record<string, unknown> {
  const inputs = Array.from({ length: 1000 }, (_, i) => ({
    userId,
    itemId: `flood-${i % 7}`,
    kind: invalid && i === 999 ? 'NOPE' : 'VIEW',
  }));
  return { inputs };
}

const code = (answer: Answer) => answer.errors?.[0]?.extensions?.['code'];

describe('graphql-ws behind the bulk door', () => {
  it('refuses a flood of large mutations OVERLOADED before coercion, writes only admitted batches, and small HTTP queries still answer', async () => {
    const sockets = await Promise.all(Array.from({ length: 8 }, (_, i) => socket(String(900 + i))));
    const shedBefore = await metric(app, 'community_signal_requests_shed_total');
    // Even sockets send valid batches, odd ones batches that coercion would refuse (BAD_USER_INPUT).
    const flood = sockets.flatMap((client, i) =>
      Array.from({ length: 4 }, () => run(client, SIGNALS, batch(String(900 + i), i % 2 === 1))),
    );
    const small = Array.from({ length: 20 }, () => gql(app, STATUS, { u: '900' }));
    const [answers, queries] = await Promise.all([Promise.all(flood), Promise.all(small)]);

    for (const query of queries) {
      expect(query.errors).toBeUndefined();
      expect(query.data?.communityLayerStatus.status).toBe('ACTIVE');
    }
    const refused = answers.filter((answer) => code(answer) === 'OVERLOADED');
    for (const answer of refused) {
      expect(answer.errors![0]!.extensions).toMatchObject({ code: 'OVERLOADED', retryAfterSeconds: 2 });
      expect(answer.errors![0]!.extensions!['http']).toBeUndefined();
    }
    // Invalid batches refused OVERLOADED were never coerced (coercion would have said BAD_USER_INPUT).
    const invalid = answers.filter((_, index) => Math.floor(index / 4) % 2 === 1);
    expect(invalid.filter((answer) => code(answer) === 'OVERLOADED').length).toBeGreaterThan(0);
    for (const answer of invalid) expect(['OVERLOADED', 'BAD_USER_INPUT']).toContain(code(answer));
    expect(await metric(app, 'community_signal_requests_shed_total')).toBe(shedBefore + refused.length);

    // Only admitted batches were written, each whole.
    const admitted = answers.filter((answer) => answer.data?.signals);
    const { rows } = await db.query(`SELECT count(*)::int AS n FROM signal WHERE user_id BETWEEN 900 AND 907`);
    expect(rows[0].n).toBe(admitted.length * 1000);
    expect(await metric(app, 'community_bulk_requests_in_progress')).toBe(0);
  });

  it('bounds the operations in flight on one socket', async () => {
    const client = await socket('950');
    const streams = Array.from({ length: 4 }, () => client.iterate({ query: WATCH }));
    for (const stream of streams) expect(((await stream.next()).value as Answer).errors).toBeUndefined();
    const fifth = await run(client, STATUS, { u: '950' });
    expect(fifth.errors?.[0]?.extensions).toMatchObject({ code: 'OVERLOADED', limit: 'perSocket', max: 4, retryAfterSeconds: 2 });
    await streams[0]!.return!();
    const again = await run(client, STATUS, { u: '950' });
    expect(again.errors).toBeUndefined();
    for (const stream of streams.slice(1)) await stream.return!();
  });

  it('shares its places with HTTP and graphql-sse: while bulk HTTP bodies hold the door, large operations of either are refused, small ones pass', async () => {
    // Three bulk POSTs whose bodies are arriving (BULK_REQUESTS_MAX 1 + BULK_REQUESTS_WAITING_MAX 2): the door is full.
    const bearer = await token('960', 'signals:write');
    const url = new URL(app.url);
    const held: net.Socket[] = [];
    for (const [inProgress, waiting] of [
      [0, 1],
      [0, 2],
      [0, 3],
    ] as const) {
      const socket = net.connect(Number(url.port), url.hostname);
      socket.write(
        `POST ${url.pathname} HTTP/1.1\r\nHost: ${url.host}\r\nContent-Type: application/json\r\nAuthorization: Bearer ${bearer}\r\nContent-Length: 60000\r\n\r\n`,
      );
      held.push(socket);
      await eventually(
        async () =>
          (await metric(app, 'community_bulk_requests_in_progress')) === inProgress &&
          (await metric(app, 'community_bulk_requests_waiting')) === waiting,
      );
    }
    const before = (await db.query(`SELECT count(*)::int AS n FROM signal WHERE user_id = 960`)).rows[0].n;

    const client = await socket('960');
    const large = await run(client, SIGNALS, batch('960', false));
    expect(large.errors?.[0]?.extensions).toMatchObject({ code: 'OVERLOADED', retryAfterSeconds: 2 });
    expect((await run(client, STATUS, { u: '960' })).errors).toBeUndefined();

    // graphql-sse single connection: operations are POSTs, so they pass the HTTP door by Content-Length.
    const reserved = await fetch(app.url, { method: 'PUT', headers: { authorization: `Bearer ${bearer}` } });
    const streamToken = await reserved.text();
    const operation = await fetch(app.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', [TOKEN_HEADER_KEY]: streamToken },
      body: JSON.stringify({ query: SIGNALS, variables: batch('960', false), extensions: { operationId: 'one' } }),
    });
    expect(operation.status).toBe(503);
    expect(operation.headers.get('retry-after')).toBe('2');
    expect(((await operation.json()) as Answer).errors?.[0]?.extensions).toMatchObject({ code: 'OVERLOADED' });
    expect((await db.query(`SELECT count(*)::int AS n FROM signal WHERE user_id = 960`)).rows[0].n).toBe(before);

    // Once the bodies are gone, the same large operation enters and is written.
    for (const socket of held) socket.destroy();
    await eventually(
      async () => (await metric(app, 'community_bulk_requests_waiting')) + (await metric(app, 'community_bulk_requests_in_progress')) === 0,
    );
    const entered = await run(client, SIGNALS, batch('960', false));
    expect(entered.errors).toBeUndefined();
    expect(entered.data?.signals).toHaveLength(1000);
    expect((await db.query(`SELECT count(*)::int AS n FROM signal WHERE user_id = 960`)).rows[0].n).toBe(before + 1000);
  });
});
