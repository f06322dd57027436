import type { MembershipState, WatchedVersion } from './membership-states.store.js';

/** One subscription's end of a watched user: takes the states worth sending. */
export interface StateSubscriber {
  deliver(state: MembershipState): void;
  /** With an error: the stream fails with it (after what it holds). */
  end(error?: Error): void;
}

/** A subscriber that passes only news on: a client that has a state gets only a new version. */
export function newVersionsOnly(send: (state: MembershipState) => unknown, end: (error?: Error) => void): StateSubscriber {
  let sentVersion: string | null | undefined;
  return {
    deliver(state) {
      if (sentVersion !== undefined && state.membership.version === sentVersion) return;
      sentVersion = state.membership.version;
      void send(state);
    },
    end,
  };
}

/** A user somebody watches: the state all their subscribers share. */
export class WatchedUser {
  readonly subscribers = new Set<StateSubscriber>();
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
