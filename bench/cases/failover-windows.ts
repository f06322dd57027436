import pg from 'pg';
import type { App } from '../../src/app.js';
import { type ReplicatedPostgres, sql } from '../../tooling/replicated-postgres.js';
import { post } from './failover-client.js';

/** What a polite client waits after a failure before it tries again (the app's clients and the plain one alike). */
const RETRY_MS = 25;
/** How long the failover tool takes to notice and promote (Patroni's and pg_auto_failover's are seconds). */
const DETECTION_MS = 1_000;

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
 * The windows of unavailability while the primary is killed and the standby promoted DETECTION_MS later: an app's
 * back-to-back signals and status reads against a plain pg client's insert loop, each the last success before the kill to the first after.
 */
export async function unavailability(app: App, token: string, pair: ReplicatedPostgres, database: string) {
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
  await sql(pair.url(database, pair.primaryPort), 'CREATE TABLE failover_probe (at timestamptz NOT NULL DEFAULT now())');
  const plain = plainWriter(pair, database, () => performance.now() > killedAt);
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
function plainWriter(pair: ReplicatedPostgres, database: string, failedOver: () => boolean) {
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
            connectionString: pair.url(database, failedOver() ? pair.standbyPort : pair.primaryPort),
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
