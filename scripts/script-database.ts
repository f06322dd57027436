import pg from 'pg';
import { loadConfig } from '../src/config/config.js';
import type { EmbeddedDatabase } from '../tooling/postgres/embedded.js';
import { startTemporaryPostgres } from '../tooling/postgres/temporary-postgres.js';
import { startPgBouncer, type PgBouncer } from '../tooling/pgbouncer.js';

export interface ScriptDatabase {
  database: EmbeddedDatabase;
  pgbouncer: PgBouncer | null;
  /** What a server on it is given: the URLs, and DB_SESSION_LIMITS=server behind PgBouncer. */
  environment: Record<string, string>;
  stop(): Promise<void>;
}

/**
 * The database of `npm run cluster` and of the production checks: an embedded PostgreSQL in a
 * temporary folder and, with `pgbouncer`, a PgBouncer in transaction mode before it (LISTEN and
 * migrations straight to PostgreSQL). A transaction pooler passes no session settings, so the role
 * carries the limits, set before PgBouncer opens a server session: the configured defaults, which
 * start-up then finds (a restated copy here would drift from them). `roleLimits` alone: the same, for a
 * PgBouncer the caller runs itself (the manifest check runs the PgBouncer image).
 */
export async function startScriptDatabase(options: { pgbouncer: boolean; roleLimits?: boolean }): Promise<ScriptDatabase> {
  const database = await startTemporaryPostgres('community_layer');
  if (options.pgbouncer || options.roleLimits) {
    const { statementTimeoutMs, lockTimeoutMs, idleInTransactionTimeoutMs } = loadConfig({}).database;
    const limits = {
      statement_timeout: statementTimeoutMs,
      lock_timeout: lockTimeoutMs,
      idle_in_transaction_session_timeout: idleInTransactionTimeoutMs,
    };
    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    for (const [setting, ms] of Object.entries(limits)) await client.query(`ALTER ROLE CURRENT_USER SET ${setting} = '${ms}ms'`);
    await client.end();
  }
  const pgbouncer = options.pgbouncer ? await startPgBouncer(database.url) : null;
  return {
    database,
    pgbouncer,
    environment: pgbouncer
      ? { DATABASE_URL: pgbouncer.pooled(database.url), DATABASE_LISTEN_URL: database.url, DB_SESSION_LIMITS: 'server' }
      : { DATABASE_URL: database.url, DATABASE_LISTEN_URL: database.url },
    stop: async () => {
      await pgbouncer?.stop();
      await database.stop();
    },
  };
}
