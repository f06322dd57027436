import { afterEach, describe, expect, it } from 'vitest';
import type { App } from '../src/app.js';
import { lockCohortEntry } from './support/cohort-entry-lock.js';
import { startFailoverLoad } from './support/failover-load.js';
import { eventually, gql, metric, readiness, sqlClient, startApp } from './support/harness.js';
import { aggregateMismatches, boundaryViolations } from '../tooling/invariants.js';
import { startPgBouncer, type PgBouncer } from '../tooling/pgbouncer.js';
import { sql, startReplicatedPostgres, type ReplicatedPostgres } from '../tooling/replicated-postgres.js';

const SIGNALS = `mutation ($inputs: [SignalInput!]!) { signals(inputs: $inputs) { forwarded } }`;
const LEAVE = `mutation ($userId: UInt64!) { leaveCommunityLayer(userId: $userId) { leftAtNs } }`;
const PURGE = `mutation ($userId: UInt64!) { purgeCommunityContributions(userId: $userId) { purgeId } }`;
const DATABASE = 'community';
const PURGED_USER = '9000';
/** Signals of the purged user, each with two cohorts: three ledger entries apiece. */
const PURGED_SIGNALS = 1500;
const TIMEOUT_MS = 60_000;

/**
 * Instances tuned to notice a loss fast; the purge slow enough to be running at the kill. The load
 * changes ten users' membership far faster than people do: the per-user limit (tested in
 * fair-share.test) would answer it 429 on a slow run, so it is raised here.
 */
const INSTANCE_ENV = {
  FAIR_SHARE_MEMBERSHIP_CHANGES: '100000',
  DB_ACQUIRE_TIMEOUT_MS: '2000',
  LISTENER_HEARTBEAT_MS: '500',
  LISTENER_HEARTBEAT_TIMEOUT_MS: '1000',
  PURGE_CHUNK_SIZE: '15',
  PURGE_CHUNK_PAUSE_MS: '40',
  PURGE_POLL_MS: '100',
};

interface Route {
  /** DATABASE_URL and the rest of the environment for the instances. */
  environment: Record<string, string>;
  /** After the promotion: what the failover tool does for this route (nothing for a multi-host URL). */
  follow(): Promise<void>;
}

let pair: ReplicatedPostgres | undefined;
const bouncers: PgBouncer[] = [];
const apps: App[] = [];

afterEach(async () => {
  await Promise.all(apps.splice(0).map((app) => app.stop()));
  for (const bouncer of bouncers.splice(0)) await bouncer.stop();
  await pair?.stop();
  pair = undefined;
});

async function multiHost(servers: ReplicatedPostgres): Promise<Route> {
  return { environment: { DATABASE_URL: servers.multiHostUrl(DATABASE) }, follow: async () => {} };
}

/** The pool through a transaction-mode PgBouncer, LISTEN through a session-mode one; both repointed. */
async function repointedPgBouncer(servers: ReplicatedPostgres): Promise<Route> {
  const primary = servers.url(DATABASE, servers.primaryPort);
  // The role carries the session limits (a transaction pooler refuses them as startup parameters); replicated.
  for (const setting of ["statement_timeout = '120s'", "lock_timeout = '60s'", "idle_in_transaction_session_timeout = '15s'"]) {
    await sql(primary, `ALTER ROLE postgres IN DATABASE ${DATABASE} SET ${setting}`);
  }
  const pooled = await startPgBouncer(primary, { poolMode: 'transaction' });
  const session = await startPgBouncer(primary, { poolMode: 'session' });
  bouncers.push(pooled, session);
  return {
    environment: { DATABASE_URL: pooled.pooled(primary), DATABASE_LISTEN_URL: session.pooled(primary), DB_SESSION_LIMITS: 'server' },
    follow: async () => {
      const promoted = servers.url(DATABASE, servers.standbyPort);
      await Promise.all([pooled.repoint(promoted), session.repoint(promoted)]);
    },
  };
}

