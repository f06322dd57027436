import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import pg from 'pg';
import { afterAll, beforeAll, expect, inject, it } from 'vitest';
import { migrations } from '../src/db/migrations/index.js';
import { emptyDatabase } from '../tooling/databases.js';
import { sqlClient } from './support/harness.js';
import { startPgBouncer, type PgBouncer } from '../tooling/pgbouncer.js';

let bouncer: PgBouncer;
let admin: pg.Client;

beforeAll(async () => {
  bouncer = await startPgBouncer(inject('adminDatabaseUrl'), { roundRobin: true });
  admin = await sqlClient(inject('adminDatabaseUrl'));
});

afterAll(async () => {
  await admin?.end();
  await bouncer?.stop();
});

/** Opens `count` server sessions on the database behind the pooler, all at once, then returns them to it. */
async function warmPool(pooledUrl: string, count: number): Promise<void> {
  const clients = Array.from({ length: count }, () => new pg.Client({ connectionString: pooledUrl }));
  await Promise.all(clients.map((client) => client.connect()));
  await Promise.all(clients.map((client) => client.query('BEGIN; SELECT 1')));
  await Promise.all(clients.map((client) => client.query('COMMIT').then(() => client.end())));
}

it("the migrate tool (npm run migrate's, from the sources) with DATABASE_URL on a transaction pooler migrates over DATABASE_LISTEN_URL and leaves no migration lock behind", async () => {
  const directUrl = await emptyDatabase(inject('adminDatabaseUrl'));
  const pooledUrl = bouncer.pooled(directUrl);
  // Three server sessions taken in turn: Kysely's lock, its migration and its unlock each land on another one.
  await warmPool(pooledUrl, 3);
  // As npm run migrate runs it once built (the build itself is start-anywhere's): no tsc run here.
  await promisify(execFile)(process.execPath, ['scripts/cli.mjs', 'migrate'], {
    env: { ...process.env, NODE_ENV: 'test', LOG_LEVEL: 'warn', DATABASE_URL: pooledUrl, DATABASE_LISTEN_URL: directUrl },
  });

  const database = new URL(directUrl).pathname.slice(1);
  const { rows: locks } = await admin.query(
    `SELECT count(*)::int AS n FROM pg_locks l JOIN pg_database d ON d.oid = l.database WHERE l.locktype = 'advisory' AND d.datname = $1`,
    [database],
  );
  expect(locks[0].n).toBe(0);
  const db = await sqlClient(directUrl);
  try {
    const { rows } = await db.query('SELECT name FROM kysely_migration ORDER BY name');
    expect(rows.map((row) => row.name)).toEqual(Object.keys(migrations));
  } finally {
    await db.end();
  }
}, 120_000);
