import { describe, expect, it } from 'vitest';
import { MembershipCache } from '../src/cache/membership-cache.js';
import { U64HashSet } from '../src/cache/u64-hash-set.js';

const MAX = 18446744073709551615n;

function randomU64(): string {
  const pick = Math.random();
  if (pick < 0.05) return ['0', '1', MAX.toString(), (MAX - 1n).toString(), (2n ** 32n).toString(), (2n ** 32n - 1n).toString()][Math.floor(Math.random() * 6)]!;
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

  it('after a gap, a delta fills what was missed and keeps what newer notifications said', () => {
    const cache = new MembershipCache();
    cache.applyChange({ version: 4n, userId: '1', status: 'LEFT' });
    // Disconnected: versions 5 and 6 were missed. Reconnected: the delta read starts, and a newer
    // notification (8) for user 2 arrives before the snapshot (version 7) does.
    cache.beginSnapshot();
    cache.applyChange({ version: 8n, userId: '2', status: 'ACTIVE' });
    cache.finishDelta(
      [
        { version: 5n, userId: '3', status: 'LEFT' },
        { version: 6n, userId: '1', status: 'ACTIVE' },
        { version: 7n, userId: '2', status: 'LEFT' },
      ],
      7n,
    );
    expect(['1', '2', '3'].map((id) => cache.isLeft(id))).toEqual([false, false, true]);
    expect(cache.appliedVersion).toBe(8n);
  });

  it('a full reload replays notifications that arrived while it loaded', () => {
    const cache = new MembershipCache();
    cache.beginSnapshot();
    cache.applyChange({ version: 7n, userId: '9', status: 'LEFT' });
    cache.applyChange({ version: 11n, userId: '8', status: 'LEFT' });
    const loaded = new U64HashSet();
    loaded.add('9');
    loaded.add('3');
    cache.finishReload(loaded, 10n);
    expect(['9', '3', '8'].map((id) => cache.isLeft(id))).toEqual([true, true, true]);
    expect(cache.appliedVersion).toBe(11n);
  });
});
