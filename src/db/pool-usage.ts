import type pg from 'pg';

/**
 * What named pools hold, for a stop that hangs: e.g. `request pool 1 checked out of 3, 0 waiting`.
 * A checked-out client never released is what a pool's end waits for without end.
 */
export function poolUsage(pools: Record<string, pg.Pool>): string {
  return Object.entries(pools)
    .map(([name, pool]) => {
      const state = pool.ended ? ', ended' : pool.ending ? ', ending' : '';
      return `${name} pool ${pool.totalCount - pool.idleCount} checked out of ${pool.totalCount}, ${pool.waitingCount} waiting${state}`;
    })
    .join('; ');
}
