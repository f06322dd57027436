import type { MembershipStatus } from '../../src/db/schema.js';
import type { LeftUsersReader, MembershipDelta, MembershipSource } from '../../src/membership/cache/membership-source.js';
import { decodeMembershipNotification, MEMBERSHIP_CHANNEL } from '../../src/membership/membership-notification.js';

/** User ids as the store hands them to the cache: big-endian u64s, 8 bytes each. */
export function packUserIds(userIds: readonly string[]): Uint8Array {
  const packed = new Uint8Array(userIds.length * 8);
  const view = new DataView(packed.buffer);
  userIds.forEach((userId, i) => view.setBigUint64(i * 8, BigInt(userId)));
  return packed;
}

type StoreOp =
  | { kind: 'leave' | 'rejoin' | 'delete'; userId: string }
  | { kind: 'insert'; userId: string; status: MembershipStatus }
  | { kind: 'burn' };

interface PendingRead {
  /** Advances the read by one step: the snapshot is taken, a batch handed over, or the result returned. */
  step(): boolean;
  fail(): void;
}

/**
 * The model's membership store: the table, its version clock and its snapshot reads, in memory.
 * It keeps PostgreSQL's version semantics: one clock bumped per written row, in commit order, some
 * versions used by no row (INSERT … ON CONFLICT stamps the insert attempt too), a delete announced
 * as ACTIVE with a fresh version and no row left behind. A transaction's notifications are
 * published at its commit.
 */
export class ModelStore implements MembershipSource {
  readonly channel = MEMBERSHIP_CHANNEL;
  readonly decodeNotification = decodeMembershipNotification;
  clock = 0n;
  readonly rows = new Map<string, { status: MembershipStatus; version: bigint }>();
  /** Every committed row change in version order; status null is a delete. */
  private readonly log: { version: bigint; userId: string; status: MembershipStatus | null }[] = [];
  readonly reads: PendingRead[] = [];
  onCommit: (payloads: string[]) => void = () => undefined;
  private closed = false;

  commit(ops: StoreOp[]): void {
    const payloads: string[] = [];
    for (const op of ops) {
      if (op.kind === 'burn') {
        this.clock++;
        continue;
      }
      const row = this.rows.get(op.userId);
      if (op.kind === 'leave' && row?.status !== 'LEFT') {
        if (row) this.clock++; // INSERT … ON CONFLICT DO UPDATE: the insert attempt was stamped first
        this.write(op.userId, 'LEFT', payloads);
      } else if (op.kind === 'rejoin' && row?.status === 'LEFT') {
        this.write(op.userId, 'ACTIVE', payloads);
      } else if (op.kind === 'insert' && !row) {
        this.write(op.userId, op.status, payloads);
      } else if (op.kind === 'delete' && row) {
        this.rows.delete(op.userId);
        const version = ++this.clock;
        this.log.push({ version, userId: op.userId, status: null });
        payloads.push(`${version},${op.userId},ACTIVE,0`);
      }
    }
    if (payloads.length > 0) this.onCommit(payloads);
  }

  private write(userId: string, status: MembershipStatus, payloads: string[]): void {
    const version = ++this.clock;
    this.rows.set(userId, { status, version });
    this.log.push({ version, userId, status });
    payloads.push(`${version},${userId},${status},0`);
  }

  get lastWrite(): bigint {
    return this.log.at(-1)?.version ?? 0n;
  }

  /** The LEFT users once every change up to `version` committed. */
  leftAt(version: bigint): Set<string> {
    const left = new Set<string>();
    for (const change of this.log) {
      if (change.version > version) break;
      if (change.status === 'LEFT') left.add(change.userId);
      else left.delete(change.userId);
    }
    return left;
  }

  private currentLeft(): string[] {
    return [...this.rows].filter(([, row]) => row.status === 'LEFT').map(([userId]) => userId);
  }

  readLeftUsers(reader: LeftUsersReader): Promise<bigint> {
    return this.read<bigint>((resolve) => {
      let snapshot: { version: bigint; ids: string[] } | null = null;
      return () => {
        if (!snapshot) {
          snapshot = { version: this.clock, ids: this.currentLeft() };
          reader.expect(snapshot.ids.length);
          return false;
        }
        if (snapshot.ids.length > 0) {
          reader.add(packUserIds(snapshot.ids.splice(0, 2)));
          return false;
        }
        resolve(snapshot.version);
        return true;
      };
    });
  }

  readChangesSince(since: bigint): Promise<MembershipDelta> {
    return this.read<MembershipDelta>((resolve) => {
      let snapshot: MembershipDelta | null = null;
      return () => {
        if (!snapshot) {
          snapshot = {
            version: this.clock,
            leftCount: this.currentLeft().length,
            rows: [...this.rows]
              .filter(([, row]) => row.version > since)
              .sort(([, a], [, b]) => (a.version < b.version ? -1 : 1))
              .map(([userId, row]) => ({ userId, status: row.status, version: row.version })),
          };
          return false;
        }
        resolve(snapshot);
        return true;
      };
    });
  }

  private read<T>(steps: (resolve: (value: T) => void) => () => boolean): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      if (this.closed) return reject(new Error('store closed'));
      const read: PendingRead = { step: steps(resolve), fail: () => reject(new Error('snapshot read failed')) };
      this.reads.push(read);
    });
  }

  /** Advances (or fails) the oldest pending read; the sync reads one snapshot at a time. */
  advanceRead(fail: boolean): void {
    const read = this.reads[0];
    if (!read) return;
    if (fail) read.fail();
    if (fail || read.step()) this.reads.shift();
  }

  close(): void {
    this.closed = true;
    for (const read of this.reads.splice(0)) read.fail();
  }
}
