import { sql, type Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { Database } from '../db/schema.js';

const PAGE = 500;
export const DELIVER_TASK = 'deliver_webhook';

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
  private again = false;
  private stopped = false;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly logger: Logger,
    private readonly pollMs: number,
  ) {}

  start(): void {
    this.stopped = false;
    this.schedule();
  }

  /** Something may have been recorded: dispatch now (or once the running pass ends). */
  wake(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    if (this.timer) clearTimeout(this.timer);
    this.running = this.drain().finally(() => {
      this.running = null;
      if (this.again) {
        this.again = false;
        this.wake();
      } else this.schedule();
    });
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.running;
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => this.wake(), this.pollMs);
    this.timer.unref();
  }

  private async drain(): Promise<void> {
    try {
      while (!this.stopped && (await this.dispatchPage()) === PAGE);
    } catch (error) {
      this.logger.warn({ err: error }, 'webhook dispatch failed; retrying at the next poll');
    }
  }

  /** One page of events; answers how many were dispatched (0 when another instance holds the cursor). */
  private dispatchPage(): Promise<number> {
    return this.db.transaction().execute(async (trx) => {
      const cursor = await trx.selectFrom('webhook_dispatch').select('position').forUpdate().skipLocked().executeTakeFirst();
      if (!cursor) return 0;
      const page = await trx.selectFrom('membership_event').select('position').where('position', '>', cursor.position)
        .orderBy('position').limit(PAGE).execute();
      const last = page.at(-1)?.position;
      if (last === undefined) return 0;
      await sql`
        WITH created AS (
          INSERT INTO webhook_delivery (endpoint_id, event_position)
          SELECT w.id, e.position FROM membership_event e
            JOIN webhook_endpoint w ON e.kind = ANY (w.event_kinds) AND w.disabled_at IS NULL
           WHERE e.position > ${cursor.position} AND e.position <= ${last}
          ON CONFLICT ON CONSTRAINT webhook_delivery_once DO NOTHING
          RETURNING id
        )
        SELECT graphile_worker.add_job(${DELIVER_TASK}, json_build_object('deliveryId', id::text)) FROM created
      `.execute(trx);
      await trx.updateTable('webhook_dispatch').set({ position: last }).execute();
      return page.length;
    });
  }
}
