import type { MembershipChange } from './membership-source.js';

/**
 * Told of every change applied to the cache: `sentAtUs` is the database clock at the write,
 * `appliedAtUs` this process's clock (epoch microseconds) at the moment the cache applied it,
 * which may be a little before the listener is called.
 */
export type MembershipChangeListener = (change: MembershipChange, sentAtUs: bigint, appliedAtUs: number) => void;

interface Applied {
  change: MembershipChange;
  sentAtUs: bigint;
  appliedAtUs: number;
}

/**
 * What follows a cache apply, kept out of its way: the notification handler only applies and
 * records; read-your-writes waiters and change listeners (subscriptions, the change feed, webhook
 * wake-ups, metrics) run together in one task scheduled with setImmediate, so a burst of
 * notifications (one socket read may carry many) is applied in full before any of them runs, and
 * none of them delays the next notification waiting to be read.
 */
export class AppliedFanOut {
  private pending: Applied[] = [];
  private scheduled = false;
  private readonly listeners = new Set<MembershipChangeListener>();

  /** `release`: frees the waiters the cache's applied version now covers. */
  constructor(private readonly release: () => void) {}

  add(listener: MembershipChangeListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Called right after the cache applied `change`. */
  applied(change: MembershipChange, sentAtUs: bigint): void {
    this.pending.push({ change, sentAtUs, appliedAtUs: (performance.timeOrigin + performance.now()) * 1000 });
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => this.flush());
  }

  private flush(): void {
    this.scheduled = false;
    const batch = this.pending;
    this.pending = [];
    this.release();
    for (const { change, sentAtUs, appliedAtUs } of batch) {
      for (const listener of this.listeners) listener(change, sentAtUs, appliedAtUs);
    }
  }
}
