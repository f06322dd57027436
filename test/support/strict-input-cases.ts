/** The cases of test/strict-inputs.test.ts and test/membership.test.ts: each with its label, the value as sent, and what it becomes or why it is refused. */

/** DateTime values stored exactly: label, as sent, as stored. */
export const DATE_TIMES_ACCEPTED: [string, string, string][] = [
  ['a leap day', '2024-02-29T00:00:00Z', '2024-02-29T00:00:00.000000Z'],
  ['a leap day of a year divisible by 400', '2000-02-29T12:00:00Z', '2000-02-29T12:00:00.000000Z'],
  ['microseconds with an offset', '2026-11-29T13:00:00.123456+01:00', '2026-11-29T12:00:00.123456Z'],
  ['nine digits ending in zeros', '2026-11-29T12:00:00.123456000Z', '2026-11-29T12:00:00.123456Z'],
  ['one fractional digit, lower-case t and z', '2026-11-29t12:00:00.5z', '2026-11-29T12:00:00.500000Z'],
  ['a negative offset crossing into the next year', '2026-12-31T23:30:00-01:00', '2027-01-01T00:30:00.000000Z'],
  ['-00:00 (unknown local offset) is UTC', '2026-06-01T00:00:00-00:00', '2026-06-01T00:00:00.000000Z'],
  ['before the epoch', '1969-12-31T23:59:59.999999Z', '1969-12-31T23:59:59.999999Z'],
  ['the first instant of year 1', '0001-01-01T00:00:00Z', '0001-01-01T00:00:00.000000Z'],
  ['the last microsecond of year 9999', '9999-12-31T23:59:59.999999Z', '9999-12-31T23:59:59.999999Z'],
];

/** DateTime values refused: label, as sent, what the message says. */
export const DATE_TIMES_REFUSED: [string, unknown, string][] = [
  ['February 30', '2024-02-30T00:00:00Z', 'no such calendar date: 2024-02-30'],
  ['February 29 of a common year', '2023-02-29T00:00:00Z', 'no such calendar date'],
  ['February 29 of a century not divisible by 400', '1900-02-29T00:00:00Z', 'no such calendar date'],
  ['April 31', '2026-04-31T00:00:00Z', 'no such calendar date'],
  ['month 13', '2026-13-01T00:00:00Z', 'no such calendar date'],
  ['month 00', '2026-00-10T00:00:00Z', 'no such calendar date'],
  ['day 00', '2026-01-00T00:00:00Z', 'no such calendar date'],
  ['hour 24', '2026-01-01T24:00:00Z', 'hour must be 00–23'],
  ['minute 60', '2026-01-01T23:60:00Z', 'minute must be 00–59'],
  ['a leap second', '2016-12-31T23:59:60Z', 'leap seconds'],
  ['second 61', '2026-01-01T00:00:61Z', 'second must be 00–59'],
  ['no zone', '2026-01-01T00:00:00', 'with a zone'],
  ['an offset without a colon', '2026-01-01T00:00:00+0100', 'with a zone'],
  ['an offset of hours only', '2026-01-01T00:00:00+01', 'with a zone'],
  ['offset hour 24', '2026-01-01T00:00:00+24:00', 'zone offset'],
  ['offset minute 60', '2026-01-01T00:00:00+01:60', 'zone offset'],
  ['a date alone', '2026-01-01', 'RFC 3339'],
  ['a space instead of T', '2026-01-01 00:00:00Z', 'RFC 3339'],
  ['an empty fraction', '2026-01-01T00:00:00.Z', 'RFC 3339'],
  ['a nanosecond digit', '2026-01-01T00:00:00.000000001Z', 'stored to the microsecond'],
  ['seven fractional digits', '2026-01-01T00:00:00.1234567Z', 'stored to the microsecond'],
  ['ten fractional digits', '2026-01-01T00:00:00.1234560000Z', 'more than 9 fractional digits'],
  ['year 0000', '0000-06-01T00:00:00Z', 'years 0001–9999'],
  ['before year 1 in UTC', '0001-01-01T00:00:00+00:01', 'years 0001–9999'],
  ['after year 9999 in UTC', '9999-12-31T23:59:59-00:01', 'years 0001–9999'],
  ['non-ASCII digits', '٢٠٢٦-01-01T00:00:00Z', 'RFC 3339'],
  ['a two-digit year', '26-01-01T00:00:00Z', 'RFC 3339'],
  ['words', 'yesterday', 'RFC 3339'],
  ['empty', '', 'RFC 3339'],
  ['epoch milliseconds as a number', 1_767_225_600_000, 'RFC 3339 string'],
];

