import type pg from 'pg';
import type { Case, Row } from '../case.js';
import { NOW_US_SQL } from '../database-clock.js';
import { ms } from '../format.js';
import type { ServerProcesses } from '../processes.js';
import { summarize } from '../stats.js';

const COUNTS = [2, 4, 8] as const;
const LABELS = COUNTS.map((n) => `3. leave propagation, ${n} processes`);

type Summary = ReturnType<typeof summarize>;

/**
 * Propagation across real server processes, each with its own event loop: leaves and rejoins made
 * by SQL on a plain connection; per change, database clock at the write (the trigger's
 * sent_at_us) until the last process applied it, as each process reports. The ceiling, measured
 * before each size in the same run, is a NOTIFY sent with a one-row write, so it also pays a
 * commit (with its WAL flush), received by one LISTEN connection in this process.
 */
export const processPropagation: Case = {
  labels: LABELS,
  async run(cluster, sizes) {
    const url = await cluster.freshDatabase();
    const db = await cluster.sqlClient(url);
    const listener = await cluster.sqlClient(url);
    await db.query('CREATE TABLE bench_tick (n bigint NOT NULL); INSERT INTO bench_tick VALUES (0)');
    await listener.query('LISTEN bench_ping');
    const offsetUs = await clockOffsetUs(db);
    const applied = new Map<string, number[]>();
    const groups: ServerProcesses[] = [];
    const rows: Row[] = [];
    for (const count of COUNTS) {
      while (groups.reduce((n, group) => n + group.urls.length, 0) < count) {
        const before = groups.reduce((n, group) => n + group.urls.length, 0);
        const group = await cluster.startProcesses(url, count - before);
        group.onMessage((message) => {
          const { version, lagUs } = message as { version: string; lagUs: number };
          const lags = applied.get(version) ?? [];
          lags.push(lagUs + offsetUs);
          applied.set(version, lags);
        });
        groups.push(group);
      }
      const raw = await rawNotifyAfterCommit(db, listener, sizes.changes, offsetUs);
      const commit: number[] = [];
      for (let i = 0; i < sizes.changes; i++) {
        const fn = i % 2 === 0 ? 'leave_community_layer' : 'rejoin_community_layer';
        const { rows: written } = await db.query(`SELECT version::text FROM ${fn}($1)`, [String(1 + ((i >> 1) % 16))]);
        const version = written[0].version as string;
        await eventually(() => (applied.get(version)?.length ?? 0) >= count);
        commit.push(Math.max(...applied.get(version)!) / 1000);
      }
      rows.push(row(count, summarize(commit), raw));
    }
    return rows;
  },
};

function row(count: number, commit: Summary, raw: Summary): Row {
  return {
    case: `3. leave propagation, ${count} processes`,
    figure: `commit→last applied p50 ${ms(commit.p50)}, p99 ${ms(commit.p99)}`,
    ceiling: `NOTIFY after a commit p50 ${ms(raw.p50)}, p99 ${ms(raw.p99)}`,
    ratio: commit.p99 / raw.p99,
    target: '—',
    met: null,
    details: { commitToLastAppliedMs: commit, rawNotifyAfterCommitMs: raw, processes: count },
  };
}

function nowUs(): number {
  return (performance.timeOrigin + performance.now()) * 1000;
}

/** Database clock minus this machine's clock (every process here reads the same one), from the shortest round trip. */
async function clockOffsetUs(db: pg.Client): Promise<number> {
  let best = { roundTrip: Infinity, offset: 0 };
  for (let i = 0; i < 50; i++) {
    const before = nowUs();
    const { rows } = await db.query(`SELECT ${NOW_US_SQL} AS us`);
    const after = nowUs();
    if (after - before < best.roundTrip) best = { roundTrip: after - before, offset: Number(rows[0].us) - (before + after) / 2 };
  }
  return best.offset;
}

async function rawNotifyAfterCommit(sender: pg.Client, listener: pg.Client, count: number, offsetUs: number): Promise<Summary> {
  const latencies: number[] = [];
  for (let i = 0; i < count; i++) {
    const received = new Promise<number>((resolve) =>
      listener.once('notification', (message) => resolve(nowUs() + offsetUs - Number(message.payload))),
    );
    await sender.query(`WITH tick AS (UPDATE bench_tick SET n = n + 1 RETURNING n) SELECT pg_notify('bench_ping', ${NOW_US_SQL}) FROM tick`);
    latencies.push((await received) / 1000);
  }
  return summarize(latencies);
}

async function eventually(check: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('change not applied by every process within 10 s');
    await new Promise((resolve) => setImmediate(resolve));
  }
}
