import { splitU64Decimal, type U64Halves } from './u64-decimal.js';
import { U64SlotTable } from './u64-slot-table.js';

/**
 * A set of unsigned 64-bit keys in one Uint32Array (hi, lo pairs, see U64SlotTable): about
 * 11–21 bytes per key, against ~100 for a Set of strings. Lookups take the decimal string itself
 * and allocate nothing. Key 0 is kept in a flag because an all-zero slot marks "empty".
 *
 * Mark and sweep replaces the contents in place, with no second table: between `beginMarking()`
 * and `sweepUnmarked()`, `addMarkedPacked` marks the keys to keep (one bit per slot, 1/64 of the
 * table), and the sweep removes every other key.
 */
export class U64HashSet {
  private readonly table: U64SlotTable;
  /** The key being looked up, parsed in place. */
  private readonly key: U64Halves = { hi: 0, lo: 0 };
  private hasZero = false;
  private zeroMarked = false;

  constructor(expected = 0) {
    this.table = new U64SlotTable(expected);
  }

  get size(): number {
    return this.table.size + (this.hasZero ? 1 : 0);
  }

  /** Bytes held by the table itself. */
  get byteLength(): number {
    return this.table.byteLength;
  }

  has(decimal: string): boolean {
    const key = this.parse(decimal);
    if (key.hi === 0 && key.lo === 0) return this.hasZero;
    return this.table.find(key.hi, key.lo) >= 0;
  }

  add(decimal: string): void {
    const key = this.parse(decimal);
    if (key.hi === 0 && key.lo === 0) {
      this.hasZero = true;
      return;
    }
    if (this.table.find(key.hi, key.lo) < 0) this.table.insertNew(key.hi, key.lo);
  }

  /** Adds each key if absent and marks it as one to keep (see `sweepUnmarked`): big-endian u64s, 8 bytes each. */
  addMarkedPacked(packed: Uint8Array): void {
    const table = this.table;
    for (let i = 0; i + 8 <= packed.length; i += 8) {
      const hi = ((packed[i]! << 24) | (packed[i + 1]! << 16) | (packed[i + 2]! << 8) | packed[i + 3]!) >>> 0;
      const lo = ((packed[i + 4]! << 24) | (packed[i + 5]! << 16) | (packed[i + 6]! << 8) | packed[i + 7]!) >>> 0;
      if (hi === 0 && lo === 0) {
        this.hasZero = true;
        this.zeroMarked = true;
        continue;
      }
      const index = table.find(hi, lo);
      table.mark(index >= 0 ? index : table.insertNew(hi, lo));
    }
  }

  delete(decimal: string): void {
    const key = this.parse(decimal);
    if (key.hi === 0 && key.lo === 0) {
      this.hasZero = false;
      return;
    }
    const index = this.table.find(key.hi, key.lo);
    if (index >= 0) this.table.removeAt(index);
  }

  /** Grows the table once so that `expected` keys fit without rehashing as they arrive. */
  reserve(expected: number): void {
    this.table.reserve(expected);
  }

  /** Shrinks a table that holds far fewer keys than it was sized for (e.g. after many deletes). */
  compact(): void {
    this.table.compact();
  }

  /** Starts marking the keys to keep; every mark is clear. */
  beginMarking(): void {
    this.table.beginMarking();
    this.zeroMarked = false;
  }

  /** Removes every key not marked since `beginMarking`, and stops marking. */
  sweepUnmarked(): void {
    if (!this.table.marking) return;
    if (!this.zeroMarked) this.hasZero = false;
    this.table.sweepUnmarked();
    this.zeroMarked = false;
  }

  /** Stops marking and keeps every key. */
  endMarking(): void {
    this.table.endMarking();
    this.zeroMarked = false;
  }

  private parse(decimal: string): U64Halves {
    splitU64Decimal(decimal, this.key);
    return this.key;
  }
}
