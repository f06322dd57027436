import fc from 'fast-check';
import { Kysely, Migrator, PostgresDialect } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../src/app.js';
import { migrations } from '../src/db/migrations/index.js';
import { aggregateMismatches } from '../tooling/invariants.js';
import { freshDatabase, gql, sqlClient, startApp } from './support/harness.js';
import { CLOCK_STEPPED_BACK, EXAMPLE, type Model, step, stepArb } from './support/purge-watermark-model.js';

/**
 * A purge's cursor is its watermark (migration 0015): the `contribution` view hides a user's
 * forwarded signals at or below it. Generated histories of signals (several per call, so several
 * share a nanosecond), leaves, rejoins, purge requests and chunks of random sizes, some rolled back
 * as a crash would, against a model that knows only which signals each purge must take, in order.
 * After every step: the view holds exactly the model's contributions, every signal is kept and the
 * aggregates equal the ledger. Some leaves are taken with the database clock an hour ahead (as if
 * it stepped back an hour afterwards) and some ACTIVE users' membership rows are erased: a signal
 * after both is still stamped above every earlier boundary. `MODEL_RUNS` raises the number of histories.
 */
const RUNS = Number(process.env.MODEL_RUNS ?? 15);

let app: App;
let db: pg.Client;
/** A session whose database clock (now_ns) runs an hour ahead: leaving here, then stamping anywhere else, is a clock stepped back. */
let ahead: pg.Client;
let nextUser = 9_100;

beforeAll(async () => {
  const url = await freshDatabase();
  // The test runs the chunks itself: the app's worker never polls.
  app = await startApp(url, { PURGE_POLL_MS: '3600000' });
  db = await sqlClient(url);
  await db.query(`CREATE SCHEMA clock_ahead;
    CREATE FUNCTION clock_ahead.now_ns() RETURNS bigint LANGUAGE sql AS 'SELECT public.now_ns() + 3600000000000'`);
  ahead = await sqlClient(url);
  await ahead.query('SET search_path = clock_ahead, public');
});

afterAll(async () => {
  await ahead?.end();
  await db?.end();
  await app?.stop();
});

describe('purge watermark, model-based', () => {
  it('hides exactly the purged contributions through leaves, rejoins, re-purges and rolled-back chunks', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(stepArb, { minLength: 4, maxLength: 24 }), async (steps) => {
        const model: Model = { user: String(nextUser++), left: false, forwarded: new Map(), purged: new Set(), pending: null, sent: 0 };
        for (const s of steps) await step({ app, db, ahead }, model, s);
        // Finish what is running, so the next history starts with no purge waiting.
        while (model.pending) await step({ app, db, ahead }, model, { t: 'chunk', size: 4, crash: false });
      }),
      { numRuns: RUNS, examples: [[EXAMPLE], [CLOCK_STEPPED_BACK]] },
    );
  }, 120_000);

  it('a boundary is exclusive: a signal at its nanosecond stays until a later leave’s purge', async () => {
    const user = String(nextUser++);
    const { rows: left } = await db.query(`SELECT left_at_ns::text FROM leave_community_layer($1)`, [user]);
    const boundary = BigInt(left[0].left_at_ns);
    // Rows written by SQL beside the functions, one just below the boundary and one at it, each with
    // its aggregate so the ledger and the aggregates agree.
    await db.query(
      `WITH s AS (
         INSERT INTO signal (id, user_id, item_id, kind, weight_micros, cohort_ids, at_ns, forwarded)
         SELECT nextval('signal_id_seq'), $1, 'wm-edge', 'LIKE', 1000000, '{}', u.at_ns, true FROM unnest($2::bigint[]) AS u(at_ns)
         RETURNING item_id, weight_micros)
       INSERT INTO community_item_aggregate (item_id, shard, signal_count, weight_micros_sum)
       SELECT item_id, 99, count(*), sum(weight_micros) FROM s GROUP BY item_id`,
      [user, [String(boundary), String(boundary - 1n)]],
    );
    const visible = async () =>
      (await db.query(`SELECT at_ns::text FROM contribution WHERE user_id = $1 ORDER BY at_ns`, [user])).rows.map((row) =>
        BigInt(row.at_ns),
      );
    const purgeAll = async () => {
      await db.query(`SELECT request_community_purge($1)`, [user]);
      while ((await db.query(`SELECT * FROM run_community_purge_chunk(1)`)).rows[0].purge_id !== null);
    };
    await purgeAll();
    expect(await visible()).toEqual([boundary]);
    expect(await aggregateMismatches(db)).toEqual([]);

    await gql(app, `mutation { rejoinCommunityLayer(userId: "${user}") { status } }`);
    await gql(app, `mutation { leaveCommunityLayer(userId: "${user}") { status } }`);
    await purgeAll();
    expect(await visible()).toEqual([]);
    expect(await aggregateMismatches(db)).toEqual([]);
  });
});

