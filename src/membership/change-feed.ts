import type { Kysely } from 'kysely';
import type { Channel } from '../db/listen/channel-listener.js';
import type { Database } from '../db/schema.js';
import { heldStream } from '../util/held-stream.js';
import { ShuttingDownError } from '../util/shutting-down.js';
import { listMembershipEvents, type MembershipEvent } from './membership-events.store.js';
import { MEMBERSHIP_CHANNEL } from './membership-notification.js';
import type { SubscriptionCaps } from '../util/subscription-caps.js';

export type { MembershipEvent } from './membership-events.store.js';

/** Named as in the `downstream` config group, which is passed as it is. */
export interface ChangeFeedOptions {
  /** Events read per statement, for history and live alike. */
  feedPageSize: number;
  /** The longest a live stream waits before reading again without a notification (purge events have none). */
  feedPollMs: number;
}

/**
 * Every membership change from a cursor: history first, then live, read from the outbox in position
 * order. Each stream keeps its own cursor and reads the database again whenever it is woken (by
 * every membership notification, from any instance, and after every LISTEN), or every `feedPollMs`;
 * so it is exact across instances and reconnects: the database, not a notification, says what comes
 * next. A stream takes a place from `caps` (keyed by the service principal) before it exists.
 */
export class MembershipChangeFeed {
  private readonly wakers = new Set<() => void>();
  /** Counts wake-ups, so a notification that arrives while a stream reads is not slept through. */
  private wakeups = 0;
  private closed = false;

  /** `caps`: the change feed's own places (its streams are not users' streams). */
  constructor(
    private readonly db: Kysely<Database>,
    channel: Channel,
    private readonly caps: SubscriptionCaps,
    private readonly options: ChangeFeedOptions,
    /** An event pushed to a live stream (caught up with history): seconds since its commit (metrics). */
    private readonly onLiveEvent: (lagSeconds: number) => void = () => undefined,
  ) {
    channel.subscribe({ channel: MEMBERSHIP_CHANNEL, onNotification: () => this.wake(), onListening: () => this.wake() });
  }

  /** Something may have been recorded: every live stream reads again. */
  private wake(): void {
    this.wakeups++;
    for (const waker of [...this.wakers]) waker();
  }

  /** Up to `limit` events after `after`, in position order: one page, for batch readers. */
  page(after: bigint, limit: number): Promise<MembershipEvent[]> {
    return listMembershipEvents(this.db, after, limit);
  }

  /**
   * Events after `after` until the consumer leaves or `close()` (then it fails with
   * ShuttingDownError). Throws TooManySubscriptionsError beyond a cap, ShuttingDownError once closed.
   */
  changes(after: bigint, principal: string): AsyncIterableIterator<MembershipEvent> {
    if (this.closed) throw new ShuttingDownError();
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
        // Live once a page came back short: history is read, what follows is new.
        let live = false;
        while (!stopped && !this.closed) {
          const seen = this.wakeups;
          const page = await listMembershipEvents(this.db, cursor, this.options.feedPageSize);
          for (const event of page) {
            if (stopped) return;
            if (live) this.onLiveEvent((Date.now() - event.recordedAt.getTime()) / 1000);
            await push(event);
            cursor = BigInt(event.position);
          }
          if (page.length < this.options.feedPageSize) live = true;
          if (page.length < this.options.feedPageSize && seen === this.wakeups) await this.nextWake((wake) => (wakeNow = wake));
        }
        stop(this.closed && !stopped ? new ShuttingDownError() : undefined);
      },
      () => {
        stopped = true;
        release();
        wakeNow?.();
      },
    );
  }

  /** Ends every stream with ShuttingDownError (server shutdown): its consumer resumes from its cursor. */
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
      const timer = setTimeout(wake, this.options.feedPollMs);
      timer.unref();
      this.wakers.add(wake);
      expose(wake);
    });
  }
}
