import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { Channel } from '../db/listen/channel-listener.js';
import type { Database } from '../db/schema.js';
import { MEMBERSHIP_CHANNEL } from '../membership/membership-notification.js';
import { dispatchPage } from './dispatch.store.js';

const PAGE = 500;

/**
 * Turns change-feed events into deliveries, off the leave's path: a leave only writes its outbox row;
 * this loop (on whichever instance holds the dispatch row, FOR UPDATE SKIP LOCKED) later creates one
 * delivery per subscribed endpoint and its queue job, and moves the cursor, all in one transaction,
 * so each event is dispatched exactly once. Positions commit in order (migration 0011), so the
 * cursor never passes an event that commits later. Every membership notification wakes it (any
 * may mean new outbox rows); so does nothing before its start or after its stop.
 */
export class WebhookDispatcher {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private woken = false;
  private again = false;
  private stopped = true;

  /** `coalesceMs`: how long a wake waits, so a burst of changes is dispatched in one pass (fewer, larger jobs). */
  constructor(
    private readonly db: Kysely<Database>,
    channel: Channel,
    private readonly logger: Logger,
    private readonly pollMs: number,
    private readonly coalesceMs: number,
    private readonly probationSuccesses: number,
  ) {
    channel.subscribe({ channel: MEMBERSHIP_CHANNEL, onNotification: () => this.wake() });
  }

  start(): void {
    this.stopped = false;
    this.schedule(this.pollMs);
  }

  /** Something may have been recorded: dispatch soon (or once the running pass ends). */
  private wake(): void {
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
      while (!this.stopped && (await dispatchPage(this.db, PAGE, this.probationSuccesses)) === PAGE);
    } catch (error) {
      this.logger.warn({ err: error }, 'webhook dispatch failed; retrying at the next poll');
    }
  }
}
