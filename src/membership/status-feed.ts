import { SlidingBuffer } from '@repeaterjs/repeater';
import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { Database } from '../db/schema.js';
import { ShuttingDownError } from '../util/shutting-down.js';
import type { SubscriptionCaps } from '../util/subscription-caps.js';
import type { MembershipSync } from './cache/membership-sync.js';
import type { MembershipState } from './membership-states.store.js';
import { StatusReads } from './status-reads.js';
import { newVersionsOnly, WatchedUser, type StateSubscriber } from './watched-user.js';

export interface StatusFeedCounters {
  /** Statements run for subscribers (each covers every watched user that needed one). */
  reads: number;
  failedReads: number;
  refused: { perUser: number; perInstance: number };
}

/**
 * Live membership states for subscriptions, fed by the cluster's LISTEN/NOTIFY stream (so a change
 * made on any instance, or by SQL, arrives on every instance).
 *
 * Fan-out is bounded: subscriptions are capped per watched user and per instance; all subscribers
 * of one user share one entry, and reads are batched (StatusReads): a change of one user is one
 * read however many watch them.
 */
export class MembershipStatusFeed {
  private readonly watched = new Map<string, WatchedUser>();
  private readonly reads: StatusReads;
  private closed = false;
  private readonly stopListening: () => void;

  /** `caps`: the instance's places for every stream (shared with purge progress). */
  constructor(
    db: Kysely<Database>,
    membership: MembershipSync,
    private readonly caps: SubscriptionCaps,
    logger: Logger,
  ) {
    this.reads = new StatusReads(db, this.watched, logger);
    const stopChanges = membership.onChange((change) => {
      const user = this.watched.get(change.userId);
      if (!user || change.version <= user.notified) return;
      user.notified = change.version;
      this.reads.markDirty(user);
    });
    const stopResyncs = membership.onResync(() => {
      // Notifications may have been missed: check every watched user, in one statement.
      for (const user of this.watched.values()) {
        user.verify = true;
        this.reads.markDirty(user);
      }
    });
    this.stopListening = () => {
      stopChanges();
      stopResyncs();
    };
  }

  /**
   * The current state, then every change, until the client leaves (`return()`) or `close()` (then
   * it fails with ShuttingDownError). Throws TooManySubscriptionsError beyond a cap, and
   * ShuttingDownError once closed, before the stream exists. The stream keeps only
   * the latest state the client has not taken yet (a sliding buffer of one, never a queue).
   */
  watch(userId: string): AsyncIterableIterator<MembershipState> {
    if (this.closed) throw new ShuttingDownError();
    let subscriber: StateSubscriber | null = null;
    return this.caps.stream<MembershipState>(
      userId,
      // Not async: an idle stream then holds no suspended frame (its end reaches `release` anyway).
      (push, stop) => {
        if (this.closed) return stop(new ShuttingDownError());
        subscriber = newVersionsOnly(push, stop);
        this.follow(userId, subscriber);
      },
      () => {
        if (subscriber) this.unfollow(userId, subscriber);
      },
      new SlidingBuffer(1),
    );
  }

  /** Open streams users follow on this instance: status and purge progress (they share the caps). */
  get subscribers(): number {
    return this.caps.open;
  }

  get watchedUsers(): number {
    return this.watched.size;
  }

  /** A read in flight or due. */
  get busy(): boolean {
    return this.reads.busy;
  }

  get counters(): Readonly<StatusFeedCounters> {
    return { reads: this.reads.reads, failedReads: this.reads.failedReads, refused: this.caps.refused };
  }

  /** Ends every stream with ShuttingDownError (server shutdown): its client is to subscribe again. */
  close(): void {
    this.closed = true;
    this.stopListening();
    this.reads.close();
    for (const user of [...this.watched.values()]) for (const subscriber of [...user.subscribers]) subscriber.end(new ShuttingDownError());
  }

  private follow(userId: string, subscriber: StateSubscriber): void {
    let user = this.watched.get(userId);
    if (!user) {
      user = new WatchedUser(userId);
      this.watched.set(userId, user);
    }
    user.subscribers.add(subscriber);
    // Subscribers arriving together (a reconnect wave) share this read too.
    user.refresh = true;
    this.reads.markDirty(user);
  }

  private unfollow(userId: string, subscriber: StateSubscriber): void {
    const user = this.watched.get(userId);
    if (!user?.subscribers.delete(subscriber) || user.subscribers.size > 0) return;
    this.watched.delete(userId);
    this.reads.forget(user);
  }
}
