const TWO_POW_32 = 4294967296;

/** An unsigned 64-bit value as its two unsigned 32-bit halves. */
export interface U64Halves {
  hi: number;
  lo: number;
}

/**
 * Parses a canonical decimal u64 into `out` without allocating. The first 15 digits fit a double
 * exactly; the rest (at most 5) are folded in with one carry, so the 20-digit worst case costs two
 * divisions instead of one per digit.
 */
export function splitU64Decimal(decimal: string, out: U64Halves): void {
  const length = decimal.length;
  const headLength = Math.min(length, 15);
  let head = 0;
  for (let i = 0; i < headLength; i++) head = head * 10 + (decimal.charCodeAt(i) - 48);
  const headHi = Math.floor(head / TWO_POW_32);
  const headLo = head - headHi * TWO_POW_32;
  if (headLength === length) {
    out.hi = headHi;
    out.lo = headLo;
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
  out.lo = (low - carry * TWO_POW_32) >>> 0;
  out.hi = (headHi * scale + carry) >>> 0;
}
