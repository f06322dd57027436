import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../src/app.js';
import { WORKER_LOCK_NAMESPACE } from '../src/webhooks/queue.store.js';
import { aggregateMismatches } from '../tooling/invariants.js';
import { PGBOUNCER_POOL_SIZE } from '../tooling/pgbouncer.js';
import { eventually, freshDatabase, gql, routed, setRoleLimits, sqlClient, startApp } from './support/harness.js';

const SIGNAL = `mutation ($input: SignalInput!) { signal(input: $input) { signalId forwarded } }`;
const SIGNALS = `mutation ($inputs: [SignalInput!]!) { signals(inputs: $inputs) { signalId forwarded } }`;
const LEAVE = `mutation ($userId: UInt64!) { leaveCommunityLayer(userId: $userId) { status } }`;

/**
 * What the pooled path must get right behind PgBouncer in transaction mode, where consecutive
 * transactions of one client land on different server sessions and a server session serves many
 * clients. Every instance here takes DATABASE_URL through PgBouncer and LISTEN directly.
 */
describe('behind a transaction-pooling PgBouncer', () => {
  let directUrl: string;
  let pooledUrl: string;
  let viaPgBouncer: Record<string, string>;
  let db: pg.Client;
  const apps: App[] = [];

  beforeAll(async () => {
    directUrl = await freshDatabase();
    ({ url: pooledUrl, environment: viaPgBouncer } = routed(directUrl, 'pgbouncer'));
    db = await sqlClient(directUrl);
  });

  afterAll(async () => {
    await Promise.all(apps.map((app) => app.stop()));
    await db?.end();
  });

  /**
   * Role settings reach new server sessions only: sets them, then ends PgBouncer's server sessions
   * on this database (what RECONNECT in its admin console does), leaving listeners alone.
   */
  async function roleLimits(lockTimeout = '60000ms'): Promise<void> {
    await setRoleLimits(directUrl);
    await db.query(
      `ALTER ROLE CURRENT_USER IN DATABASE ${db.escapeIdentifier(new URL(directUrl).pathname.slice(1))} SET lock_timeout = '${lockTimeout}'`,
    );
    const others = `FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() AND application_name NOT LIKE 'community-layer listener%'`;
    await db.query(`SELECT pg_terminate_backend(pid) ${others}`);
    await eventually(async () => (await db.query(`SELECT count(*)::int AS n ${others}`)).rows[0].n === 0);
  }

  /** `PGBOUNCER_POOL_SIZE` clients through PgBouncer, each in an open transaction: together they hold every server session. */
  async function onEveryServerSession(statement: string): Promise<void> {
    const clients = await Promise.all(Array.from({ length: PGBOUNCER_POOL_SIZE }, () => sqlClient(pooledUrl)));
    try {
      await Promise.all(clients.map((client) => client.query('BEGIN')));
      await Promise.all(clients.map((client) => client.query(statement)));
      await Promise.all(clients.map((client) => client.query('COMMIT')));
    } finally {
      await Promise.all(clients.map((client) => client.end()));
    }
  }

  it('start-up refuses session limits sent as startup parameters, naming the fix', async () => {
    await expect(startApp(pooledUrl, { DATABASE_LISTEN_URL: directUrl })).rejects.toThrow(
      /refused the session limits as startup parameters.*DB_SESSION_LIMITS=server/,
    );
  });

  it('with DB_SESSION_LIMITS=server, start-up refuses a role that does not carry the configured limits', async () => {
    await expect(startApp(pooledUrl, viaPgBouncer)).rejects.toThrow(
      /statement_timeout = 0 \(DB_STATEMENT_TIMEOUT_MS = 120000\).*ALTER ROLE/,
    );
  });

  it('start-up refuses a listen URL that is a transaction pooler', async () => {
    await roleLimits();
    await expect(
      startApp(pooledUrl, { ...viaPgBouncer, DATABASE_LISTEN_URL: pooledUrl, LISTENER_HEARTBEAT_TIMEOUT_MS: '1000' }),
    ).rejects.toThrow(/DATABASE_LISTEN_URL did not deliver a notification.*transaction pooler/);
  });

  it('the role-carried lock_timeout applies through PgBouncer: a leave stuck behind a bucket lock gets a retryable 503 and writes nothing', async () => {
    await roleLimits('200ms');
    const app = await startApp(pooledUrl, { ...viaPgBouncer, DB_LOCK_TIMEOUT_MS: '200' }, { membershipSync: false });
    const blocker = await sqlClient(directUrl);
    try {
      await blocker.query(`BEGIN; SELECT pg_advisory_xact_lock(1129073004, community_user_bucket(5::u64))`);
      const response = await gql(app, LEAVE, { userId: '5' });
      await blocker.query('ROLLBACK');
      expect(response.status).toBe(503);
      expect(response.errors?.[0]?.extensions?.code).toBe('SERVICE_UNAVAILABLE');
      expect((await db.query(`SELECT count(*)::int AS n FROM community_membership WHERE user_id = 5`)).rows[0].n).toBe(0);
    } finally {
      await blocker.end();
      await app.stop();
      await roleLimits();
    }
  });

  it('three instances start at once and serve a mixed workload: only unnamed statements, no advisory lock or open transaction left behind', async () => {
    const statements: { name?: string }[] = [];
    const query = pg.Client.prototype.query;
    // Named (prepared) statements would outlive the transaction on a server session another client gets next.
    pg.Client.prototype.query = function (this: pg.Client, config: unknown, ...rest: unknown[]) {
      // Kysely passes (text, values): an unnamed statement; a config object may carry a name.
      statements.push(typeof config === 'object' && config !== null ? (config as { name?: string }) : {});
      return (query as (...args: unknown[]) => unknown).call(this, config, ...rest);
    } as typeof query;
    try {
      apps.push(...(await Promise.all([0, 1, 2].map(() => startApp(pooledUrl, viaPgBouncer)))));
      await Promise.all(
        Array.from({ length: 3 * PGBOUNCER_POOL_SIZE }, async (_, client) => {
          const app = apps[client % apps.length]!;
          for (let i = 0; i < 10; i++) {
            const userId = String(100 + ((client * 10 + i) % 40));
            const response =
              i % 5 === 4
                ? await gql(app, LEAVE, { userId })
                : await gql(app, SIGNALS, {
                    inputs: Array.from({ length: 20 }, (_, k) => ({
                      userId: String(100 + k),
                      itemId: 'hot',
                      kind: 'VIEW',
                      context: { cohortIds: ['c'] },
                    })),
                  });
            expect(response.errors).toBeUndefined();
          }
        }),
      );
    } finally {
      pg.Client.prototype.query = query;
    }
    expect(statements.length).toBeGreaterThan(100);
    expect(statements.filter((statement) => statement.name)).toEqual([]);
    // The webhook workers' liveness locks are held on purpose, on the queue's own session connections (never through the pooler).
    const advisory = `SELECT count(*)::int AS n FROM pg_locks WHERE database = (SELECT oid FROM pg_database WHERE datname = current_database()) AND locktype = 'advisory'`;
    expect((await db.query(`${advisory} AND NOT (objsubid = 2 AND classid = $1)`, [WORKER_LOCK_NAMESPACE])).rows[0].n).toBe(0);
    const { rows } = await db.query(
      `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND state LIKE 'idle in transaction%'`,
    );
    expect(rows[0].n).toBe(0);
    expect(await aggregateMismatches(db)).toEqual([]);
  });

  it('the aggregate shard follows the server session (pg_backend_pid), not the client: fewer shards than clients, and the sums stay exact', async () => {
    await db.query('TRUNCATE community_item_aggregate, cohort_item_aggregate, cohort_contribution, signal');
    const clients = 4 * PGBOUNCER_POOL_SIZE;
    await Promise.all(
      Array.from({ length: clients }, async (_, client) => {
        for (let i = 0; i < 5; i++) {
          const response = await gql(apps[client % apps.length]!, SIGNAL, {
            input: { userId: String(5_000 + client), itemId: 'sharded', kind: 'CLICK' },
          });
          expect(response.errors).toBeUndefined();
        }
      }),
    );
    const { rows } = await db.query(
      `SELECT count(*)::int AS shards, sum(signal_count)::int AS n FROM community_item_aggregate WHERE item_id = 'sharded'`,
    );
    // 3 instances × up to 4 group connections each, but only PGBOUNCER_POOL_SIZE server sessions (pids).
    expect(rows[0].n).toBe(clients * 5);
    expect(rows[0].shards).toBeLessThanOrEqual(PGBOUNCER_POOL_SIZE);
    expect(await aggregateMismatches(db)).toEqual([]);
  });

  it('restores more LEFT users than one cursor batch through PgBouncer (DECLARE and FETCH share one transaction)', async () => {
    // Without the notify trigger: 60,000 notifications are not what this test is about.
    await db.query('ALTER TABLE community_membership DISABLE TRIGGER USER');
    await db.query(`INSERT INTO community_membership (user_id, status, left_at_ns)
      SELECT g, 'LEFT', now_ns() FROM generate_series(1000000, 1060000) AS g`);
    await db.query('ALTER TABLE community_membership ENABLE TRIGGER USER');
    const { rows } = await db.query(`SELECT count(*)::int AS n FROM community_membership WHERE status = 'LEFT'`);
    expect(rows[0].n).toBeGreaterThan(50_000);
    const late = await startApp(pooledUrl, viaPgBouncer);
    try {
      expect(late.services.membershipCache.cache.size).toBe(rows[0].n);
      expect(late.services.membershipCache.cache.isLeft('1060000')).toBe(true);
    } finally {
      await late.stop();
    }
  });

  it('READ COMMITTED: a session default leaked onto every server session by another pooler client makes the boundary refuse, not run weaker', async () => {
    await onEveryServerSession(`SET SESSION default_transaction_isolation = 'repeatable read'`);
    try {
      const response = await gql(apps[0]!, LEAVE, { userId: '777' });
      expect(response.errors?.length).toBeGreaterThan(0);
      expect((await db.query(`SELECT count(*)::int AS n FROM community_membership WHERE user_id = 777`)).rows[0].n).toBe(0);
    } finally {
      await onEveryServerSession('RESET default_transaction_isolation');
    }
    expect((await gql(apps[0]!, LEAVE, { userId: '777' })).errors).toBeUndefined();
  });
});
