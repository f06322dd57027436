import type { Kysely } from 'kysely';
import type { MembershipSync } from '../cache/membership-sync.js';
import type { Database } from '../db/schema.js';
import { findMembership, type Membership } from './membership.store.js';

/**
 * Live membership states for subscriptions, fed by the cluster's LISTEN/NOTIFY stream (so a change
 * made on any instance, or by SQL, arrives on every instance). Each subscriber holds one "changed"
 * flag, not a queue: a slow client only ever gets the latest state, and one that vanishes is
 * dropped when its iterator returns.
 */
export class MembershipStatusFeed {
  private readonly closers = new Set<() => void>();

  constructor(
    private readonly db: Kysely<Database>,
    private readonly membership: MembershipSync,
  ) {}

  /**
   * The current state, then every change, until the client leaves (`return()`) or `close()`.
   * A hand-written iterator rather than an async generator: a generator waiting for the next change
   * could not be told to return until that change came, so a vanished client would linger.
   */
  watch(userId: string): AsyncIterableIterator<Membership> {
    let changed = true;
    let closed = false;
    let wake: (() => void) | null = null;
    let lastVersion: string | null | undefined;
    const poke = () => {
      changed = true;
      wake?.();
    };
    const stopChanges = this.membership.onChange((change) => change.userId === userId && poke());
    const stopResyncs = this.membership.onResync(poke);
    const finish = () => {
      if (closed) return;
      closed = true;
      stopChanges();
      stopResyncs();
      this.closers.delete(finish);
      wake?.();
    };
    this.closers.add(finish);
    const done = (): IteratorResult<Membership> => ({ value: undefined, done: true });
    return {
      next: async () => {
        while (!closed) {
          if (!changed) {
            await new Promise<void>((resolve) => (wake = resolve));
            wake = null;
            continue;
          }
          changed = false;
          const state = await findMembership(this.db, userId);
          if (!closed && state.version !== lastVersion) {
            lastVersion = state.version;
            return { value: state, done: false };
          }
        }
        return done();
      },
      return: async () => {
        finish();
        return done();
      },
      [Symbol.asyncIterator]() {
        return this;
      },
    };
  }

  get subscribers(): number {
    return this.closers.size;
  }

  /** Ends every stream cleanly (server shutdown). */
  close(): void {
    for (const close of [...this.closers]) close();
  }
}
