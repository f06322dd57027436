import type { MembershipStatus } from '../../db/schema.js';

export interface MembershipChange {
  version: bigint;
  userId: string;
  status: MembershipStatus;
}

/** A decoded change notification; `sentAtUs` is the database clock at the write. */
export interface MembershipNotification {
  change: MembershipChange;
  sentAtUs: bigint;
}

/** Receives the LEFT users of one snapshot, batch by batch. */
export interface LeftUsersReader {
  /** Called once before the first batch with the number of LEFT users in the snapshot. */
  expect(count: number): void;
  /** User ids as big-endian u64s, 8 bytes each: no string or object per user on the way in. */
  add(packedUserIds: Uint8Array): void;
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
