import type { LinePage } from '../signals/signal-export.store.js';

/** Keyset paging for the export: each page is asked for after the one before it is used. */

/** Keyset pages of rows from `start`. */
export function pages<Row, Key>(
  start: Key,
  fetch: (after: Key) => Promise<Row[]>,
  keyOf: (row: Row) => Key,
  limit: number,
  use: (rows: Row[]) => Promise<void>,
): Promise<void> {
  return linePages<Key, { records: number; last: Key | null; rows: Row[] }>(
    start,
    async (after) => {
      const rows = await fetch(after);
      return { records: rows.length, last: rows.length > 0 ? keyOf(rows.at(-1)!) : null, rows };
    },
    limit,
    (page) => use(page.rows),
  );
}

/** Pages that carry their own next key (LinePage), one at a time: the next is asked for once the current one is used. */
export async function linePages<Key, Page extends Pick<LinePage<Key>, 'records' | 'last'>>(
  start: Key,
  fetch: (after: Key) => Promise<Page>,
  limit: number,
  use: (page: Page) => Promise<void>,
): Promise<void> {
  for (let after = start; ; ) {
    const page = await fetch(after);
    // Only the counts and key outlive `use`, not the page's strings.
    const { records, last } = page;
    await use(page);
    if (records < limit || last === null) return;
    after = last;
  }
}
