import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { MembershipSync } from './cache/membership-sync.js';
import type { Database } from '../db/schema.js';
import { TooManySubscriptionsError } from './errors.js';
import { readChangedStates, type MembershipState, type WatchedVersion } from './store/changed-states.js';

/** The newest leaves each state carries, so `history` with its default page needs no read of its own. */
export const RECENT_LEAVES = 20;

export interface StatusFeedLimits {
  /** Subscriptions watching one user on this instance. */
  perUser: number;
  /** Subscriptions on this instance. */
  perInstance: number;
}

export interface StatusFeedCounters {
  /** Statements run for subscribers (each covers every watched user that needed one). */
  reads: number;
  failedReads: number;
  refused: { perUser: number; perInstance: number };
}

const RETRY_MIN_MS = 100;
const RETRY_MAX_MS = 5_000;

/** One subscription: the latest state it has not taken yet (a "changed" slot, never a queue). */
class Subscriber {
  closed = false;
  private pending: MembershipState | null = null;
  /** The version last handed to the client; undefined before the first. */
  private sentVersion: string | null | undefined;
  private wake: (() => void) | null = null;

  /** Only a new version is news to a client that already has a state. */
  deliver(state: MembershipState): void {
    if (this.sentVersion !== undefined && state.membership.version === this.sentVersion) return;
    this.pending = state;
    this.wake?.();
  }

  take(): MembershipState | null {
    const state = this.pending;
    this.pending = null;
    if (state) this.sentVersion = state.membership.version;
    return state;
  }

  end(): void {
    this.closed = true;
    this.wake?.();
  }

  waitForChange(): Promise<void> {
    return new Promise((resolve) => (this.wake = resolve));
  }
}

/** A user somebody watches: the state all their subscribers share. */
class WatchedUser {
  readonly subscribers = new Set<Subscriber>();
  /** null until the first read. */
  state: MembershipState | null = null;
  /**
   * Read the state even if its version did not move: a new subscriber gets the current state
   * (its leaves' gated-signal counts grow without a new version).
   */
  refresh = true;
  /** Compare versions whatever the notifications said (after a resync). */
  verify = false;
  /** The highest version a notification announced. */
  notified = 0n;

  constructor(readonly userId: string) {}

  /** What the next read compares against: undefined reads the state whatever its version. */
  get heldVersion(): WatchedVersion['version'] {
    return this.state && !this.refresh ? this.state.membership.version : undefined;
  }

  needsRead(): boolean {
    const held = this.heldVersion;
    return this.verify || held === undefined || held === null || this.notified > BigInt(held);
  }
}

/**
 * Live membership states for subscriptions, fed by the cluster's LISTEN/NOTIFY stream (so a change
 * made on any instance, or by SQL, arrives on every instance).
 *
 * Fan-out is bounded: subscriptions are capped per watched user and per instance; all subscribers
 * of one user share one entry, and reads are batched: one statement at a time, for every watched
 * user that changed meanwhile. A change of one user is one read however many watch them; a resync
 * is one read of all watched users that returns only those whose version moved.
 */
export class MembershipStatusFeed {
  private readonly watched = new Map<string, WatchedUser>();
  private readonly dirty = new Set<WatchedUser>();
  private subscriberCount = 0;
  private reading = false;
  /** Cancels the read that is due (next turn, or a retry after a failure). */
  private scheduled: (() => void) | null = null;
  private retryMs = RETRY_MIN_MS;
  private closed = false;
  private readonly stats: StatusFeedCounters = { reads: 0, failedReads: 0, refused: { perUser: 0, perInstance: 0 } };
  private readonly stopListening: () => void;

  constructor(
    private readonly db: Kysely<Database>,
    membership: MembershipSync,
    private readonly limits: StatusFeedLimits,
    private readonly logger: Logger,
  ) {
    const stopChanges = membership.onChange((change) => {
      const user = this.watched.get(change.userId);
      if (!user || change.version <= user.notified) return;
      user.notified = change.version;
      this.markDirty(user);
    });
    const stopResyncs = membership.onResync(() => {
      // Notifications may have been missed: check every watched user, in one statement.
      for (const user of this.watched.values()) {
        user.verify = true;
        this.markDirty(user);
      }
    });
    this.stopListening = () => {
      stopChanges();
      stopResyncs();
    };
  }

