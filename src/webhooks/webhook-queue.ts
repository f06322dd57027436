import { Logger as WorkerLogger, run, runMigrations, type Runner, type Task } from 'graphile-worker';
import type { Kysely } from 'kysely';
import pg from 'pg';
import type { Logger } from 'pino';
import type { Database } from '../db/schema.js';
import { attemptDeliveries, type DeliveryPolicy } from './delivery-attempt.js';
import { DELIVER_TASK, WebhookDispatcher } from './dispatcher.js';
import { resetDelivery, type WebhookDelivery } from './webhook.store.js';

/** Serializes graphile-worker's schema install: instances starting at once on a new database race on CREATE SCHEMA. */
const INSTALL_LOCK = 1129073005;

export interface WebhookQueueOptions extends DeliveryPolicy {
  /**
   * The queue's own connections, apart from the request pool: session ones (graphile-worker LISTENs
   * for new jobs), so the direct URL, never a transaction pooler.
   */
  database: { db: Kysely<Database>; pool: pg.Pool; close(): Promise<void> };
  /** off: this instance neither dispatches nor attempts (replays are still queued, for the instances that do). */
  delivery: 'on' | 'off';
  concurrency: number;
  pollMs: number;
  dispatchCoalesceMs: number;
  logger: Logger;
}

/**
 * Webhook deliveries on graphile-worker: every instance runs a worker (jobs are taken with
 * SKIP LOCKED, so each attempt runs once somewhere) and a dispatcher (outbox → deliveries). An
 * attempt that fails schedules the next as a new job at its backoff time; a crash mid-attempt
 * leaves the job to graphile-worker's own retry, so delivery is at least once.
 */
export class WebhookQueue {
  private readonly pool: pg.Pool;
  private readonly db: Kysely<Database>;
  private readonly dispatcher: WebhookDispatcher;
  private runner: Runner | null = null;

  constructor(private readonly options: WebhookQueueOptions) {
    ({ pool: this.pool, db: this.db } = options.database);
    this.dispatcher = new WebhookDispatcher(this.db, options.logger, options.pollMs, options.dispatchCoalesceMs);
  }

  async start(): Promise<void> {
    const deliver: Task = async (payload, helpers) => {
      await attemptDeliveries(this.db, deliveryIds(payload), this.options, async (deliveryId, runAt) => {
        await helpers.addJob(DELIVER_TASK, [deliveryId], { runAt });
      });
    };
    // Installed on every instance: one with delivery off still queues replays.
    await this.installQueueSchema();
    if (this.options.delivery === 'off') return;
    this.runner = await run({
      pgPool: this.pool,
      concurrency: this.options.concurrency,
      pollInterval: this.options.pollMs,
      noHandleSignals: true,
      // Unnamed statements only, as everywhere in this service (safe even behind a transaction pooler).
      noPreparedStatements: true,
      taskList: { [DELIVER_TASK]: deliver },
      logger: workerLogger(this.options.logger),
    });
    this.dispatcher.start();
  }

  private async installQueueSchema(): Promise<void> {
    const client = await this.pool.connect();
    try {
      await client.query('SELECT pg_advisory_lock($1)', [INSTALL_LOCK]);
      await runMigrations({ pgPool: this.pool, noPreparedStatements: true, logger: workerLogger(this.options.logger) });
    } finally {
      await client.query('SELECT pg_advisory_unlock($1)', [INSTALL_LOCK]).catch(() => undefined);
      client.release();
    }
  }

  /** A feed event may have been recorded. */
  wake(): void {
    if (this.runner) this.dispatcher.wake();
  }

  /** Delivers again (a replay), with the same webhook-id; undefined for an unknown delivery. */
  async replay(deliveryId: string): Promise<WebhookDelivery | undefined> {
    const delivery = await resetDelivery(this.db, deliveryId);
    if (delivery) await this.pool.query(`SELECT graphile_worker.add_job($1, json_build_array($2::text))`, [DELIVER_TASK, deliveryId]);
    return delivery;
  }

  async stop(): Promise<void> {
    await this.dispatcher.stop();
    await this.runner?.stop();
    await this.options.database.close();
  }
}

/** A job's deliveries: an array of ids; `{ deliveryId }` from jobs queued before jobs carried several. */
function deliveryIds(payload: unknown): string[] {
  return Array.isArray(payload) ? payload.map(String) : [String((payload as { deliveryId: string }).deliveryId)];
}

function workerLogger(logger: Logger): WorkerLogger {
  const child = logger.child({ component: 'graphile-worker' });
  return new WorkerLogger(() => (level, message, meta) => {
    const method = level === 'error' ? 'error' : level === 'warning' ? 'warn' : level === 'info' ? 'debug' : 'trace';
    child[method](meta ?? {}, message);
  });
}
