import type pg from 'pg';
import { Counter, Gauge, type Registry } from 'prom-client';

/** The database pool: its connections by state, and how often one is checked out. */
export function observePool(registry: Registry, pool: pg.Pool): void {
  new Gauge({
    name: 'community_db_pool_connections',
    help: 'Pool connections: in use, idle, and requests waiting for one.',
    labelNames: ['state'] as const,
    registers: [registry],
    collect() {
      this.set({ state: 'in_use' }, pool.totalCount - pool.idleCount);
      this.set({ state: 'idle' }, pool.idleCount);
      this.set({ state: 'waiting' }, pool.waitingCount);
    },
  });
  const acquires = new Counter({
    name: 'community_db_pool_acquires_total',
    help: 'Connections checked out of the pool: one per statement outside a transaction, one per transaction.',
    registers: [registry],
  });
  pool.on('acquire', () => acquires.inc());
}