/** The migration before 0015: later migrations come down with it. */
const BEFORE_WATERMARK = '0014_webhooks';

describe('migration 0015', () => {
  it('turns the purge_id marks of finished and running purges into watermarks, and back', async () => {
    const url = await freshDatabase();
    const kysely = new Kysely<unknown>({ dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: url, max: 1 }) }) });
    const migrator = new Migrator({ db: kysely, provider: { getMigrations: async () => migrations } });
    const client = await sqlClient(url);
    const contributions = async () =>
      (await client.query(`SELECT user_id::text, signal_id::text, coalesce(cohort_id, '') AS target FROM contribution ORDER BY 1, 2, 3`))
        .rows;
    try {
      expect((await migrator.migrateTo(BEFORE_WATERMARK)).error).toBeUndefined();
      // Under the old chunk: user 1001 purged to the end, user 1002 one chunk (2 of 5 signals) into a purge.
      for (const user of ['1001', '1002']) {
        await client.query(
          `WITH s AS (
             INSERT INTO signal (id, user_id, item_id, kind, weight_micros, cohort_ids, at_ns, forwarded)
             SELECT nextval('signal_id_seq'), $1, 'mig-' || (g % 2), 'LIKE', 1000000 * g, ARRAY['k'], now_ns() - 1000000000 + g, true
               FROM generate_series(1, 5) g
             RETURNING id, user_id, item_id, weight_micros, at_ns),
           c AS (INSERT INTO cohort_contribution (signal_id, cohort_id, user_id, item_id, weight_micros, at_ns)
                 SELECT id, 'k', user_id, item_id, weight_micros, at_ns FROM s),
           a AS (INSERT INTO community_item_aggregate (item_id, shard, signal_count, weight_micros_sum)
                 SELECT item_id, 99, count(*), sum(weight_micros) FROM s GROUP BY item_id
                 ON CONFLICT (item_id, shard) DO UPDATE SET signal_count = community_item_aggregate.signal_count + excluded.signal_count,
                   weight_micros_sum = community_item_aggregate.weight_micros_sum + excluded.weight_micros_sum)
           INSERT INTO cohort_item_aggregate (cohort_id, item_id, shard, signal_count, weight_micros_sum)
           SELECT 'k', item_id, 99, count(*), sum(weight_micros) FROM s GROUP BY item_id
           ON CONFLICT (cohort_id, item_id, shard) DO UPDATE SET signal_count = cohort_item_aggregate.signal_count + excluded.signal_count,
             weight_micros_sum = cohort_item_aggregate.weight_micros_sum + excluded.weight_micros_sum`,
          [user],
        );
        await client.query(`SELECT leave_community_layer($1)`, [user]);
        await client.query(`SELECT request_community_purge($1)`, [user]);
        await client.query(`SELECT * FROM run_community_purge_chunk(${user === '1001' ? 10 : 2})`);
      }
      const { rows: marked } = await client.query(
        `SELECT user_id::text, count(*)::int AS n FROM signal WHERE purge_id IS NOT NULL GROUP BY 1 ORDER BY 1`,
      );
      expect(marked).toEqual([
        { user_id: '1001', n: 5 },
        { user_id: '1002', n: 2 },
      ]);
      const before = await contributions();
      expect(before).toHaveLength(6);

      expect((await migrator.migrateToLatest()).error).toBeUndefined();
      expect(await contributions()).toEqual(before);
      const { rows: cursors } = await client.query(
        `SELECT status, cursor_at_ns = boundary_ns - 1 AND cursor_signal_id = 9223372036854775807 AS at_boundary FROM community_purge ORDER BY user_id`,
      );
      expect(cursors).toEqual([
        { status: 'FINISHED', at_boundary: true },
        { status: 'RUNNING', at_boundary: false },
      ]);
      expect(await aggregateMismatches(client)).toEqual([]);
      // The running purge goes on under the new chunk and ends exact.
      while ((await client.query(`SELECT * FROM run_community_purge_chunk(2)`)).rows[0].purge_id !== null);
      expect(await contributions()).toEqual([]);
      expect(await aggregateMismatches(client)).toEqual([]);

      expect((await migrator.migrateTo(BEFORE_WATERMARK)).error).toBeUndefined();
      const { rows: remarked } = await client.query(
        `SELECT user_id::text, count(*)::int AS n FROM signal WHERE purge_id IS NOT NULL GROUP BY 1 ORDER BY 1`,
      );
      expect(remarked).toEqual([
        { user_id: '1001', n: 5 },
        { user_id: '1002', n: 5 },
      ]);
      expect((await migrator.migrateToLatest()).error).toBeUndefined();
    } finally {
      await client.end();
      await kysely.destroy();
    }
  });
});
