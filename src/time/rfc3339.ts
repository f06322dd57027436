/**
 * RFC 3339 instants, parsed strictly into nanoseconds since the Unix epoch (a bigint, like every
 * other `*_ns` value here) and printed back from them. Nothing is rounded or rolled over: a value
 * that does not name exactly one real instant we can store is refused with the reason.
 */

/** `signal.occurred_at` is a timestamptz: microseconds. */
const STORED_FRACTION_DIGITS = 6;
const MAX_FRACTION_DIGITS = 9;

const NS_PER_SECOND = 1_000_000_000n;
const SECONDS_PER_DAY = 86_400;

// \d is ASCII-only in JavaScript regular expressions. RFC 3339 allows a lower-case t and z.
const SHAPE = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?(?:[Zz]|([+-])(\d{2}):(\d{2}))$/;

// Years 0001–9999 in UTC: four-digit years both ways, and PostgreSQL has no year 0.
const MIN_NS = BigInt(daysFromCivil(1, 1, 1) * SECONDS_PER_DAY) * NS_PER_SECOND;
const END_NS = BigInt(daysFromCivil(10000, 1, 1) * SECONDS_PER_DAY) * NS_PER_SECOND;

type Fields = [number, number, number, number, number, number, number, number];

export type ParsedInstant = { epochNs: bigint; problem?: never } | { problem: string; epochNs?: never };

export function parseRfc3339(text: string): ParsedInstant {
  const match = SHAPE.exec(text);
  if (!match) {
    return {
      problem: 'must be an RFC 3339 date-time with a zone (Z or ±hh:mm), like "2026-11-29T12:00:00Z" or "2026-11-29T13:00:00.123456+01:00"',
    };
  }
  const [year, month, day, hour, minute, second, fraction = '', sign, offsetHour = '0', offsetMinute = '0'] = match.slice(1);
  const [y, mo, d, h, mi, s, oh, om] = [year, month, day, hour, minute, second, offsetHour, offsetMinute].map(Number) as Fields;
  if (mo < 1 || mo > 12 || d < 1 || d > daysInMonth(y, mo)) return { problem: `has no such calendar date: ${year}-${month}-${day}` };
  if (h > 23) return { problem: 'hour must be 00–23 (24:00 is not accepted; write 00:00 of the next day)' };
  if (mi > 59) return { problem: 'minute must be 00–59' };
  if (s === 60) return { problem: 'leap seconds (:60) are not accepted: stored time has none' };
  if (s > 59) return { problem: 'second must be 00–59' };
  if (oh > 23 || om > 59) return { problem: 'zone offset must be between -23:59 and +23:59' };
  if (fraction.length > MAX_FRACTION_DIGITS) return { problem: `has more than ${MAX_FRACTION_DIGITS} fractional digits (nanoseconds)` };
  if (/[1-9]/.test(fraction.slice(STORED_FRACTION_DIGITS))) {
    return { problem: 'is stored to the microsecond: fractional digits after the 6th must be 0 (finer values are refused, never rounded)' };
  }
  const offsetSeconds = (sign === '-' ? -1 : 1) * (oh * 3600 + om * 60);
  const seconds = daysFromCivil(y, mo, d) * SECONDS_PER_DAY + h * 3600 + mi * 60 + s - offsetSeconds;
  const epochNs = BigInt(seconds) * NS_PER_SECOND + BigInt(fraction.padEnd(MAX_FRACTION_DIGITS, '0'));
  if (epochNs < MIN_NS || epochNs >= END_NS) return { problem: 'must fall within the years 0001–9999 in UTC' };
  return { epochNs };
}

/**
 * `YYYY-MM-DDTHH:MM:SS.fffffffffZ`: UTC with `fractionDigits` digits. Printing with fewer digits
 * than the value holds is a bug, not a rounding.
 */
export function formatRfc3339(epochNs: bigint, fractionDigits: number = MAX_FRACTION_DIGITS): string {
  const seconds = floorDiv(epochNs, NS_PER_SECOND);
  const nanos = (epochNs - seconds * NS_PER_SECOND).toString().padStart(MAX_FRACTION_DIGITS, '0');
  if (/[1-9]/.test(nanos.slice(fractionDigits))) throw new Error(`${epochNs} ns has more precision than ${fractionDigits} digits`);
  const whole = new Date(Number(seconds) * 1000).toISOString().slice(0, 19);
  return `${whole}.${nanos.slice(0, fractionDigits)}Z`;
}

/** The value as a PostgreSQL timestamptz literal, exact to the microsecond. */
export function timestamptzText(epochNs: bigint): string {
  return formatRfc3339(epochNs, STORED_FRACTION_DIGITS);
}

function isLeapYear(year: number): boolean {
  return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
}

function daysInMonth(year: number, month: number): number {
  if (month === 2) return isLeapYear(year) ? 29 : 28;
  return [4, 6, 9, 11].includes(month) ? 30 : 31;
}

/** Days since 1970-01-01 in the proleptic Gregorian calendar (H. Hinnant's days_from_civil). */
function daysFromCivil(year: number, month: number, day: number): number {
  const y = month <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yearOfEra = y - era * 400;
  const dayOfYear = Math.floor((153 * (month + (month > 2 ? -3 : 9)) + 2) / 5) + day - 1;
  const dayOfEra = yearOfEra * 365 + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100) + dayOfYear;
  return era * 146_097 + dayOfEra - 719_468;
}

function floorDiv(a: bigint, b: bigint): bigint {
  const q = a / b;
  return a % b < 0n ? q - 1n : q;
}
