const TWO_POW_32 = 4294967296;
const MIN_CAPACITY = 16;
const MAX_LOAD = 0.75;

/**
 * A set of unsigned 64-bit keys in one Uint32Array (hi, lo pairs), open addressing with linear
 * probing and backward-shift deletion: about 11–21 bytes per key, against ~100 for a Set of strings.
 * Lookups take the decimal string itself and allocate nothing.
 * Key 0 is kept in a flag because an all-zero slot marks "empty".
 *
 * Mark and sweep replaces the contents in place, with no second table: between `beginMarking()`
 * and `sweepUnmarked()`, `addMarkedPacked` marks the keys to keep (one bit per slot, 1/64 of the
 * table), and the sweep removes every other key.
 */
export class U64HashSet {
  private slots: Uint32Array;
  private mask: number;
  private count = 0;
  private hasZero = false;
  private hi = 0;
  private lo = 0;
  private marks: Uint32Array | null = null;
  private zeroMarked = false;

  constructor(expected = 0) {
    const capacity = capacityFor(expected);
    this.slots = new Uint32Array(capacity * 2);
    this.mask = capacity - 1;
  }

  get size(): number {
    return this.count + (this.hasZero ? 1 : 0);
  }

  /** Bytes held by the table itself. */
  get byteLength(): number {
    return this.slots.byteLength;
  }

  has(decimal: string): boolean {
    this.split(decimal);
    if (this.hi === 0 && this.lo === 0) return this.hasZero;
    return this.find(this.hi, this.lo) >= 0;
  }

  add(decimal: string): void {
    this.split(decimal);
    if (this.hi === 0 && this.lo === 0) {
      this.hasZero = true;
      return;
    }
    if (this.find(this.hi, this.lo) < 0) this.insertNew(this.hi, this.lo);
  }

  /** Adds each key if absent and marks it as one to keep (see `sweepUnmarked`): big-endian u64s, 8 bytes each. */
  addMarkedPacked(packed: Uint8Array): void {
    for (let i = 0; i + 8 <= packed.length; i += 8) {
      const hi = ((packed[i]! << 24) | (packed[i + 1]! << 16) | (packed[i + 2]! << 8) | packed[i + 3]!) >>> 0;
      const lo = ((packed[i + 4]! << 24) | (packed[i + 5]! << 16) | (packed[i + 6]! << 8) | packed[i + 7]!) >>> 0;
      if (hi === 0 && lo === 0) {
        this.hasZero = true;
        this.zeroMarked = true;
        continue;
      }
      const index = this.find(hi, lo);
      this.setMark(index >= 0 ? index : this.insertNew(hi, lo));
    }
  }

  delete(decimal: string): void {
    this.split(decimal);
    if (this.hi === 0 && this.lo === 0) {
      this.hasZero = false;
      return;
    }
    const index = this.find(this.hi, this.lo);
    if (index >= 0) this.removeAt(index);
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

  /** Starts marking the keys to keep; every mark is clear. */
  beginMarking(): void {
    this.marks = new Uint32Array(Math.ceil((this.mask + 1) / 32));
    this.zeroMarked = false;
  }

  /** Removes every key not marked since `beginMarking`, and stops marking. */
  sweepUnmarked(): void {
    if (!this.marks) return;
    if (!this.zeroMarked) this.hasZero = false;
    const slots = this.slots;
    for (let index = 0; index <= this.mask; ) {
      if ((slots[index * 2] !== 0 || slots[index * 2 + 1] !== 0) && !this.isMarked(index)) {
        // The backward shift may move a later key into this slot: look at it again.
        this.removeAt(index);
      } else {
        index++;
      }
    }
    this.endMarking();
  }

  /** Stops marking and keeps every key. */
  endMarking(): void {
    this.marks = null;
    this.zeroMarked = false;
  }

  /**
   * Parses a canonical decimal u64 into this.hi/this.lo without allocating. The first 15 digits fit
   * a double exactly; the rest (at most 5) are folded in with one carry, so the 20-digit worst
   * case costs two divisions instead of one per digit.
   */
  private split(decimal: string): void {
    const length = decimal.length;
    const headLength = length > 15 ? 15 : length;
    let head = 0;
    for (let i = 0; i < headLength; i++) head = head * 10 + (decimal.charCodeAt(i) - 48);
    const headHi = Math.floor(head / TWO_POW_32);
    const headLo = head - headHi * TWO_POW_32;
    if (headLength === length) {
      this.hi = headHi;
      this.lo = headLo;
      return;
    }
    let tail = 0;
    let scale = 1;
    for (let i = headLength; i < length; i++) {
      tail = tail * 10 + (decimal.charCodeAt(i) - 48);
      scale *= 10;
    }
    const low = headLo * scale + tail;
    const carry = Math.floor(low / TWO_POW_32);
    this.lo = (low - carry * TWO_POW_32) >>> 0;
    this.hi = (headHi * scale + carry) >>> 0;
  }

  private slotOf(hi: number, lo: number): number {
    let h = Math.imul(hi ^ (lo >>> 16), 0x85ebca6b) ^ Math.imul(lo, 0xc2b2ae35);
    h ^= h >>> 15;
    h = Math.imul(h, 0x2c1b3c6d);
    h ^= h >>> 13;
    return h & this.mask;
  }

  private find(hi: number, lo: number): number {
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

  private insertNew(hi: number, lo: number): number {
    if (this.count + 1 > (this.mask + 1) * MAX_LOAD) this.rehash((this.mask + 1) * 2);
    return this.insert(hi, lo);
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

  /** Backward-shift deletion keeps every probe chain intact without tombstones. */
  private removeAt(index: number): void {
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
        if (this.marks) this.moveMark(next, hole);
        hole = next;
      }
      next = (next + 1) & mask;
    }
    slots[hole * 2] = 0;
    slots[hole * 2 + 1] = 0;
    if (this.marks) this.clearMark(hole);
    this.count--;
  }

  private rehash(capacity: number): void {
    const old = this.slots;
    const oldMarks = this.marks;
    this.slots = new Uint32Array(capacity * 2);
    this.mask = capacity - 1;
    this.count = 0;
    if (oldMarks) this.marks = new Uint32Array(Math.ceil(capacity / 32));
    for (let i = 0; i < old.length; i += 2) {
      if (old[i] === 0 && old[i + 1] === 0) continue;
      const index = this.insert(old[i]!, old[i + 1]!);
      if (oldMarks && (oldMarks[i >>> 6]! & (1 << ((i >>> 1) & 31))) !== 0) this.setMark(index);
    }
  }

  private isMarked(index: number): boolean {
    return (this.marks![index >>> 5]! & (1 << (index & 31))) !== 0;
  }

  private setMark(index: number): void {
    if (this.marks) this.marks[index >>> 5]! |= 1 << (index & 31);
  }

  private clearMark(index: number): void {
    this.marks![index >>> 5]! &= ~(1 << (index & 31));
  }

  private moveMark(from: number, to: number): void {
    if (this.isMarked(from)) this.setMark(to);
    else this.clearMark(to);
  }
}

function capacityFor(keys: number): number {
  let capacity = MIN_CAPACITY;
  while (capacity * MAX_LOAD < keys) capacity *= 2;
  return capacity;
}
