import type { Push, RepeaterBuffer, Stop } from '@repeaterjs/repeater';
import { heldStream } from './held-stream.js';

/** A subscription refused by a cap: `perUser` (streams following one user) or `perInstance`. */
export class TooManySubscriptionsError extends Error {
  override name = 'TooManySubscriptionsError';
  constructor(
    readonly limit: 'perUser' | 'perInstance',
    readonly max: number,
  ) {
    super(
      limit === 'perInstance'
        ? `This instance follows its maximum of ${max} subscriptions; retry later.`
        : `At most ${max} subscriptions may follow one user; close one first.`,
    );
  }
}

export interface SubscriptionLimits {
  /** Subscriptions following one user on this instance. */
  perUser: number;
  /** Subscriptions on this instance. */
  perInstance: number;
}

/**
 * Places for open streams on this instance, per followed user and in all. An app has two sets: one
 * shared by the streams users follow (membership status, purge progress), which the
 * `community_subscriptions` gauge counts, and one for the change feed's streams (keyed by service
 * principal). A place is taken before the stream is made, so a
 * refusal comes before anything is sent (an HTTP 429 or 503, not an event), and given back once
 * when the stream ends.
 */
export class SubscriptionCaps {
  private readonly perUser = new Map<string, number>();
  private total = 0;
  private readonly refusedCounts = { perUser: 0, perInstance: 0 };

  constructor(private readonly limits: SubscriptionLimits) {}

  /** Takes a place for a stream following `userId`; the answer gives it back. Beyond a cap: TooManySubscriptionsError. */
  admit(userId: string): () => void {
    if (this.total >= this.limits.perInstance) {
      this.refusedCounts.perInstance++;
      throw new TooManySubscriptionsError('perInstance', this.limits.perInstance);
    }
    const following = this.perUser.get(userId) ?? 0;
    if (following >= this.limits.perUser) {
      this.refusedCounts.perUser++;
      throw new TooManySubscriptionsError('perUser', this.limits.perUser);
    }
    this.perUser.set(userId, following + 1);
    this.total++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.total--;
      const left = (this.perUser.get(userId) ?? 1) - 1;
      if (left === 0) this.perUser.delete(userId);
      else this.perUser.set(userId, left);
    };
  }

  /**
   * The one way a stream is made: a place taken now (or TooManySubscriptionsError), then a
   * heldStream whose end, however it comes (client gone, token expired, shutdown), gives the place
   * back and runs `release` once, so the stream's work stops with it.
   */
  stream<T>(
    userId: string,
    executor: (push: Push<T>, stop: Stop) => unknown,
    release: () => void,
    buffer?: RepeaterBuffer,
  ): AsyncIterableIterator<T> {
    const place = this.admit(userId);
    return heldStream(
      executor,
      () => {
        place();
        release();
      },
      buffer,
    );
  }

  get open(): number {
    return this.total;
  }

  get refused(): { perUser: number; perInstance: number } {
    return { ...this.refusedCounts };
  }
}
