import { readFileSync } from 'node:fs';
import type pg from 'pg';
import { to as copyTo } from 'pg-copy-streams';
import type { Case } from '../case.js';
import { ms, num } from '../format.js';

const RSS_LABEL = '26. user export of N signals: server RSS during vs at rest';
const RATE_LABEL = '26. user export of N signals: records/s vs COPY … TO STDOUT of the same rows';
const USER = '555000555';

/**
 * One user with `exportSignals` forwarded signals (made with generate_series), so the export holds
 * as many signals and as many community contributions. The server runs in a process of its own; its
 * RSS (VmRSS) is sampled every 20 ms while an admin downloads the whole export, against its RSS at
 * rest after a small export warmed the path. The download's records a second against two plain
 * `COPY (SELECT …) TO STDOUT` over pg of the same rows (signals, then the ledger view's entries).
 */
export const userExport: Case = {
  labels: [RSS_LABEL, RATE_LABEL],
  async run(cluster, sizes) {
    const url = await cluster.freshDatabase();
    const db = await cluster.sqlClient(url);
    const n = sizes.exportSignals;
    await db.query(
      `INSERT INTO signal (id, user_id, item_id, kind, weight_micros, cohort_ids, at_ns, forwarded)
       SELECT nextval('signal_id_seq'), $1, 'item-' || (g % 1000), 'LIKE', 1000000 + g % 7, '{}', now_ns() - 3600000000000 + g, true
         FROM generate_series(1, $2::int) g`,
      [USER, n],
    );
    await db.query('VACUUM ANALYZE');
    const servers = await cluster.startProcesses(url, 1);
    const pid = servers.pids[0]!;
    const exportUrl = (userId: string) => new URL(`/export?userId=${userId}`, servers.urls[0]!);
    await download(exportUrl('1'), cluster.token);
    const atRest = rssOf(pid);
    let peak = atRest;
    const sampler = setInterval(() => (peak = Math.max(peak, rssOf(pid))), 20);
    const started = performance.now();
    const lines = await download(exportUrl(USER), cluster.token).finally(() => clearInterval(sampler));
    const exportMs = performance.now() - started;
    const records = lines - 1;
    const copyStarted = performance.now();
    const copied =
      (await copyRows(
        db,
        `SELECT id, item_id, kind, weight_micros, occurred_at, surface, cohort_ids, at_ns, forwarded, event_id
                             FROM signal WHERE user_id = ${USER} ORDER BY at_ns, id`,
      )) +
      (await copyRows(
        db,
        `SELECT signal_id, cohort_id, item_id, weight_micros, at_ns FROM contribution WHERE user_id = ${USER} ORDER BY at_ns, signal_id`,
      ));
    const copyMs = performance.now() - copyStarted;
    const rssRatio = peak / atRest;
    const exportRate = records / (exportMs / 1000);
    const copyRate = copied / (copyMs / 1000);
    const mib = (bytes: number) => `${(bytes / 1048576).toFixed(0)} MiB`;
    return [
      {
        case: RSS_LABEL,
        figure: `${num(records)} records (${num(n)} signals): peak RSS ${mib(peak)}`,
        ceiling: `at rest ${mib(atRest)}`,
        ratio: rssRatio,
        target: '≤ 1.2',
        met: rssRatio <= 1.2 && records === 2 * n + 1,
        details: { signals: n, records, peakRss: peak, restRss: atRest },
      },
      {
        case: RATE_LABEL,
        figure: `${num(exportRate)} records/s (${ms(exportMs)})`,
        ceiling: `COPY ${num(copyRate)} rows/s (${num(copied)} rows in ${ms(copyMs)})`,
        ratio: exportRate / copyRate,
        target: 'none (informative)',
        met: null,
        details: { exportMs, copyMs, records, copied },
      },
    ];
  },
};

function rssOf(pid: number): number {
  const kib = /VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
  return Number(kib) * 1024;
}

/** Downloads the export, counting lines without keeping them. */
async function download(url: URL, token: string): Promise<number> {
  const response = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
  if (response.status !== 200) throw new Error(`export answered ${response.status}: ${await response.text()}`);
  let lines = 0;
  for await (const chunk of response.body!) for (const byte of chunk as Uint8Array) if (byte === 10) lines++;
  return lines;
}

/** Rows of a `COPY (query) TO STDOUT`, read as they come. */
async function copyRows(db: pg.Client, query: string): Promise<number> {
  let rows = 0;
  for await (const chunk of db.query(copyTo(`COPY (${query}) TO STDOUT`)) as AsyncIterable<Buffer>)
    for (const byte of chunk) if (byte === 10) rows++;
  return rows;
}
