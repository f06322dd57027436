import type pg from 'pg';
import type { App } from '../../src/app.js';
import type { Case, Row } from '../case.js';
import { NOW_US_SQL } from '../database-clock.js';
import { graphql, type Cluster } from '../cluster.js';
import { ms } from '../format.js';
import { summarize } from '../stats.js';
import { LEAVE, REJOIN } from '../workload.js';

const LABELS = ['3. leave propagation, 2 instances', '3. leave propagation, 4 instances'] as const;

type Summary = ReturnType<typeof summarize>;

/**
 * Leaves and rejoins on instance 0's API, one at a time; per change, the time from the database
 * clock at the write (the trigger's sent_at_us) until the last other instance applied it. The
 * ceiling is a bare NOTIFY stamped the same way and received by one LISTEN connection.
 *
 * All instances share this process's event loop, so a notification can wait behind instance 0's
 * HTTP work; the details repeat the run with the changes made by SQL on a plain connection, which
 * separates that wait from the listener path itself.
 */
export const propagation: Case = {
  labels: LABELS,
  async run(cluster, sizes) {
    const url = await cluster.freshDatabase();
    const db = await cluster.sqlClient(url);
    const offsetUs = await clockOffsetUs(db);
    const raw = await rawNotify(cluster, url, db, sizes.changes, offsetUs);
    const apps = [await cluster.startApp(url), await cluster.startApp(url)];
    const measure = async () => ({
      api: await propagate(apps.slice(1), sizes.changes, offsetUs, viaApi(cluster, apps[0]!)),
      sql: await propagate(apps.slice(1), sizes.changes, offsetUs, viaSql(db)),
    });
    const two = await measure();
    apps.push(await cluster.startApp(url), await cluster.startApp(url));
    const four = await measure();
    return [row(LABELS[0], two, raw, offsetUs), row(LABELS[1], four, raw, offsetUs)];
  },
};

type Measured = { commit: Summary; request: Summary };

function row(label: string, measured: { api: Measured; sql: Measured }, raw: Summary, offsetUs: number): Row {
  const bound = Math.max(2, 1.5 * raw.p99);
  const { commit } = measured.api;
  return {
    case: label,
    figure: `commit→last applied p50 ${ms(commit.p50)}, p99 ${ms(commit.p99)}`,
    ceiling: `NOTIFY p50 ${ms(raw.p50)}, p99 ${ms(raw.p99)}`,
    ratio: commit.p99 / raw.p99,
    target: `p99 ≤ ${ms(bound)}`,
    met: commit.p99 <= bound,
    details: {
      commitToLastAppliedMs: commit,
      requestToLastAppliedMs: measured.api.request,
      sqlDriven: { commitToLastAppliedMs: measured.sql.commit, statementToLastAppliedMs: measured.sql.request },
      rawNotifyMs: raw,
      dbClockOffsetUs: offsetUs,
    },
  };
}

/** Makes change `i` (leave, then rejoin, over 16 users) and returns its membership version. */
type Change = (i: number) => Promise<bigint>;

function viaApi(cluster: Cluster, origin: App): Change {
  return async (i) => {
    await graphql(origin, cluster.token, i % 2 === 0 ? LEAVE : REJOIN, { userId: String(1 + ((i >> 1) % 16)) });
    // Leave and rejoin answer once the origin's cache applied the change: its version is the new one.
    return origin.services.membershipCache.cache.appliedVersion;
  };
}

function viaSql(db: pg.Client): Change {
  return async (i) => {
    const fn = i % 2 === 0 ? 'leave_community_layer' : 'rejoin_community_layer';
    const { rows } = await db.query(`SELECT version FROM ${fn}($1)`, [String(101 + ((i >> 1) % 16))]);
    return BigInt(rows[0].version);
  };
}

function nowUs(): number {
  return (performance.timeOrigin + performance.now()) * 1000;
}

/** Database clock minus this process's clock, from the sample with the shortest round trip. */
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

async function rawNotify(cluster: Cluster, url: string, sender: pg.Client, count: number, offsetUs: number): Promise<Summary> {
  const listener = await cluster.sqlClient(url);
  await listener.query('LISTEN bench_ping');
  const latencies: number[] = [];
  for (let i = 0; i < count; i++) {
    const received = new Promise<number>((resolve) =>
      listener.once('notification', (message) => resolve(nowUs() + offsetUs - Number(message.payload))),
    );
    await sender.query(`SELECT pg_notify('bench_ping', ${NOW_US_SQL})`);
    latencies.push((await received) / 1000);
  }
  return summarize(latencies);
}

async function propagate(others: App[], count: number, offsetUs: number, change: Change): Promise<Measured> {
  const changes = new Map<bigint, { sentAtUs: number; lastUs: number; seen: number }>();
  const waiters = new Map<bigint, () => void>();
  const unsubscribe = others.map((app) =>
    app.services.membershipCache.onChange((applied, sentAtUs, appliedAtUs) => {
      const entry = changes.get(applied.version) ?? { sentAtUs: Number(sentAtUs), lastUs: 0, seen: 0 };
      entry.lastUs = Math.max(entry.lastUs, appliedAtUs);
      entry.seen++;
      changes.set(applied.version, entry);
      if (entry.seen === others.length) waiters.get(applied.version)?.();
    }),
  );
  const commit: number[] = [];
  const request: number[] = [];
  try {
    for (let i = 0; i < count; i++) {
      const startUs = nowUs();
      const version = await change(i);
      if ((changes.get(version)?.seen ?? 0) < others.length) await appliedEverywhere(waiters, version);
      const entry = changes.get(version)!;
      commit.push((entry.lastUs + offsetUs - entry.sentAtUs) / 1000);
      request.push((entry.lastUs - startUs) / 1000);
    }
  } finally {
    for (const stop of unsubscribe) stop();
  }
  return { commit: summarize(commit), request: summarize(request) };
}

function appliedEverywhere(waiters: Map<bigint, () => void>, version: bigint): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`change ${version} not applied on every instance within 10 s`)), 10_000);
    waiters.set(version, () => {
      clearTimeout(timer);
      resolve();
    });
  });
}
