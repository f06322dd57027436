import { startReplicatedPostgres, sql } from '../../tooling/replicated-postgres.js';
import type { Case } from '../case.js';
import { num } from '../format.js';
import { unavailability } from './failover-windows.js';
import { replicationCost } from './replication-cost.js';

const WRITES = '13. failover: writes unavailable (multi-host URL) vs plain pg reconnect';
const READS = '13. failover: status reads unavailable vs plain pg reconnect';
const SYNC_COST = '13. batched signals, synchronous vs asynchronous replication';
const DATABASE = 'failover';
// The pair's database is created empty here (not from the migrated template), so the app migrates it at start.
const ENVIRONMENT = {
  MIGRATE_ON_START: 'true',
  LISTENER_HEARTBEAT_MS: '500',
  LISTENER_HEARTBEAT_TIMEOUT_MS: '1000',
  LISTENER_BACKOFF_MIN_MS: '20',
  LISTENER_BACKOFF_MAX_MS: '200',
  DB_ACQUIRE_TIMEOUT_MS: '1000',
};

/**
 * A synchronous primary and streaming standby (the embedded PostgreSQL, tooling/replicated-postgres.ts).
 * First the cost of synchronous replication: batches of `batchSize` signals from `batchCallers`
 * callers, synchronous_standby_names '*' against '' in alternating rounds. Then the primary's
 * postmaster is SIGKILLed and the standby promoted DETECTION_MS later (failover-windows.ts), while an app on the multi-host URL takes
 * back-to-back signals and status reads and a plain pg client, told the promoted server's address,
 * inserts a row in a reconnect loop. Each window: last success before the kill to first after.
 */
export const failover: Case = {
  labels: [WRITES, READS, SYNC_COST],
  async run(cluster, sizes) {
    const pair = await startReplicatedPostgres({ synchronous: true });
    try {
      await sql(pair.url('postgres', pair.primaryPort), `CREATE DATABASE ${DATABASE}`);
      const app = await cluster.startApp(pair.multiHostUrl(DATABASE), {}, ENVIRONMENT);
      const cost = await replicationCost(app, cluster.token, pair, sizes);
      const windows = await unavailability(app, cluster.token, pair, DATABASE);
      await cluster.stopApp(app);
      const ratio = (value: number) => value / windows.plain;
      return [
        {
          case: WRITES,
          figure: `${num(windows.writes)} ms`,
          ceiling: `plain pg ${num(windows.plain)} ms`,
          ratio: ratio(windows.writes),
          target: '≤ 1.50',
          met: ratio(windows.writes) <= 1.5,
          details: windows,
        },
        {
          case: READS,
          figure: `${num(windows.reads)} ms`,
          ceiling: `plain pg ${num(windows.plain)} ms`,
          ratio: ratio(windows.reads),
          target: '≤ 1.50',
          met: ratio(windows.reads) <= 1.5,
        },
        {
          case: SYNC_COST,
          figure: `${num(cost.synchronous)} signals/s synchronous`,
          ceiling: `${num(cost.asynchronous)} signals/s asynchronous`,
          ratio: cost.synchronous / cost.asynchronous,
          target: '— (stated)',
          met: null,
          details: cost,
        },
      ];
    } finally {
      await pair.stop();
    }
  },
};
