import type { Tracer } from '@opentelemetry/api';
import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import Cursor from 'pg-cursor';
import type { Logger } from 'pino';
import type { Config } from '../config/config.js';
import { discardingPool } from './discarding-pool.js';
import { databaseEndpoint, type DatabaseEndpoint } from './endpoint/database-endpoint.js';
import type { Database } from './schema.js';
import { statementSpans } from './statement-spans.js';

export interface DatabaseHandle {
  db: Kysely<Database>;
  pool: pg.Pool;
  close(): Promise<void>;
}

export interface DatabaseOptions {
  url: string;
  /** Shared with the instance's other connections, so all follow the same primary; else one for `url`. */
  endpoint?: DatabaseEndpoint;
  poolMax: number;
  logger: Logger;
  /** Session limits; unset in tools that run one long statement (migrations, schema dumps). */
  limits?: Config['database'];
  /** A span per statement; unset (tracing off, tools) adds nothing to a query. */
  tracer?: Tracer;
  /**
   * Commits that do not wait for their WAL flush (synchronous_commit = off, per session): for
   * bookkeeping whose loss in a PostgreSQL crash only repeats work. A crash loses a suffix of
   * them, never one before a synchronous commit (which flushes the WAL before it).
   */
  asynchronousCommit?: boolean;
  /** Its sessions' `application_name`, so pg_stat_activity tells an instance's pools apart. */
  applicationName?: string;
}

export function connectDatabase(options: DatabaseOptions): DatabaseHandle {
  const limits = options.limits;
  const endpoint = options.endpoint ?? databaseEndpoint(options.url);
  const pool = new pg.Pool({
    // Each new connection goes to the endpoint's current primary (pg itself takes one host).
    Client: endpoint.Client,
    max: options.poolMax,
    ...(options.applicationName ? { application_name: options.applicationName } : {}),
    keepAlive: true,
    // Also how long a query waits for a free connection: past it, a retryable error, not a queue.
    connectionTimeoutMillis: limits?.acquireTimeoutMs ?? 10_000,
    // statement_timeout runs in the server: a peer that stopped answering never sends its error.
    ...(limits ? { query_timeout: limits.queryTimeoutMs } : {}),
    // A transaction pooler refuses these startup parameters; with `server` the role carries them.
    ...(limits?.sessionLimits === 'startup'
      ? {
          statement_timeout: limits.statementTimeoutMs,
          lock_timeout: limits.lockTimeoutMs,
          idle_in_transaction_session_timeout: limits.idleInTransactionTimeoutMs,
        }
      : {}),
  });
  // A client whose backend dies emits 'error': idle ones through the pool, checked-out ones (pg-pool
  // removes its listener while a client is lent) on the client itself. Unhandled, either would
  // crash the process; the query that was running gets the error anyway.
  pool.on('error', (error) => options.logger.warn({ err: error }, 'idle database connection lost'));
  pool.on('connect', (client) => {
    client.on('error', (error) => options.logger.warn({ err: error }, 'database connection lost'));
    // Queued on the new client before anything it is lent for.
    if (options.asynchronousCommit) client.query('SET synchronous_commit = off').catch(() => undefined);
  });
  const db = new Kysely<Database>({
    dialect: new PostgresDialect({ pool: discardingPool(pool), cursor: Cursor }),
    ...(options.tracer ? { log: statementSpans(options.tracer) } : {}),
  });
  const close = async () => {
    await db.destroy();
    // Kysely ends only a pool it has used; one used only directly (graphile-worker's) would linger.
    if (!pool.ended) await pool.end();
  };
  return { db, pool, close };
}
