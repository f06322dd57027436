import type pg from 'pg';
import { describe, expect, it } from 'vitest';
import type { App } from '../src/app.js';
import { aggregateMismatches, boundaryViolations, type Operation } from '../tooling/invariants.js';
import { eventually, gql, ROUTES, type Cluster, useCluster } from './support/harness.js';

const SIGNAL = `mutation ($input: SignalInput!) { signal(input: $input) { signalId forwarded cohortsAttributed } }`;
const LEAVE = `mutation ($userId: UInt64!) { leaveCommunityLayer(userId: $userId) { status } }`;
const REJOIN = `mutation ($userId: UInt64!) { rejoinCommunityLayer(userId: $userId) { status } }`;

/** Microseconds from the commit (database clock in the payload) to `app` applying the change. */
function propagationProbe(app: App): { lagsUs: number[]; stop(): void } {
  const lagsUs: number[] = [];
  const stop = app.services.membershipCache.onChange((_change, sentAtUs, appliedAtUs) => lagsUs.push(appliedAtUs - Number(sentAtUs)));
  return { lagsUs, stop };
}

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((x, y) => x - y);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

async function signalOn(app: App, userId: string, instance: number): Promise<Operation> {
  const start = performance.now();
  const response = await gql(app, SIGNAL, { input: { userId, itemId: 'cache-item', kind: 'VIEW', context: { cohortIds: ['k'] } } });
  return { kind: 'signal', userId, instance, start, end: performance.now(), ok: !response.errors, ...response.data?.signal };
}

async function membershipOn(app: App, kind: 'leave' | 'rejoin', userId: string, instance: number): Promise<Operation> {
  const start = performance.now();
  const response = await gql(app, kind === 'leave' ? LEAVE : REJOIN, { userId });
  return { kind, userId, instance, start, end: performance.now(), ok: !response.errors };
}

