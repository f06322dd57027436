import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import { endedStream, heldStream } from '../util/held-stream.js';
import { listMembershipEvents, type MembershipEvent } from './store/membership-events.js';
import type { SubscriptionCaps } from '../util/subscription-caps.js';

export interface ChangeFeedOptions {
  /** Events read per statement, for history and live alike. */
  pageSize: number;
  /** The longest a live stream waits before reading again without a notification (purge events have none). */
  pollMs: number;
}

/**
 * Every membership change from a cursor: history first, then live, read from the outbox in position
 * order. Each stream keeps its own cursor and reads the database again whenever it is woken (the
 * composition root wakes it on every membership notification, from any instance, and after every
 * LISTEN), or every `pollMs`; so it is exact across instances and reconnects: the database, not a
 * notification, says what comes next. A
 * stream takes a place from the subscription caps (keyed by the service principal) before it exists.
 */
export class MembershipChangeFeed {
  private readonly wakers = new Set<() => void>();
  /** Counts wake-ups, so a notification that arrives while a stream reads is not slept through. */
  private wakeups = 0;
  private closed = false;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly caps: SubscriptionCaps,
    private readonly options: ChangeFeedOptions,
  ) {}

  /** Something may have been recorded: every live stream reads again. */
  wake(): void {
    this.wakeups++;
    for (const waker of [...this.wakers]) waker();
  }

  /** Events after `after` until the consumer leaves or `close()`. Throws TooManySubscriptionsError beyond a cap. */
  changes(after: bigint, principal: string): AsyncIterableIterator<MembershipEvent> {
    if (this.closed) return endedStream();
    const release = this.caps.admit(`feed:${principal}`);
    let stopped = false;
    let wakeNow: (() => void) | null = null;
    return heldStream<MembershipEvent>(
      async (push, stop) => {
        void stop.then(() => {
          stopped = true;
          wakeNow?.();
        });
        let cursor = after;
        while (!stopped && !this.closed) {
          const seen = this.wakeups;
          const page = await listMembershipEvents(this.db, cursor, this.options.pageSize);
          for (const event of page) {
            if (stopped) return;
            await push(event);
            cursor = BigInt(event.position);
          }
          if (page.length < this.options.pageSize && seen === this.wakeups) await this.nextWake((wake) => (wakeNow = wake));
        }
        stop();
      },
      () => {
        stopped = true;
        release();
        wakeNow?.();
      },
    );
  }

  /** Ends every stream (server shutdown). */
  close(): void {
    this.closed = true;
    for (const waker of [...this.wakers]) waker();
  }

  private nextWake(expose: (wake: () => void) => void): Promise<void> {
    return new Promise((resolve) => {
      const wake = () => {
        clearTimeout(timer);
        this.wakers.delete(wake);
        resolve();
      };
      const timer = setTimeout(wake, this.options.pollMs);
      timer.unref();
      this.wakers.add(wake);
      expose(wake);
    });
  }
}
