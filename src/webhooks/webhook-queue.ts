import { Logger as WorkerLogger, run, type Runner, type Task } from 'graphile-worker';
import type { Kysely } from 'kysely';
import pg from 'pg';
import type { Logger } from 'pino';
import type { Database } from '../db/schema.js';
import { attemptDelivery, type DeliveryPolicy } from './delivery-attempt.js';
import { DELIVER_TASK, WebhookDispatcher } from './dispatcher.js';
import { resetDelivery, type WebhookDelivery } from './webhook.store.js';

export interface WebhookQueueOptions extends DeliveryPolicy {
  db: Kysely<Database>;
  /** A session connection (graphile-worker LISTENs for new jobs): the direct URL, never a transaction pooler. */
  connectionString: string;
  applicationName: string;
  concurrency: number;
  pollMs: number;
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
  private readonly dispatcher: WebhookDispatcher;
  private runner: Runner | null = null;

  constructor(private readonly options: WebhookQueueOptions) {
    this.pool = new pg.Pool({ connectionString: options.connectionString, application_name: options.applicationName, max: options.concurrency + 2 });
    this.pool.on('error', (error) => options.logger.warn({ err: error }, 'webhook queue connection lost'));
    this.dispatcher = new WebhookDispatcher(options.db, options.logger, options.pollMs);
  }

  async start(): Promise<void> {
    const deliver: Task = async (payload, helpers) => {
      const { deliveryId } = payload as { deliveryId: string };
      const outcome = await attemptDelivery(this.options.db, deliveryId, this.options);
      if (outcome.kind === 'retry') await helpers.addJob(DELIVER_TASK, { deliveryId }, { runAt: outcome.retryAt });
    };
    this.runner = await run({
      pgPool: this.pool,
      concurrency: this.options.concurrency,
      pollInterval: this.options.pollMs,
      noHandleSignals: true,
      taskList: { [DELIVER_TASK]: deliver },
      logger: workerLogger(this.options.logger),
    });
    this.dispatcher.start();
  }

  /** A feed event may have been recorded. */
  wake(): void {
    this.dispatcher.wake();
  }

  /** Delivers again (a replay), with the same webhook-id; undefined for an unknown delivery. */
  async replay(deliveryId: string): Promise<WebhookDelivery | undefined> {
    const delivery = await resetDelivery(this.options.db, deliveryId);
    if (delivery) await this.pool.query(`SELECT graphile_worker.add_job($1, json_build_object('deliveryId', $2::text))`, [DELIVER_TASK, deliveryId]);
    return delivery;
  }

  async stop(): Promise<void> {
    await this.dispatcher.stop();
    await this.runner?.stop();
    await this.pool.end();
  }
}

function workerLogger(logger: Logger): WorkerLogger {
  const child = logger.child({ component: 'graphile-worker' });
  return new WorkerLogger(() => (level, message, meta) => {
    const method = level === 'error' ? 'error' : level === 'warning' ? 'warn' : level === 'info' ? 'debug' : 'trace';
    child[method](meta ?? {}, message);
  });
}
