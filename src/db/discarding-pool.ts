import type { PostgresPool, PostgresPoolClient } from 'kysely';
import type pg from 'pg';
import { mustDiscardConnection } from './database-errors.js';

/**
 * Kysely's view of the pool. Kysely releases a connection with no error, so pg-pool would lend it
 * again; a connection whose query hit the client-side deadline (its peer stopped answering: the
 * late reply could reach the next query) or found its session read-only (a standby, a demoted
 * primary) is instead released with that error, which makes pg-pool close it. The next checkout
 * connects anew, and may reach the new primary.
 */
export function discardingPool(pool: Pick<pg.Pool, 'connect' | 'end'>): PostgresPool {
  return {
    connect: async (): Promise<PostgresPoolClient> => {
      const client = await pool.connect();
      let broken: Error | undefined;
      return {
        query: ((...args: Parameters<pg.PoolClient['query']>) => {
          const result = (client.query as (...a: unknown[]) => unknown)(...args);
          if (result instanceof Promise) {
            result.catch((error: unknown) => {
              if (mustDiscardConnection(error)) broken = error as Error;
            });
          }
          return result;
        }) as PostgresPoolClient['query'],
        release: () => client.release(broken),
      };
    },
    end: () => pool.end(),
  };
}
