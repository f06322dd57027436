import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { Database } from '../db/schema.js';
import { readChangedStates } from './membership-states.store.js';
import type { WatchedUser } from './watched-user.js';

/** The newest leaves each state carries, so `history` with its default page needs no read of its own. */
export const RECENT_LEAVES = 20;

const RETRY_MIN_MS = 100;
const RETRY_MAX_MS = 5_000;

/**
 * The reads behind the status feed, batched: one statement at a time, for every watched user that
 * changed meanwhile (a resync is one read of all of them that returns only those whose version
 * moved). A failed read is retried with backoff; subscribers keep waiting meanwhile.
 */
export class StatusReads {
  private readonly dirty = new Set<WatchedUser>();
  private reading = false;
  /** Cancels the read that is due (next turn, or a retry after a failure). */
  private scheduled: (() => void) | null = null;
  private retryMs = RETRY_MIN_MS;
  private closed = false;
  reads = 0;
  failedReads = 0;

  constructor(
    private readonly db: Kysely<Database>,
    /** The users watched now: a read's result for anyone else is dropped. */
    private readonly watched: ReadonlyMap<string, WatchedUser>,
    private readonly logger: Logger,
  ) {}

  /** A read in flight or due. */
  get busy(): boolean {
    return this.reading || this.scheduled !== null || this.dirty.size > 0;
  }

  markDirty(user: WatchedUser): void {
    this.dirty.add(user);
    if (!this.reading && !this.scheduled && !this.closed) this.readSoon();
  }

  forget(user: WatchedUser): void {
    this.dirty.delete(user);
  }

  close(): void {
    this.closed = true;
    this.scheduled?.();
    this.dirty.clear();
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
      this.reads++;
      const states = await readChangedStates(this.db, watched, RECENT_LEAVES);
      for (const state of states) {
        const user = this.watched.get(state.membership.userId);
        if (!user) continue;
        user.state = state;
        for (const subscriber of user.subscribers) subscriber.deliver(state);
      }
    } catch (error) {
      failed = true;
      this.failedReads++;
      this.logger.warn({ err: error, users: batch.length, retryInMs: this.retryMs }, 'subscription read failed');
      for (const user of batch) {
        // Whoever waited for a state still does; existing subscribers drop what they already have.
        user.refresh = true;
        if (this.watched.get(user.userId) === user) this.dirty.add(user);
      }
    } finally {
      this.reading = false;
    }
    if (failed) return this.retryLater();
    this.retryMs = RETRY_MIN_MS;
    if (!this.closed && this.dirty.size > 0) this.readSoon();
  }

  private retryLater(): void {
    const delayMs = this.retryMs;
    this.retryMs = Math.min(this.retryMs * 2, RETRY_MAX_MS);
    if (this.closed) return;
    const timer = setTimeout(() => void this.read(), delayMs);
    this.scheduled = () => clearTimeout(timer);
  }

  /** On the next turn of the event loop: notifications that arrived together share one read. */
  private readSoon(): void {
    const immediate = setImmediate(() => void this.read());
    this.scheduled = () => clearImmediate(immediate);
  }
}
