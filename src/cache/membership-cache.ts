import type { MembershipStatus } from '../db/schema.js';
import { U64HashSet } from './u64-hash-set.js';

export interface MembershipChange {
  version: bigint;
  userId: string;
  status: MembershipStatus;
}

/**
 * The in-memory gate: the set of users currently LEFT (absent means ACTIVE) and the highest
 * membership version applied. Versions come from one commit-ordered counter, so "applied V" means
 * every change up to V is reflected, and anything at or below V is stale or a duplicate.
 */
export class MembershipCache {
  private left = new U64HashSet();
  private applied = 0n;
  private recording: MembershipChange[] | null = null;

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

  get tableBytes(): number {
    return this.left.byteLength;
  }

  /** A notification. Returns false when it was stale or a duplicate. */
  applyChange(change: MembershipChange): boolean {
    this.recording?.push(change);
    if (change.version <= this.applied) return false;
    this.set(this.left, change);
    this.applied = change.version;
    return true;
  }

  /**
   * Start of a snapshot read. Notifications from now on are also kept, to be replayed over the
   * snapshot: after a reconnect, notifications newer than the snapshot may arrive before it does,
   * while older changes were missed, so neither side alone is complete.
   */
  beginSnapshot(): void {
    this.recording = [];
  }

  /** Applies rows changed since `beginSnapshot` read them (version > the applied version then). */
  finishDelta(rows: Iterable<MembershipChange>, snapshotVersion: bigint): void {
    for (const row of rows) this.set(this.left, row);
    this.replayRecorded(this.left, snapshotVersion);
  }

  /** Swaps in a whole set loaded from a snapshot. */
  finishReload(loaded: U64HashSet, snapshotVersion: bigint): void {
    this.left = loaded;
    this.replayRecorded(loaded, snapshotVersion);
  }

  abortSnapshot(): void {
    this.recording = null;
  }

  private replayRecorded(target: U64HashSet, snapshotVersion: bigint): void {
    let applied = snapshotVersion;
    for (const change of this.recording ?? []) {
      if (change.version > applied) {
        this.set(target, change);
        applied = change.version;
      }
    }
    this.applied = applied;
    this.recording = null;
  }

  private set(target: U64HashSet, change: MembershipChange): void {
    if (change.status === 'LEFT') target.add(change.userId);
    else target.delete(change.userId);
  }
}
