/**
 * Unsigned 64-bit ids travel as canonical decimal strings end to end: JavaScript numbers lose
 * precision above 2^53, and pg hands int8/numeric over as strings anyway.
 */
export const U64_MAX = '18446744073709551615';

const CANONICAL_DECIMAL = /^(0|[1-9][0-9]*)$/;

/** Why a value is not a UInt64, or null when it is one. */
export function u64Problem(value: string): string | null {
  if (value.length === 0) return 'must not be empty';
  if (!CANONICAL_DECIMAL.test(value)) {
    return /^0[0-9]+$/.test(value)
      ? 'must not have leading zeros'
      : 'must be a decimal integer string of ASCII digits (no sign, spaces, fraction, exponent or hex)';
  }
  if (value.length > U64_MAX.length || (value.length === U64_MAX.length && value > U64_MAX)) {
    return `must be at most ${U64_MAX}`;
  }
  return null;
}

export function isU64(value: string): boolean {
  return u64Problem(value) === null;
}
