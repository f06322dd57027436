/** One bit per table slot (1/64 of a table of u64 pairs): the keys a mark and sweep keeps. */
export class SlotMarks {
  private readonly bits: Uint32Array;

  constructor(slots: number) {
    this.bits = new Uint32Array(Math.ceil(slots / 32));
  }

  has(index: number): boolean {
    return (this.bits[index >>> 5]! & (1 << (index & 31))) !== 0;
  }

  set(index: number): void {
    this.bits[index >>> 5]! |= 1 << (index & 31);
  }

  clear(index: number): void {
    this.bits[index >>> 5]! &= ~(1 << (index & 31));
  }

  /** The mark of a key moved from slot `from` to slot `to` goes with it. */
  move(from: number, to: number): void {
    if (this.has(from)) this.set(to);
    else this.clear(to);
  }
}