/** Text ids refused, never repaired: label, id, what the message names. */
export const TEXT_IDS_REFUSED: [string, string, string][] = [
  ['a lone high surrogate', 'a\ud800', 'lone surrogate U+D800'],
  ['a lone low surrogate', '\udc00b', 'lone surrogate U+DC00'],
  ['a pair in the wrong order', '\ude00\ud83d', 'lone surrogate'],
  ['NUL (Cc)', 'a\u0000b', 'U+0000'],
  ['TAB (Cc)', 'a\tb', 'U+0009'],
  ['DEL (Cc)', 'a\u007fb', 'U+007F'],
  ['NEXT LINE U+0085 (Cc)', 'a\u0085b', 'U+0085'],
  ['ZERO WIDTH SPACE U+200B (Cf)', 'a\u200bb', 'U+200B'],
  ['ZERO WIDTH JOINER U+200D (Cf)', 'a\u200db', 'U+200D'],
  ['RIGHT-TO-LEFT OVERRIDE U+202E (Cf)', '\u202eabc', 'U+202E'],
  ['BYTE ORDER MARK U+FEFF (Cf)', '\ufeffabc', 'U+FEFF'],
  ['SOFT HYPHEN U+00AD (Cf)', 'co\u00adop', 'U+00AD'],
  ['a language tag U+E0001 (Cf, astral)', 'a\u{e0001}', 'U+E0001'],
  ['LINE SEPARATOR U+2028 (Zl)', 'a\u2028b', 'U+2028'],
  ['PARAGRAPH SEPARATOR U+2029 (Zp)', 'a\u2029b', 'U+2029'],
  ['e + combining acute (NFD)', 'cafe\u0301', 'Normalization Form C'],
  ['ANGSTROM SIGN U+212B (NFC is U+00C5)', '\u212b', 'Normalization Form C'],
  ['Hangul jamo that compose to one syllable', '\u1100\u1161', 'Normalization Form C'],
];

/** Text ids stored byte for byte. */
export const TEXT_IDS_ACCEPTED: [string, string][] = [
  ['precomposed é', 'caf\u00e9'],
  ['Å as U+00C5', '\u00c5ngstr\u00f6m'],
  ['an emoji (a valid surrogate pair)', 'item-\u{1f600}'],
  ['a ligature (NFC leaves it, only NFKC would not)', '\ufb01le'],
  ['CJK', '東京'],
  ['a Hangul syllable', '\uac00'],
  ['an inner space', 'a b'],
];

/** Bytes that are not UTF-8, sent inside an id. */
export const INVALID_UTF8: [string, number[]][] = [
  ['a stray 0xFF', [0xff]],
  ['a truncated sequence', [0xc3]],
  ['an overlong encoding of "/"', [0xc0, 0xaf]],
  ['an encoded surrogate (CESU-8)', [0xed, 0xa0, 0x80]],
  ['a code point above U+10FFFF', [0xf4, 0x90, 0x80, 0x80]],
];

/** UInt64 variables refused: label, the raw JSON text of the value (so that number spellings reach the server as written). */
export const USER_ID_VARIABLES_REFUSED: [string, string][] = [
  ['a JSON number', '42'],
  ['zero as a JSON number', '0'],
  ['negative zero', '-0'],
  ['an exponent', '1e3'],
  ['a fraction that is whole', '8000001.0'],
  ['a number above 2^53', '1152921504606846976'],
  ['the string "-0"', '"-0"'],
  ['leading zeros', '"007"'],
  ['a lone zero twice', '"00"'],
  ['a plus sign', '"+1"'],
  ['a leading space', '" 1"'],
  ['a trailing newline', '"1\\n"'],
  ['a string fraction', '"1.0"'],
  ['a string exponent', '"1e3"'],
  ['hex', '"0x1"'],
  ['digit separators', '"1_000"'],
  ['Arabic-Indic digits', '"\u0664\u0662"'],
  ['fullwidth digits', '"\uff14\uff12"'],
  ['a zero width space', '"\\u200b42"'],
  ['2^64', '"18446744073709551616"'],
  ['empty', '""'],
  ['a boolean', 'true'],
  ['an object', '{"n":"42"}'],
];

/** UInt64 literals refused: label, the literal. */
export const USER_ID_LITERALS_REFUSED: [string, string][] = [
  ['an Int literal', '42'],
  ['zero as an Int literal', '0'],
  ['a negative Int literal', '-0'],
  ['a Float literal', '8000001.0'],
  ['an exponent literal', '1e3'],
  ['an enum-like literal', 'FORTY_TWO'],
  ['a list literal', '["42"]'],
  ['leading zeros', '"042"'],
];

/** User ids refused as variables (and, the strings among them, as literals): label, the value. */
export const BAD_USER_IDS: [string, unknown][] = [
  ['negative', '-1'],
  ['above 2^64-1', '18446744073709551616'],
  ['fraction', '1.5'],
  ['exponent', '1e3'],
  ['hex', '0x10'],
  ['empty', ''],
  ['whitespace', ' 42'],
  ['trailing whitespace', '42 '],
  ['leading plus', '+42'],
  ['non-ASCII digits', '٤٢'],
  ['fullwidth digits', '４２'],
  ['1000 digits', '9'.repeat(1000)],
  ['leading zeros', '007'],
  ['JSON number above 2^53', 2 ** 60],
  ['negative JSON number', -1],
  ['fractional JSON number', 1.5],
  ['boolean', true],
];
