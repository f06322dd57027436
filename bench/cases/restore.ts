import type pg from 'pg';
import Cursor from 'pg-cursor';
import { U64HashSet } from '../../src/cache/u64-hash-set.js';
import type { Case } from '../case.js';
import { num } from '../format.js';

const RESTORE = '4. restore LEFT users at start';
const BYTES = '4. cache bytes per LEFT user';
const BATCH = 50_000;
const LEFT_USERS = `SELECT user_id FROM community_membership WHERE status = 'LEFT'`;

/**
 * A new instance's start over `restoreUsers` LEFT users, against streaming the same rows with a
 * cursor. The details split the start into its parts: start over an empty table, the app's
 * keyset-paged query alone, and building the hash set from the strings.
 */
export const restore: Case = {
  labels: [RESTORE, BYTES],
  async run(cluster, sizes) {
    const url = await cluster.freshDatabase();
    const db = await cluster.sqlClient(url);
    const emptyStart = await timed(() => cluster.startApp(url));
    await cluster.stopApp(emptyStart.value);

    // Row triggers would stamp a version and notify per row; a bulk load by an operator skips them.
    await db.query('ALTER TABLE community_membership DISABLE TRIGGER USER');
    await db.query(`INSERT INTO community_membership (user_id, status, left_at_ns) SELECT g, 'LEFT', now_ns() FROM generate_series(1, $1::int) g`, [
      sizes.restoreUsers,
    ]);
    await db.query('ALTER TABLE community_membership ENABLE TRIGGER USER');
    // Steady state: hint bits set and statistics known, so neither reader below pays for the load.
    await db.query('VACUUM ANALYZE community_membership');
    await streamLeftUsers(db);

    const start = await timed(() => cluster.startApp(url));
    const cache = start.value.services.membership.cache;
    if (cache.size !== sizes.restoreUsers) throw new Error(`restored ${cache.size} of ${sizes.restoreUsers} LEFT users`);
    const raw = await timed(() => streamLeftUsers(db));
    const keyset = await timed(() => keysetLeftUsers(db));
    const build = await timed(async () => {
      const set = new U64HashSet();
      for (const id of keyset.value) set.add(id);
      return set;
    });

    const ratio = start.ms / raw.ms;
    const bytesPerEntry = cache.tableBytes / cache.size;
    return [
      {
        case: RESTORE,
        figure: `${num(start.ms)} ms for ${num(cache.size)} users`,
        ceiling: `cursor SELECT ${num(raw.ms)} ms`,
        ratio,
        target: '≤ 1.50',
        met: ratio <= 1.5,
        details: {
          users: cache.size,
          startMs: start.ms,
          rawCursorMs: raw.ms,
          startOnEmptyTableMs: emptyStart.ms,
          keysetQueryOnlyMs: keyset.ms,
          hashSetBuildMs: build.ms,
        },
      },
      {
        case: BYTES,
        figure: `${num(bytesPerEntry, 1)} B/entry (${num(cache.tableBytes / 2 ** 20, 1)} MiB table)`,
        ceiling: '—',
        ratio: null,
        target: '≤ 32 B',
        met: bytesPerEntry <= 32,
        details: { tableBytes: cache.tableBytes, entries: cache.size },
      },
    ];
  },
};

async function timed<T>(work: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const started = performance.now();
  const value = await work();
  return { value, ms: performance.now() - started };
}

async function streamLeftUsers(db: pg.Client): Promise<number> {
  const cursor = db.query(new Cursor(LEFT_USERS));
  let count = 0;
  for (let rows = await cursor.read(BATCH); rows.length > 0; rows = await cursor.read(BATCH)) count += rows.length;
  await cursor.close();
  return count;
}

/** The app's query shape: keyset pages ordered by user_id. */
async function keysetLeftUsers(db: pg.Client): Promise<string[]> {
  const ids: string[] = [];
  let after: string | null = null;
  for (;;) {
    const { rows }: { rows: { user_id: string }[] } =
      after === null
        ? await db.query(`${LEFT_USERS} ORDER BY user_id LIMIT ${BATCH}`)
        : await db.query(`${LEFT_USERS} AND user_id > $1 ORDER BY user_id LIMIT ${BATCH}`, [after]);
    for (const row of rows) ids.push(row.user_id);
    if (rows.length < BATCH) return ids;
    after = rows.at(-1)!.user_id;
  }
}
