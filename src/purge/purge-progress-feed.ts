import { SlidingBuffer, type Push, type Stop } from '@repeaterjs/repeater';
import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import { ShuttingDownError } from '../util/shutting-down.js';
import type { SubscriptionCaps } from '../util/subscription-caps.js';
import { progressKey } from './purge-notification.js';
import { listPurges, type PurgeReceipt } from './purge.store.js';

interface Follower {
  push: Push<PurgeReceipt>;
  stop: Stop;
  /** The key of the receipt this stream showed last. */
  shown: string;
}

/** Everyone following one user's purges, and the newest receipt read for them. */
interface FollowedUser {
  userId: string;
  followers: Set<Follower>;
  /** Undefined until the first read; null: the user has no purge. */
  receipt: PurgeReceipt | null | undefined;
  reading: boolean;
  /**
   * A change that arrived while a read was in flight: its key (re-read unless that read showed it),
   * null (re-read), or undefined (none).
   */
  pending: string | null | undefined;
}

const keyOf = (receipt: PurgeReceipt) => progressKey(receipt.purgeId, receipt.status, receipt.removedSoFar);

/**
 * Live purge receipts for `communityPurgeProgress`, pushed from changes, never polled: the worker
 * of this instance reports each chunk, and the `community_purge` notification reports those of every
 * instance (and of SQL). A change of a followed user is one read, shared by all of their streams;
 * a change of a user no stream follows costs nothing, so once the last client has gone no database
 * work is left. Streams take their places from the instance's SubscriptionCaps.
 */
export class PurgeProgressFeed {
  private readonly followed = new Map<string, FollowedUser>();
  private closed = false;
  private counts = { reads: 0, failedReads: 0 };

  constructor(
    private readonly db: Kysely<Database>,
    private readonly caps: SubscriptionCaps,
  ) {}

  /**
   * The newest receipt now (if any), then each move, until it has FINISHED, the client leaves or
   * close() (then it fails with ShuttingDownError; once closed, follow throws it).
   */
  follow(userId: string): AsyncIterableIterator<PurgeReceipt> {
    if (this.closed) throw new ShuttingDownError();
    let follower: Follower | null = null;
    return this.caps.stream<PurgeReceipt>(
      userId,
      async (push, stop) => {
        if (this.closed) return stop(new ShuttingDownError());
        follower = { push, stop, shown: '' };
        const user = this.userFor(userId);
        user.followers.add(follower);
        // Known already (kept current by the changes), or being read: no read of its own for a newcomer.
        if (user.receipt !== undefined) show(follower, user.receipt);
        else if (!user.reading) this.read(user, null);
        await stop;
      },
      () => {
        const user = this.followed.get(userId);
        if (!follower || !user?.followers.delete(follower) || user.followers.size > 0) return;
        this.followed.delete(userId);
      },
      new SlidingBuffer(1),
    );
  }

  /** A purge of `userId` moved; `key` (when known) lets a change already read be skipped. */
  changed(userId: string, key?: string): void {
    const user = this.followed.get(userId);
    if (!user) return;
    if (key !== undefined && user.receipt && keyOf(user.receipt) === key) return;
    this.read(user, key ?? null);
  }

  /** Notifications may have been missed (the LISTEN session came back): re-read every followed user. */
  resync(): void {
    for (const user of this.followed.values()) this.read(user, null);
  }

  get counters(): Readonly<{ reads: number; failedReads: number }> {
    return { ...this.counts };
  }

  get followedUsers(): number {
    return this.followed.size;
  }

  /** Ends every stream with ShuttingDownError (server shutdown): its client is to subscribe again. */
  close(): void {
    this.closed = true;
    for (const user of [...this.followed.values()]) for (const follower of [...user.followers]) follower.stop(new ShuttingDownError());
  }

  private userFor(userId: string): FollowedUser {
    let user = this.followed.get(userId);
    if (!user) {
      user = { userId, followers: new Set(), receipt: undefined, reading: false, pending: undefined };
      this.followed.set(userId, user);
    }
    return user;
  }

  private read(user: FollowedUser, change: string | null): void {
    if (user.reading) {
      // Changes of one purge arrive in commit order: the latest key is the one to check.
      user.pending = user.pending === null ? null : change;
      return;
    }
    user.reading = true;
    void (async () => {
      do {
        user.pending = undefined;
        try {
          this.counts.reads++;
          const [receipt] = await listPurges(this.db, user.userId, 1);
          user.receipt = receipt ?? null;
          for (const follower of [...user.followers]) show(follower, user.receipt);
        } catch (error) {
          // The streams end with the error (a retryable SERVICE_UNAVAILABLE); clients subscribe again.
          this.counts.failedReads++;
          for (const follower of [...user.followers]) follower.stop(error);
        }
      } while (stale(user) && this.followed.get(user.userId) === user);
      user.reading = false;
    })();
  }
}

function stale(user: FollowedUser): boolean {
  if (user.pending === undefined) return false;
  return user.pending === null || !user.receipt || keyOf(user.receipt) !== user.pending;
}

function show(follower: Follower, receipt: PurgeReceipt | null): void {
  if (!receipt) return;
  const key = keyOf(receipt);
  if (key === follower.shown) return;
  follower.shown = key;
  void follower.push(receipt);
  // The receipt is delivered before the end: a Repeater hands out what it buffered first.
  if (receipt.status === 'FINISHED') follower.stop();
}
