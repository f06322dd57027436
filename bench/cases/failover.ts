import pg from 'pg';
import type { App } from '../../src/app.js';
import { sql, startReplicatedPostgres, type ReplicatedPostgres } from '../../tooling/replicated-postgres.js';
import type { Case } from '../case.js';
import { num } from '../format.js';

const WRITES = '13. failover: writes unavailable (multi-host URL) vs plain pg reconnect';
const READS = '13. failover: status reads unavailable vs plain pg reconnect';
const SYNC_COST = '13. batched signals, synchronous vs asynchronous replication';
const DATABASE = 'failover';
/** What a polite client waits after a failure before it tries again (the app's clients and the plain one alike). */
const RETRY_MS = 25;
/** How long the failover tool takes to notice and promote (Patroni's and pg_auto_failover's are seconds). */
const DETECTION_MS = 1_000;
// The pair's database is created empty here (not from the migrated template), so the app migrates it at start.
const ENVIRONMENT = {
  MIGRATE_ON_START: 'true',
  LISTENER_HEARTBEAT_MS: '500',
  LISTENER_HEARTBEAT_TIMEOUT_MS: '1000',
  LISTENER_BACKOFF_MIN_MS: '20',
  LISTENER_BACKOFF_MAX_MS: '200',
  DB_ACQUIRE_TIMEOUT_MS: '1000',
};

/** Successes of one client loop over time; the gap around `at` is its window of unavailability. */
class Timeline {
  private readonly successes: number[] = [];
  ok(): void {
    this.successes.push(performance.now());
  }
  /** The longest gap between two successes from shortly before `at` on: the last success before the outage to the first after. */
  windowAround(at: number): number {
    const times = this.successes.filter((t) => t >= at - 500);
    if (!times.some((t) => t > at + DETECTION_MS)) throw new Error('no success after the promotion yet');
    return Math.max(...times.slice(1).map((t, i) => t - times[i]!));
  }
}

/**
 * A synchronous primary and streaming standby (the embedded PostgreSQL, tooling/replicated-postgres.ts).
 * First the cost of synchronous replication: batches of `batchSize` signals from `batchCallers`
 * callers, synchronous_standby_names '*' against '' in alternating rounds. Then the primary's
 * postmaster is SIGKILLed and the standby promoted DETECTION_MS later, while an app on the multi-host URL takes
 * back-to-back signals and status reads and a plain pg client, told the promoted server's address,
 * inserts a row in a reconnect loop. Each window: last success before the kill to first after.
 */
export const failover: Case = {
  labels: [WRITES, READS, SYNC_COST],
  async run(cluster, sizes) {
    const pair = await startReplicatedPostgres({ synchronous: true });
    try {
      await sql(pair.url('postgres', pair.primaryPort), `CREATE DATABASE ${DATABASE}`);
      const app = await cluster.startApp(pair.multiHostUrl(DATABASE), {}, ENVIRONMENT);
      const cost = await replicationCost(app, cluster.token, pair, sizes);
      const windows = await unavailability(app, cluster.token, pair);
      await cluster.stopApp(app);
      const ratio = (value: number) => value / windows.plain;
      return [
        {
          case: WRITES,
          figure: `${num(windows.writes)} ms`,
          ceiling: `plain pg ${num(windows.plain)} ms`,
          ratio: ratio(windows.writes),
          target: '≤ 1.50',
          met: ratio(windows.writes) <= 1.5,
          details: windows,
        },
        {
          case: READS,
          figure: `${num(windows.reads)} ms`,
          ceiling: `plain pg ${num(windows.plain)} ms`,
          ratio: ratio(windows.reads),
          target: '≤ 1.50',
          met: ratio(windows.reads) <= 1.5,
        },
        {
          case: SYNC_COST,
          figure: `${num(cost.synchronous)} signals/s synchronous`,
          ceiling: `${num(cost.asynchronous)} signals/s asynchronous`,
          ratio: cost.synchronous / cost.asynchronous,
          target: '— (stated)',
          met: null,
          details: cost,
        },
      ];
    } finally {
      await pair.stop();
    }
  },
};

async function replicationCost(
  app: App,
  token: string,
  pair: ReplicatedPostgres,
  sizes: { batchSize: number; batchCallers: number; durationSec: number; rounds: number; warmupSec: number },
) {
  const admin = pair.url('postgres', pair.primaryPort);
  const rates = { synchronous: [] as number[], asynchronous: [] as number[] };
  await batchedRate(app, token, { ...sizes, durationSec: sizes.warmupSec });
  for (let round = 0; round < sizes.rounds; round++) {
    for (const mode of ['synchronous', 'asynchronous'] as const) {
      await sql(admin, `ALTER SYSTEM SET synchronous_standby_names = '${mode === 'synchronous' ? '*' : ''}'`);
      await sql(admin, 'SELECT pg_reload_conf()');
      rates[mode].push(await batchedRate(app, token, sizes));
    }
  }
  await sql(admin, `ALTER SYSTEM SET synchronous_standby_names = '*'`);
  await sql(admin, 'SELECT pg_reload_conf()');
  const mean = (values: number[]) => values.reduce((a, b) => a + b, 0) / values.length;
  return { synchronous: mean(rates.synchronous), asynchronous: mean(rates.asynchronous), rounds: sizes.rounds };
}

