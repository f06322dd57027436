import type { MembershipChange, MembershipDelta } from './membership-source.js';
import { U64HashSet } from './u64-hash-set.js';

/** A notification applied during a snapshot read, and whether its user was LEFT before it. */
interface Recorded {
  change: MembershipChange;
  wasLeft: boolean;
}

/**
 * The in-memory gate: the set of users currently LEFT (absent means ACTIVE) and the applied
 * version, up to which every change is reflected (or overtaken by a newer one of the same user).
 *
 * Versions come from one commit-ordered counter, and one LISTEN session delivers notifications in
 * commit order. So while the cache follows an unbroken session, each notification completes it up
 * to its version. A broken session leaves a gap only a snapshot read closes: notifications that
 * arrive meanwhile are applied (each is newer than what the set holds for its user, so LEFT answers
 * stay right) but do not move the applied version, so the next delta read still starts below the
 * gap. Anything at or below the highest version seen is stale or a duplicate.
 */
export class MembershipCache {
  private readonly left = new U64HashSet();
  private applied = 0n;
  private seen = 0n;
  private following = false;
  private reading: { kind: 'delta' | 'reload'; recorded: Recorded[] } | null = null;

  /** The hot path: O(1), no allocation, no await. */
  isLeft(userId: string): boolean {
    return this.left.has(userId);
  }

  get size(): number {
    return this.left.size;
  }

  get appliedVersion(): bigint {
    return this.applied;
  }

  /** True while every change above the applied version will arrive as a notification. */
  get followsNotifications(): boolean {
    return this.following;
  }

  get tableBytes(): number {
    return this.left.byteLength;
  }

  /** A notification. Returns false when it was stale or a duplicate. */
  applyChange(change: MembershipChange): boolean {
    if (change.version <= this.seen) return false;
    this.seen = change.version;
    const reading = this.reading;
    reading?.recorded.push({ change, wasLeft: this.left.has(change.userId) });
    // During a reload a removal could drop a key the snapshot already marked; it waits for the
    // sweep. LEFT is applied at once: it can only hold back more.
    if (reading?.kind !== 'reload' || change.status === 'LEFT') this.set(change);
    if (this.following) this.applied = change.version;
    return true;
  }

  /** The session broke (or the set drifted): changes above the applied version may be missed. */
  markGap(): void {
    this.following = false;
  }

  /** Start of a delta read; returns the version to read above. */
  beginDelta(): bigint {
    this.reading = { kind: 'delta', recorded: [] };
    return this.applied;
  }

  /**
   * Applies a delta snapshot. `unbroken`: one session delivered every notification since before
   * the read began. Returns false when the LEFT count says the set drifted (a full reload is due).
   */
  finishDelta(delta: MembershipDelta, unbroken: boolean): boolean {
    const recorded = this.endReading();
    // Notifications newer than the snapshot are a suffix (versions rise in arrival order). Taking
    // them back leaves the snapshot's state to count; then they are applied again.
    let newer = recorded.findIndex((entry) => entry.change.version > delta.version);
    if (newer < 0) newer = recorded.length;
    for (let i = recorded.length - 1; i >= newer; i--) {
      const { change, wasLeft } = recorded[i]!;
      if (wasLeft) this.left.add(change.userId);
      else this.left.delete(change.userId);
    }
    for (const row of delta.rows) this.set(row);
    // Every change leaves a row with its version except a delete: a delete missed in a gap leaves an
    // entry the snapshot does not have, and only the count shows it.
    const counted = this.left.size === delta.leftCount;
    for (let i = newer; i < recorded.length; i++) this.set(recorded[i]!.change);
    this.settle(delta.version, unbroken && counted);
    return counted;
  }

  /**
   * Start of a full reload, in place: the current set keeps answering (stale LEFT entries only hold
   * back more) while the snapshot marks what to keep; no second set is built.
   */
  beginReload(): void {
    this.reading = { kind: 'reload', recorded: [] };
    this.following = false;
    this.left.beginMarking();
  }

  /** Sizes the table for the snapshot's LEFT count before its users arrive. */
  expectLeft(count: number): void {
    this.left.reserve(Math.max(count, this.left.size));
  }

  /** A batch of the snapshot's LEFT users, as big-endian u64s (see LeftUsersReader). */
  addSnapshotLeft(packedUserIds: Uint8Array): void {
    this.left.addMarkedPacked(packedUserIds);
  }

  /** Drops what the snapshot did not have, then replays notifications newer than it. */
  finishReload(snapshotVersion: bigint, unbroken: boolean): void {
    const recorded = this.endReading();
    this.left.sweepUnmarked();
    for (const { change } of recorded) {
      if (change.version > snapshotVersion) this.set(change);
    }
    this.left.compact();
    this.settle(snapshotVersion, unbroken);
  }

  /**
   * A read failed. Whatever it applied stays (snapshot users were LEFT at the snapshot, and
   * notifications are newer than what they replaced); the applied version does not move.
   */
  abortReading(): void {
    if (this.reading?.kind === 'reload') this.left.endMarking();
    this.reading = null;
  }

  private settle(snapshotVersion: bigint, unbroken: boolean): void {
    if (snapshotVersion > this.seen) this.seen = snapshotVersion;
    if (snapshotVersion > this.applied) this.applied = snapshotVersion;
    // Unbroken: every notification after the snapshot arrived, up to the highest seen.
    if (unbroken) this.applied = this.seen;
    this.following = unbroken;
  }

  private endReading(): Recorded[] {
    const recorded = this.reading?.recorded ?? [];
    this.reading = null;
    return recorded;
  }

  private set(change: MembershipChange): void {
    if (change.status === 'LEFT') this.left.add(change.userId);
    else this.left.delete(change.userId);
  }
}
