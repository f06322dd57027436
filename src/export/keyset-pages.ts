/** Keyset pages of rows from `start`, one at a time: the next is asked for once the current one is used. */
export async function pages<Row, Key>(
  start: Key,
  fetch: (after: Key) => Promise<Row[]>,
  keyOf: (row: Row) => Key,
  limit: number,
  use: (rows: Row[]) => Promise<void>,
): Promise<void> {
  for (let after = start; ; ) {
    const rows = await fetch(after);
    await use(rows);
    if (rows.length < limit) return;
    after = keyOf(rows.at(-1)!);
  }
}
