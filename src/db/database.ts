import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import Cursor from 'pg-cursor';
import type { Logger } from 'pino';
import type { Database } from './schema.js';

export interface DatabaseHandle {
  db: Kysely<Database>;
  pool: pg.Pool;
  close(): Promise<void>;
}

export function connectDatabase(options: { url: string; poolMax: number; logger: Logger }): DatabaseHandle {
  const pool = new pg.Pool({
    connectionString: options.url,
    max: options.poolMax,
    keepAlive: true,
    connectionTimeoutMillis: 10_000,
  });
  // An idle client whose backend dies emits 'error' on the pool; unhandled, it would crash us.
  pool.on('error', (error) => options.logger.warn({ err: error }, 'idle database connection lost'));
  // A checked-out client has no pool listener: its connection dying mid-query would otherwise be an
  // uncaught 'error' event. The query in flight is rejected anyway, and its caller decides.
  pool.on('connect', (client) => client.on('error', (error) => options.logger.debug({ err: error }, 'database connection lost')));
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool, cursor: Cursor }) });
  return { db, pool, close: () => db.destroy() };
}