describe.each([
  ['a multi-host URL (target_session_attrs=read-write)', multiHost],
  ['a PgBouncer repointed to the promoted standby', repointedPgBouncer],
])('failover of a synchronous primary under load, followed through %s', (_, route) => {
  it('loses no acknowledged write, keeps I1-I3, finishes the purge exactly, and both instances recover without a restart', async () => {
    pair = await startReplicatedPostgres({ synchronous: true });
    await sql(pair.url('postgres', pair.primaryPort), `CREATE DATABASE ${DATABASE}`);
    const how = await route(pair);
    apps.push(...(await Promise.all([0, 1].map(() => startApp(how.environment.DATABASE_URL!, { ...INSTANCE_ENV, ...how.environment })))));
    const [first] = apps as [App, App];
    const primaryDb = pair.url(DATABASE, pair.primaryPort);

    // The pair is synchronous: commits survive failover, and every instance says so.
    for (const app of apps) {
      const body = (await (await fetch(new URL('/readyz', app.url))).json()) as { durability: { durable: boolean } };
      expect(body.durability.durable).toBe(true);
      expect(await metric(app, 'community_database_durable_commits')).toBe(1);
    }

    // A purge that will still be running at the kill.
    for (let sent = 0; sent < PURGED_SIGNALS; sent += 300) {
      const inputs = Array.from({ length: 300 }, (_, i) => ({
        userId: PURGED_USER,
        itemId: `p-${(sent + i) % 7}`,
        kind: 'LIKE',
        context: { cohortIds: ['north', 'south'] },
      }));
      expect((await gql(first, SIGNALS, { inputs })).errors).toBeUndefined();
    }
    // The purge stops at a row locked until the kill ends this session: RUNNING at the kill, however slow the load before it.
    const stall = (await sqlClient(primaryDb)).on('error', () => undefined);
    await lockCohortEntry(stall, PURGED_USER, 2000);
    const { leftAtNs: purgeBoundary } = (await gql(first, LEAVE, { userId: PURGED_USER })).data!.leaveCommunityLayer;
    const { purgeId } = (await gql(first, PURGE, { userId: PURGED_USER })).data!.purgeCommunityContributions;

    const load = startFailoverLoad(apps, { users: Array.from({ length: 10 }, (_, i) => String(100 + i)), clients: 3 });
    const state = () => JSON.stringify({ acknowledged: load.acknowledged, retried: load.retried, unexpected: load.unexpected.slice(0, 3) });
    const until = (what: string, check: () => boolean | Promise<boolean>) =>
      eventually(check, TIMEOUT_MS).catch(() => {
        throw new Error(`${what} did not happen; load: ${state()}`);
      });
    const progress = async (what: string, count: number) => {
      const targets = load.acknowledged.map((n) => n + count);
      await until(what, () => load.acknowledged.every((n, i) => n >= targets[i]!));
    };
    const outage = { from: Infinity, to: -Infinity };
    try {
      await progress('40 operations acknowledged on each instance before the kill', 40);
      await until(
        'the purge running',
        async () => (await sql(primaryDb, `SELECT removed_so_far::int AS n FROM community_purge WHERE id = $1`, [purgeId]))[0].n > 0,
      );

      outage.from = performance.now();
      await pair.killPrimary();
      await stall.end().catch(() => undefined);
      // No primary: not ready (retryable answers meanwhile), until one is found again.
      await until('both instances not ready without a primary', async () => (await Promise.all(apps.map(readiness))).every((r) => !r.ok));
      await pair.promoteStandby();
      outage.to = performance.now();
      // The purge was cut short by the kill: what is left runs on the new primary.
      const [cut] = await sql(
        pair.url(DATABASE, pair.standbyPort),
        `SELECT status, removed_so_far::int AS n FROM community_purge WHERE id = $1`,
        [purgeId],
      );
      expect(cut).toMatchObject({ status: 'RUNNING' });
      expect(cut.n).toBeLessThan(PURGED_SIGNALS * 3);
      await how.follow();
      await until('both instances ready again', async () => (await Promise.all(apps.map(readiness))).every((r) => r.ok));
      await progress('40 more operations acknowledged on each instance after the promotion', 40);
    } finally {
      await load.stop();
    }
    expect(load.unexpected).toEqual([]);
    // The failover happened under load: operations were in flight while there was no primary. Each
    // was answered 503 and retried, or waited for the new primary; a run may see none of the first.
    expect(load.history.some((op) => op.start < outage.to && op.end > outage.from)).toBe(true);

    const db = await sqlClient(pair.url(DATABASE, pair.standbyPort));
    try {
      // The promoted server has no standby of its own: acknowledged commits could now be lost, and that is said.
      for (const app of apps)
        await until(
          'the durability report to follow the new primary',
          async () => (await metric(app, 'community_database_durable_commits')) === 0,
        );

      await until(
        'the purge finished on the new primary',
        async () => (await db.query(`SELECT status FROM community_purge WHERE id = $1`, [purgeId])).rows[0].status === 'FINISHED',
      );
      const { rows: purged } = await db.query(
        `SELECT removed_so_far::int AS n, boundary_ns::text AS boundary FROM community_purge WHERE id = $1`,
        [purgeId],
      );
      expect(purged[0]).toEqual({ n: PURGED_SIGNALS * 3, boundary: purgeBoundary });
      const { rows: left } = await db.query(`SELECT count(*)::int AS n FROM contribution WHERE user_id = $1`, [PURGED_USER]);
      expect(left[0].n).toBe(0);

      // Every acknowledged signal is stored as answered, nothing was forwarded after an acknowledged leave.
      expect(await boundaryViolations(db, load.history)).toEqual([]);
      expect(await aggregateMismatches(db)).toEqual([]);
      // Every acknowledged leave and rejoin is there, with the boundary it answered.
      const { rows: episodes } = await db.query(
        `SELECT user_id::text AS "userId", left_at_ns::text AS "leftAtNs", rejoined_at_ns::text AS "rejoinedAtNs" FROM leave_episode`,
      );
      const stored = new Set(episodes.map((e) => `${e.userId}/${e.leftAtNs}`));
      const rejoined = new Set(episodes.map((e) => `${e.userId}/${e.leftAtNs}/${e.rejoinedAtNs}`));
      expect(load.leaves.filter((l) => !stored.has(`${l.userId}/${l.leftAtNs}`))).toEqual([]);
      expect(load.rejoins.filter((r) => !rejoined.has(`${r.userId}/${r.leftAtNs}/${r.rejoinedAtNs}`))).toEqual([]);
      expect(load.leaves.length).toBeGreaterThan(0);
      // NOTIFY is not replicated: each cache resynced from the new primary's table.
      const { rows: statuses } = await db.query(`SELECT user_id::text AS "userId", status = 'LEFT' AS left FROM community_membership`);
      for (const app of apps) {
        expect(statuses.filter((row) => app.services.membershipCache.cache.isLeft(row.userId) !== row.left)).toEqual([]);
      }
      expect(load.rejoins.length).toBeGreaterThan(0);
    } finally {
      await db.end();
    }
  });
});
