import { describe, expect, it } from 'vitest';
import { MembershipCache } from '../src/membership/cache/membership-cache.js';
import { U64HashSet } from '../src/membership/cache/u64-hash-set.js';
import { packUserIds } from './support/membership-model-store.js';

const MAX = 18446744073709551615n;

function randomU64(): string {
  const pick = Math.random();
  if (pick < 0.05)
    return ['0', '1', MAX.toString(), (MAX - 1n).toString(), (2n ** 32n).toString(), (2n ** 32n - 1n).toString()][
      Math.floor(Math.random() * 6)
    ]!;
  if (pick < 0.5) return String(Math.floor(Math.random() * 5000));
  return (BigInt(Math.floor(Math.random() * 2 ** 32)) * 2n ** 32n + BigInt(Math.floor(Math.random() * 2 ** 32))).toString();
}

describe('U64HashSet', () => {
  it('agrees with a Set<string> through random adds, deletes and growth', () => {
    const set = new U64HashSet();
    const reference = new Set<string>();
    for (let i = 0; i < 200_000; i++) {
      const key = randomU64();
      if (Math.random() < 0.6) {
        set.add(key);
        reference.add(key);
      } else {
        set.delete(key);
        reference.delete(key);
      }
      if (i % 997 === 0) expect(set.size).toBe(reference.size);
    }
    expect(set.size).toBe(reference.size);
    for (const key of reference) expect(set.has(key)).toBe(true);
    for (let i = 0; i < 10_000; i++) {
      const key = randomU64();
      expect(set.has(key)).toBe(reference.has(key));
    }
  });

  it('shrinks a table sized from an overestimate, keeping every key', () => {
    const set = new U64HashSet(1_000_000);
    const keys = Array.from({ length: 1000 }, (_, i) => String(BigInt(i) * 7919n + 18446744073709500000n));
    for (const key of keys) set.add(key);
    const before = set.byteLength;
    set.compact();
    expect(set.byteLength).toBeLessThan(before / 100);
    expect(keys.every((key) => set.has(key))).toBe(true);
    expect(set.size).toBe(1000);
  });

  it('mark and sweep keeps exactly the marked keys, across growth, deletes and key 0', () => {
    for (let round = 0; round < 20; round++) {
      const set = new U64HashSet();
      const before = new Set<string>();
      for (let i = 0; i < 2000; i++) {
        const key = randomU64();
        set.add(key);
        before.add(key);
      }
      const existing = [...before];
      set.beginMarking();
      const marked = new Set<string>();
      const unmarked = new Set(before);
      for (let i = 0; i < 300; i++) {
        const keys = Array.from({ length: 1 + Math.floor(Math.random() * 40) }, () =>
          Math.random() < 0.5 ? existing[Math.floor(Math.random() * existing.length)]! : randomU64(),
        );
        if (Math.random() < 0.8) {
          set.addMarkedPacked(packUserIds(keys));
          for (const key of keys) {
            marked.add(key);
            unmarked.delete(key);
          }
        } else {
          for (const key of keys) {
            set.add(key);
            if (!marked.has(key)) unmarked.add(key);
          }
        }
      }
      expect(set.size).toBe(new Set([...marked, ...unmarked]).size);
      set.sweepUnmarked();
      expect(set.size).toBe(marked.size);
      for (const key of marked) expect(set.has(key)).toBe(true);
      for (const key of unmarked) expect(set.has(key)).toBe(false);
    }
  });

  it('keeps keys that differ only in one 32-bit half apart', () => {
    const set = new U64HashSet();
    set.add((2n ** 32n).toString());
    expect(set.has('1')).toBe(false);
    expect(set.has('0')).toBe(false);
    set.add('0');
    expect(set.has('0')).toBe(true);
    expect(set.size).toBe(2);
  });
});

