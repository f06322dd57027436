import { SlotMarks } from './slot-marks.js';

const MIN_CAPACITY = 16;
const MAX_LOAD = 0.75;

/**
 * Open addressing over non-zero (hi, lo) pairs in one Uint32Array: linear probing, and
 * backward-shift deletion, which keeps every probe chain intact without tombstones. An all-zero
 * slot marks "empty". While marking, each key's mark moves with it.
 */
export class U64SlotTable {
  private slots: Uint32Array;
  private mask: number;
  private count = 0;
  private marks: SlotMarks | null = null;

  constructor(expected: number) {
    const capacity = capacityFor(expected);
    this.slots = new Uint32Array(capacity * 2);
    this.mask = capacity - 1;
  }

  get size(): number {
    return this.count;
  }

  get byteLength(): number {
    return this.slots.byteLength;
  }

  get marking(): boolean {
    return this.marks !== null;
  }

  /** The key's slot, or -1. */
  find(hi: number, lo: number): number {
    const slots = this.slots;
    let index = this.slotOf(hi, lo);
    for (;;) {
      const sHi = slots[index * 2]!;
      const sLo = slots[index * 2 + 1]!;
      if (sHi === 0 && sLo === 0) return -1;
      if (sHi === hi && sLo === lo) return index;
      index = (index + 1) & this.mask;
    }
  }

  /** Inserts a key that is not in the table (growing it first if full enough); returns its slot. */
  insertNew(hi: number, lo: number): number {
    if (this.count + 1 > (this.mask + 1) * MAX_LOAD) this.rehash((this.mask + 1) * 2);
    return this.insert(hi, lo);
  }

  removeAt(index: number): void {
    const slots = this.slots;
    const mask = this.mask;
    let hole = index;
    let next = (hole + 1) & mask;
    for (;;) {
      const hi = slots[next * 2]!;
      const lo = slots[next * 2 + 1]!;
      if (hi === 0 && lo === 0) break;
      const home = this.slotOf(hi, lo);
      // Move the entry back if its home is not cyclically within (hole, next].
      const stays = hole <= next ? hole < home && home <= next : hole < home || home <= next;
      if (!stays) {
        slots[hole * 2] = hi;
        slots[hole * 2 + 1] = lo;
        this.marks?.move(next, hole);
        hole = next;
      }
      next = (next + 1) & mask;
    }
    slots[hole * 2] = 0;
    slots[hole * 2 + 1] = 0;
    this.marks?.clear(hole);
    this.count--;
  }

  /** Grows the table once so that `expected` keys fit without rehashing as they arrive. */
  reserve(expected: number): void {
    const capacity = capacityFor(expected);
    if (capacity > this.mask + 1) this.rehash(capacity);
  }

  /** Shrinks a table that holds far fewer keys than it was sized for (e.g. after many deletes). */
  compact(): void {
    const capacity = capacityFor(this.count);
    if (capacity * 2 > this.mask + 1) return;
    this.rehash(capacity);
  }

  /** Starts marking; every mark is clear. */
  beginMarking(): void {
    this.marks = new SlotMarks(this.mask + 1);
  }

  /** Marks the key in slot `index` as one to keep (nothing when not marking). */
  mark(index: number): void {
    this.marks?.set(index);
  }

  /** Removes every key not marked since `beginMarking`, and stops marking. */
  sweepUnmarked(): void {
    const marks = this.marks;
    if (!marks) return;
    const slots = this.slots;
    for (let index = 0; index <= this.mask; ) {
      if ((slots[index * 2] !== 0 || slots[index * 2 + 1] !== 0) && !marks.has(index)) {
        // The backward shift may move a later key into this slot: look at it again.
        this.removeAt(index);
      } else {
        index++;
      }
    }
    this.endMarking();
  }

  endMarking(): void {
    this.marks = null;
  }

  private slotOf(hi: number, lo: number): number {
    let h = Math.imul(hi ^ (lo >>> 16), 0x85ebca6b) ^ Math.imul(lo, 0xc2b2ae35);
    h ^= h >>> 15;
    h = Math.imul(h, 0x2c1b3c6d);
    h ^= h >>> 13;
    return h & this.mask;
  }

  private insert(hi: number, lo: number): number {
    const slots = this.slots;
    let index = this.slotOf(hi, lo);
    while (slots[index * 2] !== 0 || slots[index * 2 + 1] !== 0) index = (index + 1) & this.mask;
    slots[index * 2] = hi;
    slots[index * 2 + 1] = lo;
    this.count++;
    return index;
  }

  private rehash(capacity: number): void {
    const old = this.slots;
    const oldMarks = this.marks;
    this.slots = new Uint32Array(capacity * 2);
    this.mask = capacity - 1;
    this.count = 0;
    if (oldMarks) this.marks = new SlotMarks(capacity);
    for (let i = 0; i < old.length; i += 2) {
      if (old[i] === 0 && old[i + 1] === 0) continue;
      const index = this.insert(old[i]!, old[i + 1]!);
      if (oldMarks?.has(i >>> 1)) this.marks!.set(index);
    }
  }
}

function capacityFor(keys: number): number {
  let capacity = MIN_CAPACITY;
  while (capacity * MAX_LOAD < keys) capacity *= 2;
  return capacity;
}
