import { fork, type ChildProcess } from 'node:child_process';
import type pg from 'pg';
import { Arrivals } from '../arrivals.js';
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
 * sent_at_us) until the last process applied it, as each process reports. The ceiling is measured
 * the same way beside it, change for change in alternation: a NOTIFY sent with a one-row write (so
 * it also pays a commit with its WAL flush), received by as many bare processes, each with one
 * LISTEN connection (bench/notify-receiver.ts), until the last of them got it, as each reports.
 * Both sides stamp on the receiving process's clock and report over IPC; the bench waits for the
 * reports without polling.
 */
export const processPropagation: Case = {
  labels: LABELS,
  async run(cluster, sizes) {
    const url = await cluster.freshDatabase();
    const db = await cluster.sqlClient(url);
    await db.query('CREATE TABLE bench_tick (n bigint NOT NULL); INSERT INTO bench_tick VALUES (0)');
    const offsetUs = await clockOffsetUs(db);
    const applied = new Arrivals();
    const received = new Arrivals();
    const groups: ServerProcesses[] = [];
    const receivers: ChildProcess[] = [];
    const rows: Row[] = [];
    try {
      for (const count of COUNTS) {
        while (groups.reduce((n, group) => n + group.urls.length, 0) < count) {
          const group = await cluster.startProcesses(url, count - groups.reduce((n, started) => n + started.urls.length, 0));
          group.onMessage((message) => {
            const { version, lagUs } = message as { version: string; lagUs: number };
            applied.record(version, lagUs + offsetUs);
          });
          groups.push(group);
        }
        while (receivers.length < count) receivers.push(await startReceiver(url, received, offsetUs));
        const commit: number[] = [];
        const raw: number[] = [];
        for (let i = 0; i < sizes.changes; i++) {
          const { rows: ticked } = await db.query(`WITH tick AS (UPDATE bench_tick SET n = n + 1 RETURNING n)
            SELECT n::text, pg_notify('bench_ping', n || ',' || ${NOW_US_SQL}) FROM tick`);
          raw.push((await received.last(ticked[0].n as string, count)) / 1000);
          const fn = i % 2 === 0 ? 'leave_community_layer' : 'rejoin_community_layer';
          const { rows: written } = await db.query(`SELECT version::text FROM ${fn}($1)`, [String(1 + ((i >> 1) % 16))]);
          commit.push((await applied.last(written[0].version as string, count)) / 1000);
        }
        rows.push(row(count, summarize(commit), summarize(raw)));
      }
    } finally {
      for (const receiver of receivers) receiver.kill();
    }
    return rows;
  },
};

function row(count: number, commit: Summary, raw: Summary): Row {
  return {
    case: `3. leave propagation, ${count} processes`,
    figure: `commit→last applied p50 ${ms(commit.p50)}, p99 ${ms(commit.p99)}`,
    ceiling: `NOTIFY after a commit, last of ${count} p50 ${ms(raw.p50)}, p99 ${ms(raw.p99)}`,
    ratio: commit.p99 / raw.p99,
    target: '≤ 2×',
    met: commit.p99 <= 2 * raw.p99,
    details: { commitToLastAppliedMs: commit, rawNotifyAfterCommitMs: raw, processes: count },
  };
}

/** A bare LISTEN process (bench/notify-receiver.ts) whose reports go to `received`; resolves once it listens. */
async function startReceiver(url: string, received: Arrivals, offsetUs: number): Promise<ChildProcess> {
  const child = fork(new URL('../notify-receiver.ts', import.meta.url), [url, 'bench_ping']);
  await new Promise<void>((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`notify receiver exited with ${code} before listening`)));
    child.on('message', (message) => {
      const report = message as { listening?: true; tick: string; lagUs: number };
      if (report.listening) resolve();
      else received.record(report.tick, report.lagUs + offsetUs);
    });
  });
  return child;
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