describe('MembershipCache versions', () => {
  it('ignores stale, duplicate and reordered notifications', () => {
    const cache = new MembershipCache();
    expect(cache.applyChange({ version: 2n, userId: '5', status: 'LEFT' })).toBe(true);
    expect(cache.applyChange({ version: 2n, userId: '5', status: 'LEFT' })).toBe(false);
    expect(cache.applyChange({ version: 1n, userId: '5', status: 'ACTIVE' })).toBe(false);
    expect(cache.isLeft('5')).toBe(true);
    expect(cache.applyChange({ version: 3n, userId: '5', status: 'ACTIVE' })).toBe(true);
    expect(cache.isLeft('5')).toBe(false);
  });

  it('after a gap, a delta from the applied version fills what was missed and keeps what newer notifications said', () => {
    const cache = new MembershipCache();
    cache.beginDelta();
    cache.finishDelta({ version: 4n, leftCount: 1, rows: [{ version: 4n, userId: '1', status: 'LEFT' }] }, true);
    expect(cache.appliedVersion).toBe(4n);
    // The session breaks: version 5 is missed. The next session delivers 6 before the resync
    // begins: applied, but the applied version stays below the gap, where the delta starts.
    cache.markGap();
    cache.applyChange({ version: 6n, userId: '1', status: 'ACTIVE' });
    expect(cache.appliedVersion).toBe(4n);
    expect(cache.beginDelta()).toBe(4n);
    // 8 arrives during the read, after its snapshot (7) was taken: replayed over it.
    cache.applyChange({ version: 8n, userId: '2', status: 'ACTIVE' });
    const counted = cache.finishDelta(
      {
        version: 7n,
        leftCount: 2,
        rows: [
          { version: 5n, userId: '3', status: 'LEFT' },
          { version: 6n, userId: '1', status: 'ACTIVE' },
          { version: 7n, userId: '2', status: 'LEFT' },
        ],
      },
      true,
    );
    expect(counted).toBe(true);
    expect(['1', '2', '3'].map((id) => cache.isLeft(id))).toEqual([false, false, true]);
    expect(cache.appliedVersion).toBe(8n);
    expect(cache.followsNotifications).toBe(true);
  });

  it('counts the snapshot state, not what newer notifications made of it, to catch a missed delete', () => {
    const cache = new MembershipCache();
    cache.beginDelta();
    cache.finishDelta(
      {
        version: 2n,
        leftCount: 2,
        rows: [
          { version: 1n, userId: '1', status: 'LEFT' },
          { version: 2n, userId: '2', status: 'LEFT' },
        ],
      },
      true,
    );
    // User 1's row is deleted (version 3) while the session is down; a leave of user 5 (version 5)
    // arrives during the resync read, after its snapshot (version 4: one LEFT row).
    cache.markGap();
    cache.beginDelta();
    cache.applyChange({ version: 5n, userId: '5', status: 'LEFT' });
    expect(cache.finishDelta({ version: 4n, leftCount: 1, rows: [] }, true)).toBe(false);
    expect(cache.followsNotifications).toBe(false);
    expect(cache.isLeft('5')).toBe(true);
  });

  it('reloads in place: old LEFT answers stay until the sweep, removals wait for it, newer changes are replayed', () => {
    const cache = new MembershipCache();
    cache.beginReload();
    cache.expectLeft(2);
    cache.addSnapshotLeft(packUserIds(['9', '3']));
    cache.finishReload(6n, true);
    expect(cache.appliedVersion).toBe(6n);

    cache.beginReload();
    expect(cache.followsNotifications).toBe(false);
    cache.addSnapshotLeft(packUserIds(['7']));
    cache.applyChange({ version: 7n, userId: '3', status: 'ACTIVE' });
    cache.applyChange({ version: 11n, userId: '8', status: 'LEFT' });
    // Until the sweep, 9 (not in the snapshot) and 3 (rejoined) still answer LEFT: fail closed.
    expect(['9', '3', '8'].map((id) => cache.isLeft(id))).toEqual([true, true, true]);
    cache.finishReload(10n, true);
    expect(['9', '3', '8', '7'].map((id) => cache.isLeft(id))).toEqual([false, false, true, true]);
    expect(cache.size).toBe(2);
    expect(cache.appliedVersion).toBe(11n);
  });
});
