import { sql, type Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { Database } from '../db/schema.js';

const PAGE = 500;
export const DELIVER_TASK = 'deliver_webhook';
/** Most deliveries one job attempts (in order, one endpoint's): bounds how long a slow receiver holds a worker slot. */
export const JOB_DELIVERIES = 50;

/**
 * Turns change-feed events into deliveries, off the leave's path: a leave only writes its outbox row;
 * this loop (on whichever instance holds the dispatch row, FOR UPDATE SKIP LOCKED) later creates one
 * delivery per subscribed endpoint and its queue job, and moves the cursor, all in one transaction,
 * so each event is dispatched exactly once. Positions commit in order (migration 0011), so the
 * cursor never passes an event that commits later.
 */
export class WebhookDispatcher {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private woken = false;
  private again = false;
  private stopped = false;

  /** `coalesceMs`: how long a wake waits, so a burst of changes is dispatched in one pass (fewer, larger jobs). */
  constructor(
    private readonly db: Kysely<Database>,
    private readonly logger: Logger,
    private readonly pollMs: number,
    private readonly coalesceMs: number,
  ) {}

  start(): void {
    this.stopped = false;
    this.schedule(this.pollMs);
  }

  /** Something may have been recorded: dispatch soon (or once the running pass ends). */
  wake(): void {
    if (this.stopped || this.woken) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.woken = true;
    this.schedule(this.coalesceMs);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.running;
  }

  private schedule(delayMs: number): void {
    if (this.stopped) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => this.pass(), delayMs);
    this.timer.unref();
  }

  private pass(): void {
    this.woken = false;
    this.running = this.drain().finally(() => {
      this.running = null;
      if (this.again) {
        this.again = false;
        this.wake();
      } else this.schedule(this.pollMs);
    });
  }

  private async drain(): Promise<void> {
    try {
      while (!this.stopped && (await this.dispatchPage()) === PAGE);
    } catch (error) {
      this.logger.warn({ err: error }, 'webhook dispatch failed; retrying at the next poll');
    }
  }

  /**
   * One page of events, in one statement (no transaction left idle between round trips); answers
   * how many were dispatched (0 when another instance holds the cursor). The cursor is a scalar
   * subquery so the page is an index range from it (joined, every event ever was scanned). One job
   * per endpoint and chunk of its deliveries, not one per delivery: each job costs commits the
   * leave's commit queues behind. The jobs CTE is read by the final SELECT, so every add_job runs.
   */
  private async dispatchPage(): Promise<number> {
    const { rows } = await sql<{ dispatched: string; jobs: string }>`
      WITH cursor AS (SELECT d.position FROM webhook_dispatch d FOR UPDATE SKIP LOCKED),
      page AS (
        SELECT e.position, e.kind FROM membership_event e
        WHERE e.position > (SELECT c.position FROM cursor c) ORDER BY e.position LIMIT ${PAGE}
      ),
      created AS (
        INSERT INTO webhook_delivery (endpoint_id, event_position)
        SELECT w.id, p.position FROM page p JOIN webhook_endpoint w ON p.kind = ANY (w.event_kinds) AND w.disabled_at IS NULL
        ON CONFLICT ON CONSTRAINT webhook_delivery_once DO NOTHING
        RETURNING id, endpoint_id
      ),
      chunked AS (SELECT id, endpoint_id, (row_number() OVER (PARTITION BY endpoint_id ORDER BY id) - 1) / ${JOB_DELIVERIES} AS chunk FROM created),
      jobs AS (
        SELECT graphile_worker.add_job(${DELIVER_TASK}, json_agg(id::text ORDER BY id)) FROM chunked GROUP BY endpoint_id, chunk
      ),
      moved AS (
        UPDATE webhook_dispatch SET position = (SELECT max(p.position) FROM page p) WHERE EXISTS (SELECT 1 FROM page) RETURNING 1
      )
      SELECT (SELECT count(*) FROM page) AS dispatched, (SELECT count(*) FROM jobs) AS jobs, (SELECT count(*) FROM moved) AS moved
    `.execute(this.db);
    return Number(rows[0]?.dispatched ?? 0);
  }
}
