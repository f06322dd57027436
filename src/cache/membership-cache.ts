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
   * Rows with version > appliedVersion, read in one snapshot whose clock was `snapshotVersion`.
   * If notifications already carried us past the snapshot, they told us everything it holds.
   */
  applySnapshotDelta(rows: Iterable<MembershipChange>, snapshotVersion: bigint): void {
    if (snapshotVersion <= this.applied) return;
    for (const row of rows) {
      if (row.version > this.applied) this.set(this.left, row);
    }
    this.applied = snapshotVersion;
  }

  /** Start of a full reload: notifications from now on are kept to replay onto the new set. */
  beginReload(): void {
    this.recording = [];
  }

  /** Swaps in a set loaded from a snapshot taken after beginReload(). */
  finishReload(loaded: U64HashSet, snapshotVersion: bigint): void {
    let applied = snapshotVersion;
    for (const change of this.recording ?? []) {
      if (change.version > applied) {
        this.set(loaded, change);
        applied = change.version;
      }
    }
    this.left = loaded;
    this.applied = applied;
    this.recording = null;
  }

  abortReload(): void {
    this.recording = null;
  }

  private set(target: U64HashSet, change: MembershipChange): void {
    if (change.status === 'LEFT') target.add(change.userId);
    else target.delete(change.userId);
  }
}
