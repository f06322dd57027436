import type { MembershipChange } from './membership-cache.js';

/** A decoded change notification; `sentAtUs` is the database clock at the write. */
export interface MembershipNotification {
  change: MembershipChange;
  sentAtUs: bigint;
}

/** Receives the LEFT users of one snapshot, batch by batch. */
export interface LeftUsersReader {
  /** Called once before the first batch with the expected number of LEFT users. */
  expect(count: number): void;
  add(userIds: readonly string[]): void;
}

export interface MembershipDelta {
  /** The snapshot's version: every change up to it is reflected in `rows` or earlier. */
  version: bigint;
  /** LEFT users in the snapshot, to catch deletes (they leave no row behind). */
  leftCount: number;
  rows: MembershipChange[];
}

/** What the cache needs from the membership store: its notification channel and two snapshot reads. */
export interface MembershipSource {
  readonly channel: string;
  decodeNotification(payload: string): MembershipNotification | null;
  /** Streams every LEFT user of one consistent snapshot into `reader`; resolves to its version. */
  readLeftUsers(reader: LeftUsersReader): Promise<bigint>;
  /** Rows whose version is above `version`, from one consistent snapshot. */
  readChangesSince(version: bigint): Promise<MembershipDelta>;
}
