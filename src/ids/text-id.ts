/**
 * Text ids (item and cohort ids) are compared exactly, code unit for code unit, here and in
 * PostgreSQL. So an id must have one UTF-8 form and nothing invisible that could make two ids look
 * alike: it is refused, never repaired, when it holds
 * - a lone surrogate (no UTF-8 form: the driver would write U+FFFD, and distinct ids would collapse);
 * - a control or format character, or a line/paragraph separator (Unicode Cc, Cf, Zl, Zp: U+0085,
 *   U+200B, U+202E, U+FEFF, U+2028 …);
 * - anything not in Unicode Normalization Form C (the same text written another way).
 */

// With the u flag a lone surrogate is one code point of category Cs; a valid pair is not.
const LONE_SURROGATE = /\p{Cs}/u;
const INVISIBLE = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/u;
/** Printable ASCII has none of the above and is its own NFC: most ids, checked in one pass. */
const PRINTABLE_ASCII = /^[\x20-\x7e]*$/;

/** Why `value` is not an acceptable text id, or null when it is one (length is the caller's rule). */
export function textIdProblem(value: string): string | null {
  if (PRINTABLE_ASCII.test(value)) return null;
  const surrogate = LONE_SURROGATE.exec(value);
  if (surrogate) return `must be well-formed Unicode: lone surrogate ${codePoint(surrogate[0])} at index ${surrogate.index}`;
  const invisible = INVISIBLE.exec(value);
  if (invisible) {
    return `must not contain control, format or line/paragraph separator characters: ${codePoint(invisible[0])} at index ${invisible.index}`;
  }
  if (value.normalize('NFC') !== value) {
    return 'must be in Unicode Normalization Form C (NFC); it is compared exactly, so send value.normalize("NFC")';
  }
  return null;
}

function codePoint(character: string): string {
  return `U+${character.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`;
}
