import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../src/app.js';
import { eventually, freshDatabase, gql, metric, sqlClient, startApp, token } from './support/harness.js';
import { heldBackPost } from './support/held-back-post.js';
import { lockSignalTable, signalLockWaiters } from './support/signal-table-lock.js';

/** Bulk requests (signal batches) wait for a place at a door of their own; the rest of load shedding is in overload.test.ts. */

const SIGNALS = `mutation ($inputs: [SignalInput!]!) { signals(inputs: $inputs) { signalId forwarded cohortsAttributed } }`;

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
    await lockSignalTable(blocker);
    const stalled = heldBackPost(app, bearer, batch('stalled'));
    stalled.finish();
    const waitingOnLock = () => signalLockWaiters(blocker);
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
