import { runMigrations } from 'graphile-worker';
// The migrations graphile-worker's runMigrations applies (the package has no exports map to hide them).
import { migrations } from 'graphile-worker/dist/generated/sql.js';
import type pg from 'pg';
import type { Logger } from 'pino';
import { workerLogger } from '../worker-logger.js';

/** The schema revision this build's graphile-worker runs on: its newest migration (files `000018.sql`…). */
export const WORKER_SCHEMA_REVISION = Math.max(...Object.keys(migrations).map((file) => Number.parseInt(file.slice(0, 6), 10)));

/** Serializes graphile-worker's schema install: migrations run at once on a new database race on CREATE SCHEMA. */
const INSTALL_LOCK = 1129073005;

/**
 * Installs or updates graphile-worker's schema (`graphile_worker`): part of `migrate`, run by the
 * role that owns the database, so the running service needs no CREATE anywhere (its worker's own
 * check at start only reads `graphile_worker.migrations` when the schema is current). Needs two
 * connections of `pool`: one holds the lock, graphile-worker takes the other.
 */
export async function migrateWorkerSchema(pool: pg.Pool, logger: Logger): Promise<void> {
  const client = await pool.connect();
  try {
    await client.query('SELECT pg_advisory_lock($1)', [INSTALL_LOCK]);
    await runMigrations({ pgPool: pool, noPreparedStatements: true, logger: workerLogger(logger) });
  } finally {
    await client.query('SELECT pg_advisory_unlock($1)', [INSTALL_LOCK]).catch(() => undefined);
    client.release();
  }
}