  /**
   * The current state, then every change, until the client leaves (`return()`) or `close()`.
   * Throws TOO_MANY_SUBSCRIPTIONS beyond a cap (HTTP 429 for the user's cap, 503 for the instance's,
   * both with Retry-After).
   * A hand-written iterator rather than an async generator: a generator waiting for the next change
   * could not be told to return until that change came, so a vanished client would linger.
   */
  watch(userId: string): AsyncIterableIterator<MembershipState> {
    if (this.closed) return ended();
    this.admit(userId);
    let user = this.watched.get(userId);
    if (!user) {
      user = new WatchedUser(userId);
      this.watched.set(userId, user);
    }
    // Subscribers arriving together (a reconnect wave) share this read too.
    user.refresh = true;
    this.markDirty(user);
    const watchedUser = user;
    const subscriber = new Subscriber();
    watchedUser.subscribers.add(subscriber);
    this.subscriberCount++;

    const finish = () => {
      if (subscriber.closed) return;
      subscriber.end();
      watchedUser.subscribers.delete(subscriber);
      this.subscriberCount--;
      if (watchedUser.subscribers.size === 0 && this.watched.get(userId) === watchedUser) {
        this.watched.delete(userId);
        this.dirty.delete(watchedUser);
      }
    };
    return {
      next: async () => {
        while (!subscriber.closed) {
          const state = subscriber.take();
          if (state) return { value: state, done: false };
          await subscriber.waitForChange();
        }
        return DONE;
      },
      return: async () => {
        finish();
        return DONE;
      },
      [Symbol.asyncIterator]() {
        return this;
      },
    };
  }

  get subscribers(): number {
    return this.subscriberCount;
  }

  get watchedUsers(): number {
    return this.watched.size;
  }

  /** A read in flight or due. */
  get busy(): boolean {
    return this.reading || this.scheduled !== null || this.dirty.size > 0;
  }

  get counters(): Readonly<StatusFeedCounters> {
    return { ...this.stats, refused: { ...this.stats.refused } };
  }

  /** Ends every stream cleanly (server shutdown). */
  close(): void {
    this.closed = true;
    this.stopListening();
    this.scheduled?.();
    for (const user of this.watched.values()) for (const subscriber of user.subscribers) subscriber.end();
    this.watched.clear();
    this.dirty.clear();
    this.subscriberCount = 0;
  }

  private admit(userId: string): void {
    if (this.subscriberCount >= this.limits.perInstance) {
      this.stats.refused.perInstance++;
      throw new TooManySubscriptionsError('perInstance', this.limits.perInstance);
    }
    if ((this.watched.get(userId)?.subscribers.size ?? 0) >= this.limits.perUser) {
      this.stats.refused.perUser++;
      throw new TooManySubscriptionsError('perUser', this.limits.perUser);
    }
  }

  private markDirty(user: WatchedUser): void {
    this.dirty.add(user);
    if (!this.reading && !this.scheduled && !this.closed) this.readSoon();
  }

  private async read(): Promise<void> {
    this.scheduled = null;
    const batch = [...this.dirty].filter((user) => user.needsRead());
    this.dirty.clear();
    if (batch.length === 0 || this.closed) return;
    this.reading = true;
    const watched = batch.map((user) => ({ userId: user.userId, version: user.heldVersion }));
    for (const user of batch) {
      user.refresh = false;
      user.verify = false;
    }
    let failed = false;
    try {
      this.stats.reads++;
      const states = await readChangedStates(this.db, watched, RECENT_LEAVES);
      for (const state of states) {
        const user = this.watched.get(state.membership.userId);
        if (!user) continue;
        user.state = state;
        for (const subscriber of user.subscribers) subscriber.deliver(state);
      }
    } catch (error) {
      failed = true;
      this.stats.failedReads++;
      this.logger.warn({ err: error, users: batch.length, retryInMs: this.retryMs }, 'subscription read failed');
      for (const user of batch) {
        // Whoever waited for a state still does; existing subscribers drop what they already have.
        user.refresh = true;
        if (this.watched.get(user.userId) === user) this.dirty.add(user);
      }
    } finally {
      this.reading = false;
    }
    if (failed) {
      // Subscribers keep waiting (their streams stay open) while the database is away.
      const delayMs = this.retryMs;
      this.retryMs = Math.min(this.retryMs * 2, RETRY_MAX_MS);
      if (!this.closed) {
        const timer = setTimeout(() => void this.read(), delayMs);
        this.scheduled = () => clearTimeout(timer);
      }
      return;
    }
    this.retryMs = RETRY_MIN_MS;
    if (!this.closed && this.dirty.size > 0) this.readSoon();
  }

  /** On the next turn of the event loop: notifications that arrived together share one read. */
  private readSoon(): void {
    const immediate = setImmediate(() => void this.read());
    this.scheduled = () => clearImmediate(immediate);
  }
}

const DONE: IteratorResult<MembershipState> = { value: undefined, done: true };

/** A stream that completes at once (subscribing while the server shuts down). */
function ended(): AsyncIterableIterator<MembershipState> {
  return {
    next: async () => DONE,
    return: async () => DONE,
    [Symbol.asyncIterator]() {
      return this;
    },
  };
}