async function batchedRate(
  app: App,
  token: string,
  sizes: { batchSize: number; batchCallers: number; durationSec: number },
): Promise<number> {
  const query = `mutation ($inputs: [SignalInput!]!) { signals(inputs: $inputs) { forwarded } }`;
  const deadline = performance.now() + sizes.durationSec * 1000;
  const started = performance.now();
  let signals = 0;
  await Promise.all(
    Array.from({ length: sizes.batchCallers }, async (_, caller) => {
      for (let n = 0; performance.now() < deadline; n++) {
        const inputs = Array.from({ length: sizes.batchSize }, (_, i) => ({
          userId: String(1 + ((caller * 7919 + n * 31 + i) % 5000)),
          itemId: `i-${i % 500}`,
          kind: 'VIEW',
        }));
        const response = await post(app, token, query, { inputs });
        if (response.ok) signals += sizes.batchSize;
      }
    }),
  );
  return signals / ((performance.now() - started) / 1000);
}

async function unavailability(app: App, token: string, pair: ReplicatedPostgres) {
  const timelines = { writes: new Timeline(), reads: new Timeline(), plain: new Timeline() };
  let running = true;
  let killedAt = Number.POSITIVE_INFINITY;
  const loop = async (timeline: Timeline, attempt: () => Promise<boolean>) => {
    while (running) {
      if (await attempt().catch(() => false)) timeline.ok();
      else await new Promise((resolve) => setTimeout(resolve, RETRY_MS));
    }
  };
  const signal = `mutation ($input: SignalInput!) { signal(input: $input) { signalId } }`;
  const status = `query ($u: UInt64) { communityLayerStatus(userId: $u) { status } }`;
  let n = 0;
  await sql(pair.url(DATABASE, pair.primaryPort), 'CREATE TABLE failover_probe (at timestamptz NOT NULL DEFAULT now())');
  const plain = plainWriter(pair, () => performance.now() > killedAt);
  const loops = [
    loop(
      timelines.writes,
      async () => (await post(app, token, signal, { input: { userId: String(1 + (n++ % 100)), itemId: 'f', kind: 'VIEW' } })).ok,
    ),
    loop(timelines.reads, async () => (await post(app, token, status, { u: '1' })).ok),
    loop(timelines.plain, plain.write),
  ];
  await new Promise((resolve) => setTimeout(resolve, 1_000));
  killedAt = performance.now();
  await pair.killPrimary();
  await new Promise((resolve) => setTimeout(resolve, DETECTION_MS));
  await pair.promoteStandby();
  const promotedMs = performance.now() - killedAt;
  // Until every loop has succeeded after the kill.
  while (running) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    try {
      for (const timeline of Object.values(timelines)) timeline.windowAround(killedAt);
      running = false;
    } catch {
      if (performance.now() - killedAt > 60_000) running = false;
    }
  }
  await Promise.all(loops);
  await plain.close();
  return {
    writes: timelines.writes.windowAround(killedAt),
    reads: timelines.reads.windowAround(killedAt),
    plain: timelines.plain.windowAround(killedAt),
    killToPromotedMs: promotedMs,
    detectionMs: DETECTION_MS,
  };
}

/** A plain pg client: the primary until the kill, then the promoted server's address, reconnecting after each failure. */
function plainWriter(pair: ReplicatedPostgres, failedOver: () => boolean) {
  let client: pg.Client | null = null;
  const drop = async () => {
    const old = client;
    client = null;
    await old?.end().catch(() => undefined);
  };
  return {
    write: async () => {
      try {
        if (!client) {
          const fresh = new pg.Client({
            connectionString: pair.url(DATABASE, failedOver() ? pair.standbyPort : pair.primaryPort),
            connectionTimeoutMillis: 1_000,
          });
          fresh.on('error', () => undefined);
          client = fresh;
          await fresh.connect();
        }
        await client.query('INSERT INTO failover_probe DEFAULT VALUES');
        return true;
      } catch {
        await drop();
        return false;
      }
    },
    close: drop,
  };
}

async function post(app: App, token: string, query: string, variables: Record<string, unknown>): Promise<{ ok: boolean }> {
  const response = await fetch(app.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify({ query, variables }),
    signal: AbortSignal.timeout(30_000),
  });
  const body = (await response.json()) as { errors?: unknown[] };
  return { ok: response.status === 200 && !body.errors };
}
