import type pg from 'pg';
import { afterAll, expect, it } from 'vitest';
import type { App } from '../src/app.js';
import { eventually, freshDatabase, gql, sqlClient, startApp } from './support/harness.js';
import { idRecordingReceiver } from './support/webhook-receivers.js';

const REGISTER = `mutation ($url: String!) { registerWebhookEndpoint(url: $url, eventKinds: [LEFT]) { endpoint { id } } }`;

let holder: pg.Client | undefined;
let app: App | undefined;
afterAll(async () => {
  await holder?.end();
  await app?.stop();
});

// What once ended an instance: graphile-worker's cron ran one query as the worker started, and when
// it got no answer the library stopped its runner and left two rejections unhandled.
it('a worker whose queue tables do not answer at start retries; the instance serves meanwhile, then delivers, and stops cleanly', async () => {
  const url = await freshDatabase();
  holder = await sqlClient(url);
  // Every query on graphile-worker's tables waits behind this lock until its statement times out.
  await holder.query('SET idle_in_transaction_session_timeout = 0; BEGIN');
  await holder.query('LOCK TABLE graphile_worker._private_jobs, graphile_worker._private_known_crontabs IN ACCESS EXCLUSIVE MODE');
  app = await startApp(url, {
    DB_STATEMENT_TIMEOUT_MS: '1000',
    DB_QUERY_TIMEOUT_MS: '2000',
    WEBHOOK_ALLOWED_DESTINATIONS: '127.0.0.1',
    WEBHOOK_POLL_MS: '100',
  });
  // pg_locks, not pg_stat_activity: the holder's transaction would see one snapshot of the latter.
  const waits = async () =>
    new Set(
      (
        await holder!.query(
          `SELECT pid || '@' || waitstart AS wait FROM pg_locks WHERE NOT granted AND relation IN ('graphile_worker._private_jobs'::regclass, 'graphile_worker._private_known_crontabs'::regclass)`,
        )
      ).rows.map((row) => row.wait as string),
    );
  // The first queries to wait were given up (timed out), and the worker asks again.
  let first = new Set<string>();
  await eventually(async () => (first = await waits()).size > 0, 30_000);
  await eventually(async () => {
    const now = await waits();
    return now.size > 0 && [...first].every((wait) => !now.has(wait));
  }, 30_000);
  const status = await gql<{ communityLayerStatus: { status: string } }>(app, '{ communityLayerStatus(userId: "4200") { status } }');
  expect(status.data?.communityLayerStatus.status).toBe('ACTIVE');

  await holder.query('ROLLBACK');
  const receiver = await idRecordingReceiver(() => 204);
  try {
    expect((await gql(app, REGISTER, { url: receiver.url })).errors).toBeUndefined();
    expect((await gql(app, 'mutation { leaveCommunityLayer(userId: "4200") { status } }')).errors).toBeUndefined();
    await eventually(() => receiver.ids.length === 1, 30_000);
  } finally {
    await receiver.close();
  }
  await app.stop();
  app = undefined;
});
