import { Kysely, PostgresDialect } from 'kysely';
import type pg from 'pg';
import { discardingPool } from './discarding-pool.js';
import type { Database } from './schema.js';

/**
 * One pooled connection lent twice over: as Kysely (typed queries, transactions) and as the pg client
 * itself, for what Kysely cannot run (`COPY … TO STDOUT` through pg-copy-streams) inside the same
 * transaction. Kysely's transaction releases the connection to the pool when it ends; the session
 * must not be used after that.
 */
export interface PinnedSession {
  db: Kysely<Database>;
  client: pg.PoolClient;
}

export async function pinnedSession(pool: pg.Pool): Promise<PinnedSession> {
  const client = await pool.connect();
  // Kysely asks its pool for the connection once per transaction: here, always this one.
  const one = { connect: async () => client, end: async () => undefined } as unknown as Pick<pg.Pool, 'connect' | 'end'>;
  return { db: new Kysely<Database>({ dialect: new PostgresDialect({ pool: discardingPool(one) }) }), client };
}
