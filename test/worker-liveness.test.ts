import { runMigrations } from 'graphile-worker';
import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { connectDatabase, type DatabaseHandle } from '../src/db/database.js';
import { WORKER_LOCK_NAMESPACE } from '../src/webhooks/queue.store.js';
import { WorkerLiveness } from '../src/webhooks/worker-liveness.js';
import { capturedLog, eventually, freshDatabase, sqlClient } from './support/harness.js';
import { StallingProxy } from './support/stalling-proxy.js';

const proxy = new StallingProxy();
/** Connections lent out or being opened (the pool keeps the sweep's idle one). */
const busy = () => database.pool.totalCount - database.pool.idleCount;
const log = capturedLog();
let admin: pg.Client;
let database: DatabaseHandle;
let liveness: WorkerLiveness | undefined;

beforeAll(async () => {
  const url = await freshDatabase();
  admin = await sqlClient(url);
  const direct = new pg.Pool({ connectionString: url, max: 1 });
  await runMigrations({ pgPool: direct }).finally(() => direct.end());
  database = connectDatabase({ url: await proxy.start(url), poolMax: 4, logger: log.logger });
});
afterAll(async () => {
  proxy.resume();
  await liveness?.stop(); // again, harmlessly; if the test failed midway, the pool's end would wait for its session
  await database?.close();
  await proxy.stop();
  await admin?.end();
});

// What once hung an app's stop: the session came back after the stop had let go of the old one,
// so it stayed out of the pool and the pool's end waited for it for ever.
it('a stop while its lock session is reconnecting waits for the new session and closes it', async () => {
  liveness = new WorkerLiveness(database.pool, database.db, log.logger, 60_000);
  await liveness.start();
  liveness.hold('worker-1');
  // pg_locks is the whole server's: other files' instances hold locks of the same kind.
  const holder = async () =>
    (
      await admin.query<{ pid: number }>(
        `SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND classid = $1 AND granted AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`,
        [WORKER_LOCK_NAMESPACE],
      )
    ).rows[0]?.pid;
  await eventually(async () => (await holder()) !== undefined);
  await eventually(() => busy() === 1); // the lock session alone: the start's sweep is over
  await admin.query('SELECT pg_terminate_backend($1)', [await holder()]);
  await eventually(() => log.entries.some((entry) => entry.msg === 'the delivery workers lost their liveness session; reconnecting'));
  // The reconnect's connection is opened and then answered nothing until the stop has begun.
  proxy.stall();
  await eventually(() => busy() === 1);
  const stopped = liveness.stop();
  proxy.resume();
  await stopped;
  expect(busy()).toBe(0);
  await eventually(async () => (await holder()) === undefined); // its end reaches the server a moment later
});