// Every case runs on a direct connection and through a transaction-pooling PgBouncer (LISTEN direct).
describe.each(ROUTES)('via %s', (route) => {
  let cluster: Cluster;
  let a: App;
  let b: App;
  let db: pg.Client;
  useCluster(
    [{}, {}],
    (started) => {
      cluster = started;
      ({
        db,
        apps: [a, b],
      } = started as Cluster & { apps: [App, App] });
    },
    route,
    // No backstop resync during a slow run: a change it applies first is not fanned out again (the probe counts fan-outs).
    { CACHE_RESYNC_MS: '3600000' },
  );

  describe('cluster-wide membership cache', () => {
    it('a leave on A reaches B, and so does a rejoin', async () => {
      const probe = propagationProbe(b);
      for (let i = 0; i < 200; i++) {
        const userId = String(10_000 + i);
        await gql(a, LEAVE, { userId });
        await eventually(() => b.services.membershipCache.cache.isLeft(userId));
        await gql(a, REJOIN, { userId });
        await eventually(() => !b.services.membershipCache.cache.isLeft(userId));
      }
      // Listeners hear of a change after the cache has applied it (AppliedFanOut).
      await eventually(() => probe.lagsUs.length === 400);
      probe.stop();
      expect(probe.lagsUs.length).toBe(400);
      console.log(
        `leave/rejoin propagation A→B over ${probe.lagsUs.length} changes: ` +
          `p50 ${(percentile(probe.lagsUs, 50) / 1000).toFixed(2)} ms, p99 ${(percentile(probe.lagsUs, 99) / 1000).toFixed(2)} ms`,
      );
    });

    it('changes made by plain SQL reach every cache: the supported statements, and a delete with the guard off', async () => {
      const left = (userId: string) => a.services.membershipCache.cache.isLeft(userId) && b.services.membershipCache.cache.isLeft(userId);
      const active = (userId: string) =>
        !a.services.membershipCache.cache.isLeft(userId) && !b.services.membershipCache.cache.isLeft(userId);
      await db.query(`SELECT leave_community_layer(31337)`);
      await eventually(() => left('31337'));
      await db.query(`SELECT rejoin_community_layer(31337)`);
      await eventually(() => active('31337'));
      await db.query(`SELECT leave_community_layer(31337)`);
      await eventually(() => left('31337'));
      // Maintenance past the guard (README, "Writing membership by SQL") is still seen by every cache.
      await db.query('BEGIN');
      await db.query('ALTER TABLE community_membership DISABLE TRIGGER community_membership_guard');
      await db.query(`DELETE FROM community_membership WHERE user_id = 31337`);
      await db.query('ALTER TABLE community_membership ENABLE TRIGGER community_membership_guard');
      await db.query('COMMIT');
      await eventually(() => active('31337'));
    });

    it('a user id near 2^64 goes through the whole path', async () => {
      const userId = '18446744073709551614';
      await gql(a, LEAVE, { userId });
      await eventually(() => b.services.membershipCache.cache.isLeft(userId));
      expect(b.services.membershipCache.cache.isLeft('18446744073709551615')).toBe(false);
      const gated = await signalOn(b, userId, 1);
      expect(gated.forwarded).toBe(false);
      await gql(b, REJOIN, { userId });
      await eventually(() => !a.services.membershipCache.cache.isLeft(userId));
      expect((await signalOn(a, userId, 0)).forwarded).toBe(true);
      const { rows } = await db.query('SELECT user_id::text, count(*)::int AS n FROM contribution WHERE user_id = $1 GROUP BY 1', [userId]);
      expect(rows).toEqual([{ user_id: userId, n: 2 }]);
    });

    it("B's listener killed while A leaves and rejoins: B reconnects, resyncs, converges, and I2 holds throughout", async () => {
      const history: Operation[] = [];
      const reconnectsBefore = b.services.membershipCache.counters.reconnects;
      const users = Array.from({ length: 20 }, (_, i) => String(20_000 + i));
      let killing = true;
      const killer = (async () => {
        let kills = 0;
        while (killing || kills < 3) {
          const { rowCount } = await db.query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1`, [
            `community-layer listener ${b.instanceId}`,
          ]);
          kills += rowCount ?? 0;
          await new Promise((resolve) => setTimeout(resolve, 25));
        }
      })();
      await Promise.all(
        users.map(async (userId) => {
          for (let round = 0; round < 6; round++) {
            history.push(await membershipOn(a, 'leave', userId, 0));
            history.push(await signalOn(b, userId, 1));
            history.push(await membershipOn(a, 'rejoin', userId, 0));
            history.push(await signalOn(b, userId, 1));
          }
          if (Number(userId) % 2 === 0) history.push(await membershipOn(a, 'leave', userId, 0));
        }),
      );
      killing = false;
      await killer;
      expect(history.every((op) => op.ok)).toBe(true);
      expect(b.services.membershipCache.counters.reconnects).toBeGreaterThan(reconnectsBefore);
      await eventually(() => a.services.membershipCache.inSync && b.services.membershipCache.inSync);
      for (const userId of users) {
        const expectedLeft = Number(userId) % 2 === 0;
        expect(b.services.membershipCache.cache.isLeft(userId)).toBe(expectedLeft);
        expect(a.services.membershipCache.cache.isLeft(userId)).toBe(expectedLeft);
      }
      expect(await boundaryViolations(db, history)).toEqual([]);
      expect(await aggregateMismatches(db)).toEqual([]);
    });

    it('all backends terminated at once (pools and listeners): both instances serve again without a restart', async () => {
      await db.query(
        `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()`,
      );
      await eventually(async () => {
        const [ra, rb] = await Promise.all([gql(a, LEAVE, { userId: '30001' }), gql(b, LEAVE, { userId: '30002' })]);
        return !ra.errors && !rb.errors;
      });
      await eventually(() => a.services.membershipCache.inSync && b.services.membershipCache.inSync);
      await eventually(() => a.services.membershipCache.cache.isLeft('30002') && b.services.membershipCache.cache.isLeft('30001'));
      const ready = await fetch(new URL('/readyz', b.url));
      expect(ready.status).toBe(200);
    });

    it('a newly started instance restores its cache from the table before it is ready', async () => {
      // Keys at the edges of the packed restore (the top bit is flipped on the way) and of the hash set.
      const edges = ['0', '9223372036854775807', '9223372036854775808', '18446744073709551615'];
      await db.query('SELECT leave_community_layer(u::u64) FROM unnest($1::text[]) AS u', [edges]);
      const { rows } = await db.query(`SELECT user_id::text FROM community_membership WHERE status = 'LEFT'`);
      expect(rows.map((row) => row.user_id)).toEqual(expect.arrayContaining(edges));
      expect(rows.length).toBeGreaterThan(10);
      const c = await cluster.startInstance();
      try {
        expect(c.services.membershipCache.inSync).toBe(true);
        expect(c.services.membershipCache.cache.size).toBe(rows.length);
        for (const row of rows) expect(c.services.membershipCache.cache.isLeft(row.user_id)).toBe(true);
        for (const neighbour of ['1', '9223372036854775806', '9223372036854775809', '18446744073709551614']) {
          expect(c.services.membershipCache.cache.isLeft(neighbour)).toBe(false);
        }
      } finally {
        await c.stop();
      }
    });
  });

  describe('health endpoints', () => {
    it('/healthz is up; /readyz is 200 only when the database answers and the cache is in sync', async () => {
      expect((await fetch(new URL('/healthz', a.url))).status).toBe(200);
      const ready = await fetch(new URL('/readyz', a.url));
      expect(ready.status).toBe(200);
      expect(await ready.json()).toMatchObject({ status: 'ready', checks: { database: true, membershipCache: true } });

      const cold = await cluster.startInstance({}, { membershipSync: false });
      try {
        const notReady = await fetch(new URL('/readyz', cold.url));
        expect(notReady.status).toBe(503);
        expect(await notReady.json()).toMatchObject({ checks: { membershipCache: false } });
      } finally {
        await cold.stop();
      }
    });
  });
});
