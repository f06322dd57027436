/**
 * A failed start of the embedded PostgreSQL, as one paragraph: what failed, why, what to do.
 * main prints the message alone (no stack) and exits 1.
 */
export class EmbeddedStartError extends Error {
  override name = 'EmbeddedStartError';

  constructor(what: string, why: string, todo: string) {
    super(`Embedded PostgreSQL: ${what}, because ${oneLine(why)}. ${todo}`);
  }
}

export const USE_OWN_DATABASE = 'Or set DATABASE_URL to a PostgreSQL you run yourself.';

/** An error's text on one line, without a trailing period (it is followed by one). */
export function reason(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  return oneLine(text).replace(/[.\s]+$/, '') || 'of an unknown error';
}

function oneLine(text: string): string {
  return text.replace(/\s*\n\s*/g, ' ').trim();
}
