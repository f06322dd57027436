import { EventEmitter } from 'node:events';
import { runMigrations, runTaskList, type Task, type WorkerEvents, type WorkerPool } from 'graphile-worker';
import type { Kysely } from 'kysely';
import type pg from 'pg';
import type { Logger } from 'pino';
import type { Channel } from '../db/listen/channel-listener.js';
import type { Database } from '../db/schema.js';
import { workerLogger } from '../db/worker-logger.js';
import type { Part } from '../util/lifecycle.js';
import { attemptDeliveries, type AttemptContext, type DeliveryPolicy } from './delivery-attempt.js';
import type { DestinationPolicy } from './destination-policy.js';
import { WebhookDispatcher } from './dispatcher.js';
import { DELIVER_TASK, enqueueDeliveries, PROBATION_FLAG } from './queue.store.js';
import { newAgents } from './send-delivery.js';
import { SlowLane } from './slow-lane.js';
import { WorkerLiveness } from './worker-liveness.js';

export interface WebhookQueueOptions extends DeliveryPolicy {
  /**
   * The queue's own connections, apart from the request pool: session ones (graphile-worker LISTENs
   * for new jobs; the liveness locks are session locks), so the direct URL, never a transaction pooler.
   * Whoever made them closes them, after the queue's parts have stopped.
   */
  database: { db: Kysely<Database>; pool: pg.Pool };
  /** The instance's LISTEN session: membership notifications wake the dispatcher. */
  channel: Channel;
  /** off: this instance neither dispatches nor attempts (replays are still queued, for the instances that do). */
  delivery: 'on' | 'off';
  concurrency: number;
  pollMs: number;
  dispatchCoalesceMs: number;
  timeoutMs: number;
  recoveryMs: number;
  destinations: DestinationPolicy;
  logger: Logger;
  onDisabled: (endpointId: string, reason: string) => void;
  onFailed: AttemptContext['onFailed'];
  onOutcome: AttemptContext['onOutcome'];
}

/**
 * Webhook deliveries on graphile-worker: every instance runs a worker (jobs are taken with
 * SKIP LOCKED, so each attempt runs once somewhere), a dispatcher (outbox → deliveries) and the
 * liveness locks that let any instance release a dead worker's jobs. An attempt that fails
 * schedules the next as a new job at its backoff time, in the endpoint's lane.
 */
export class WebhookQueue {
  private readonly pool: pg.Pool;
  private readonly db: Kysely<Database>;
  private readonly dispatcher: WebhookDispatcher;
  private readonly liveness: WorkerLiveness;
  private workers: WorkerPool | null = null;

  constructor(private readonly options: WebhookQueueOptions) {
    ({ pool: this.pool, db: this.db } = options.database);
    this.dispatcher = new WebhookDispatcher(
      this.db,
      options.channel,
      options.logger,
      options.pollMs,
      options.dispatchCoalesceMs,
      options.probationSuccesses,
    );
    this.liveness = new WorkerLiveness(this.pool, this.db, options.logger, options.recoveryMs);
  }

  /**
   * Its parts in start order, with delivery on: the liveness locks, the worker and the dispatcher.
   * graphile-worker's schema is installed by `migrate` (src/db/migrations/worker-schema.ts), as the
   * owner: an instance needs no CREATE.
   */
  parts(): Part[] {
    if (this.options.delivery === 'off') return [];
    return [
      { name: 'worker liveness', start: () => this.liveness.start(), stop: () => this.liveness.stop() },
      { name: 'worker', start: () => this.startWorker(), stop: () => this.stopWorker() },
      { name: 'dispatcher', start: () => this.dispatcher.start(), stop: () => this.dispatcher.stop() },
    ];
  }

  /**
   * graphile-worker's `run` without its cron (this service has no crontab): in 0.16 a cron whose
   * first query fails (a database silent at that moment) stops the runner and rejects promises the
   * library leaves unhandled, which ends the process. The worker pool alone retries its queries.
   */
  private async startWorker(): Promise<void> {
    const { options } = this;
    const slowLane = SlowLane.forWorkers(options.concurrency);
    const context: AttemptContext = {
      db: this.db,
      policy: options,
      sender: { policy: options.destinations, timeoutMs: options.timeoutMs, agents: newAgents() },
      // A retry follows a failure or a lane found full: its endpoint is on probation.
      retry: async (endpointId, deliveryIds, runAt) => {
        if (deliveryIds.length > 0) await enqueueDeliveries(this.db, endpointId, deliveryIds, runAt, true);
      },
      onDisabled: options.onDisabled,
      onFailed: options.onFailed,
      onOutcome: options.onOutcome,
      slowLane,
    };
    const deliver: Task = (payload) => attemptDeliveries(context, deliveryIds(payload));
    const events: WorkerEvents = new EventEmitter();
    events.on('worker:create', ({ worker }) => this.liveness.hold(worker.workerId));
    // Unnamed statements only, as everywhere in this service (safe even behind a transaction pooler).
    const shared = { pgPool: this.pool, noPreparedStatements: true, logger: workerLogger(options.logger) };
    // What `run` checks first: the schema current (read only), else migrated (the owner; others were refused at start).
    await runMigrations(shared);
    this.workers = runTaskList(
      {
        ...shared,
        concurrency: options.concurrency,
        pollInterval: options.pollMs,
        noHandleSignals: true,
        // While the slow lane is full, jobs of endpoints on probation wait in the queue, not in a worker.
        forbiddenFlags: () => (slowLane.full ? [PROBATION_FLAG] : null),
        events,
      },
      { [DELIVER_TASK]: deliver },
      this.pool,
    );
  }

  private async stopWorker(): Promise<void> {
    const workers = this.workers;
    this.workers = null;
    if (workers && !workers._shuttingDown) await workers.gracefulShutdown();
  }
}

/** A job's deliveries: an array of ids; `{ deliveryId }` from jobs queued before jobs carried several. */
function deliveryIds(payload: unknown): string[] {
  return Array.isArray(payload) ? payload.map(String) : [String((payload as { deliveryId: string }).deliveryId)];
}
