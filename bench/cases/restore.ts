import { fork } from 'node:child_process';
import type pg from 'pg';
import Cursor from 'pg-cursor';
import { U64HashSet } from '../../src/membership/cache/u64-hash-set.js';
import type { Case } from '../case.js';
import { num } from '../format.js';
import type { RestoreProbe } from '../restore-probe.js';

const RESTORE = '4. restore LEFT users at start';
const BYTES = '4. cache bytes per LEFT user';
const PEAK = '4. peak RSS during restore';
const BATCH = 50_000;
const LEFT_USERS = `SELECT user_id FROM community_membership WHERE status = 'LEFT'`;

/**
 * A new instance's start over `restoreUsers` LEFT users among `restoreRows` membership rows (the
 * others rejoined), against streaming the same LEFT rows with a cursor; and how much that start
 * raises the peak RSS of a process that does nothing else, beyond a start on an empty table. The
 * details split the start into its parts: start over an empty table, the keyset-paged query alone,
 * and building the hash set from the strings.
 */
export const restore: Case = {
  labels: [RESTORE, BYTES, PEAK],
  async run(cluster, sizes) {
    const url = await cluster.freshDatabase();
    const db = await cluster.sqlClient(url);
    const emptyStart = await timed(() => cluster.startApp(url));
    await cluster.stopApp(emptyStart.value);
    const empty = await probeStart(url);
    const load = await timed(() => loadMemberships(db, sizes.restoreRows, sizes.restoreUsers));
    await streamLeftUsers(db);

    const start = await timed(() => cluster.startApp(url));
    const { cache } = start.value.services.membershipCache;
    if (cache.size !== sizes.restoreUsers) throw new Error(`restored ${cache.size} of ${sizes.restoreUsers} LEFT users`);
    await cluster.stopApp(start.value);
    const alone = await probeStart(url);
    const raw = await timed(() => streamLeftUsers(db));
    const keyset = await timed(() => keysetLeftUsers(db));
    const build = await timed(async () => {
      const set = new U64HashSet();
      for (const id of keyset.value) set.add(id);
      return set;
    });

    const ratio = start.ms / raw.ms;
    const bytesPerEntry = cache.tableBytes / cache.size;
    const growth = (probe: RestoreProbe) => probe.peakRssBytes - probe.peakRssBeforeBytes;
    const restoreGrowth = growth(alone) - growth(empty);
    const peakRatio = restoreGrowth / alone.tableBytes;
    return [
      {
        case: RESTORE,
        figure: `${num(start.ms)} ms for ${num(cache.size)} users (of ${num(sizes.restoreRows)} rows)`,
        ceiling: `cursor SELECT ${num(raw.ms)} ms`,
        ratio,
        target: '≤ 1.50',
        met: ratio <= 1.5,
        details: {
          users: cache.size,
          rows: sizes.restoreRows,
          startMs: start.ms,
          rawCursorMs: raw.ms,
          startOnEmptyTableMs: emptyStart.ms,
          keysetQueryOnlyMs: keyset.ms,
          hashSetBuildMs: build.ms,
          loadRowsMs: load.ms,
        },
      },
      {
        case: BYTES,
        figure: `${num(bytesPerEntry, 1)} B/entry (${mib(cache.tableBytes)} MiB table)`,
        ceiling: '—',
        ratio: null,
        target: '≤ 32 B',
        met: bytesPerEntry <= 32,
        details: { tableBytes: cache.tableBytes, entries: cache.size },
      },
      {
        case: PEAK,
        figure: `+${mib(restoreGrowth)} MiB over a start on an empty table (peak ${mib(alone.peakRssBytes)} MiB, empty ${mib(empty.peakRssBytes)} MiB)`,
        ceiling: `cache table ${mib(alone.tableBytes)} MiB`,
        ratio: peakRatio,
        target: '—',
        met: null,
        details: { restoreGrowthBytes: restoreGrowth, start: alone, emptyTableStart: empty },
      },
    ];
  },
};

/**
 * `rows` memberships, users 1…rows, every (rows/left)-th LEFT and the others rejoined, loaded as an
 * operator's bulk load would be: one statement with the row triggers off (no version, notification
 * or guard per row), the clock set past them. Leave history is not generated: the start never reads it.
 */
async function loadMemberships(db: pg.Client, rows: number, left: number): Promise<void> {
  const every = left > 0 ? Math.floor(rows / left) : rows + 1;
  await db.query('ALTER TABLE community_membership DISABLE TRIGGER USER');
  await db.query(
    `INSERT INTO community_membership (user_id, status, left_at_ns, rejoined_at_ns, version)
     SELECT g, CASE WHEN g % $2 = 0 THEN 'LEFT' ELSE 'ACTIVE' END::membership_status,
            CASE WHEN g % $2 = 0 THEN t.ns END, CASE WHEN g % $2 = 0 THEN NULL ELSE t.ns END, g
       FROM generate_series(1, $1::int) AS g, (SELECT now_ns() AS ns) AS t`,
    [rows, every],
  );
  await db.query('ALTER TABLE community_membership ENABLE TRIGGER USER');
  await db.query('UPDATE membership_clock SET version = $1', [rows]);
  // Steady state: hint bits and the visibility map set, statistics known, the load's writes flushed,
  // so no reader below pays for the load.
  await db.query('VACUUM ANALYZE community_membership');
  await db.query('CHECKPOINT');
}

/** Starts one instance in a child process and reports what the start cost. */
function probeStart(databaseUrl: string): Promise<RestoreProbe> {
  return new Promise((resolve, reject) => {
    const child = fork(new URL('../restore-probe.ts', import.meta.url));
    let probe: RestoreProbe | null = null;
    child.once('message', (message) => (probe = message as RestoreProbe));
    child.once('error', reject);
    child.once('exit', (code) => (probe ? resolve(probe) : reject(new Error(`restore probe exited with ${code} and no result`))));
    child.send(databaseUrl);
  });
}

function mib(bytes: number): string {
  return num(bytes / 2 ** 20, 1);
}

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

/** Keyset pages ordered by user_id: the query alone, for the details. */
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
