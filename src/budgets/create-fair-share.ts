import type pg from 'pg';
import type { Logger } from 'pino';
import type { AppConfig } from '../config/config.js';
import { connectDatabase } from '../db/database.js';
import type { DatabaseEndpoint } from '../db/endpoint/database-endpoint.js';
import { partOf, type Part } from '../util/lifecycle.js';
import { fairShareConfig } from './fair-share-config.js';
import { FairShare } from './fair-share.js';
import { leaseStore } from './lease.store.js';
import { forgetAfterSeconds } from './principal.js';

export interface CreateFairShareOptions {
  database: AppConfig['database'];
  /** The instance's endpoint for DATABASE_URL, so the budgets follow the same primary as the requests. */
  endpoint: DatabaseEndpoint;
  config: AppConfig['fairShare'];
  logger: Logger;
  /** The budgets' session's `application_name`. */
  applicationName: string;
}

export interface FairShareInstance {
  fairShare: FairShare;
  /** Starts the limiter; stopped, it gives back the leases held, then closes the budgets' pool. */
  part: Part;
  /** The budgets' pool, for its use (`poolUsage`). */
  pool: pg.Pool;
}

/** The limiter of one instance, and its buckets' pool, made here and closed by `part`. */
export function createFairShare({ database, endpoint, config, logger, applicationName }: CreateFairShareOptions): FairShareInstance {
  // A pool of its own: leases are never asked for behind a request.
  const budgetDatabase = connectDatabase({ url: database.url, endpoint, poolMax: 1, logger, limits: database, applicationName });
  const forget = forgetAfterSeconds(fairShareConfig(config, ''));
  const fairShare = new FairShare({
    store: leaseStore(budgetDatabase.db),
    logger,
    instances: config.instances,
    syncMs: config.syncMs,
    forget,
  });
  const part = partOf('fair share', [
    { name: 'fair share pool', stop: () => budgetDatabase.close() },
    { name: 'leases', start: () => fairShare.start(), stop: () => fairShare.stop() },
  ]);
  return { fairShare, part, pool: budgetDatabase.pool };
}
