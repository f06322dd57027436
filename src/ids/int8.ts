/** The largest PostgreSQL int8 (2^63 − 1): the bound of every int8 column, nanosecond instants included. */
export const INT8_MAX = 2n ** 63n - 1n;

/** Whether a UInt64 (decimal digits) fits an int8 column: an id above it names no row, and pg would refuse the comparison. */
export function fitsInt8(value: string): boolean {
  return BigInt(value) <= INT8_MAX;
}
