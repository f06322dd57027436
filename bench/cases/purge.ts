import type { App } from '../../src/app.js';
import type pg from 'pg';
import type { Case } from '../case.js';
import { graphql } from '../cluster.js';
import { ms, num } from '../format.js';
import { summarize } from '../stats.js';

const LABEL = '10. purge vs raw DELETE … RETURNING';
const USER = '777000777';
const ITEMS = 1000;
const COHORTS = 10;

/**
 * One user with `purgeEntries` ledger entries (half community, half one cohort each), made with
 * generate_series. The purge (request → FINISHED, default chunking) against one raw statement that
 * deletes the same rows with RETURNING and subtracts them from the aggregates (run in a transaction
 * and rolled back, so the purge finds the same rows). Other users send single signals to the same
 * items during the purge, and during the raw statement the ratio is taken against (on two cores
 * that traffic takes a share the raw statement alone at rest does not pay; its time at rest is
 * shown too); their p99 during the purge against at rest.
 */
export const purge: Case = {
  labels: [LABEL],
  async run(cluster, sizes) {
    const url = await cluster.freshDatabase();
    const app = await cluster.startApp(url);
    const db = await cluster.sqlClient(url);
    const signals = Math.floor(sizes.purgeEntries / 2);
    await db.query(
      `INSERT INTO signal (id, user_id, item_id, kind, weight_micros, cohort_ids, at_ns, forwarded)
       SELECT nextval('signal_id_seq'), $1, 'item-' || (g % ${ITEMS}), 'LIKE', 5000000 + g % 7, ARRAY['cohort-' || (g % ${COHORTS})],
              now_ns() - 3600000000000 + g, true
         FROM generate_series(1, $2::int) g`,
      [USER, signals],
    );
    await db.query(
      `INSERT INTO cohort_contribution (signal_id, cohort_id, user_id, item_id, weight_micros, at_ns)
                    SELECT id, cohort_ids[1], user_id, item_id, weight_micros, at_ns FROM signal WHERE user_id = $1`,
      [USER],
    );
    await db.query(
      `INSERT INTO community_item_aggregate (item_id, shard, signal_count, weight_micros_sum)
                    SELECT item_id, 99, count(*), sum(weight_micros) FROM signal WHERE user_id = $1 GROUP BY item_id`,
      [USER],
    );
    await db.query(
      `INSERT INTO cohort_item_aggregate (cohort_id, item_id, shard, signal_count, weight_micros_sum)
                    SELECT cohort_id, item_id, 99, count(*), sum(weight_micros) FROM cohort_contribution WHERE user_id = $1 GROUP BY 1, 2`,
      [USER],
    );
    await graphql(app, cluster.token, `mutation ($u: UInt64) { leaveCommunityLayer(userId: $u) { leftAtNs } }`, { u: USER });
    await db.query('VACUUM ANALYZE');

    // The raw statement twice: at rest, and under the same single-signal traffic the purge runs with.
    const rawAtRestMs = await rawDelete(db);
    let rawMs = 0;
    await singleSignals(app, cluster.token, async () => {
      rawMs = await rawDelete(db);
    });

    const rest = await singleSignals(
      app,
      cluster.token,
      async () => new Promise((resolve) => setTimeout(resolve, sizes.durationSec * 1000)),
    );
    let purgeMs = 0;
    let removed = 0;
    const during = await singleSignals(app, cluster.token, async () => {
      const started = performance.now();
      await graphql(app, cluster.token, `mutation ($u: UInt64) { purgeCommunityContributions(userId: $u) { purgeId } }`, { u: USER });
      for (;;) {
        const receipt = (
          await graphql(app, cluster.token, `query ($u: UInt64) { communityPurges(userId: $u, last: 1) { status removedSoFar } }`, {
            u: USER,
          })
        ).communityPurges[0];
        if (receipt.status === 'FINISHED') {
          removed = receipt.removedSoFar;
          break;
        }
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      purgeMs = performance.now() - started;
    });
    const verified = (await graphql(app, cluster.token, `{ verifyCommunityAggregates { consistent } }`, {})).verifyCommunityAggregates
      .consistent;
    const ratio = purgeMs / rawMs;
    return [
      {
        case: LABEL,
        figure: `${num(removed)} entries in ${ms(purgeMs)}; signal p99 ${ms(during.p99)} during vs ${ms(rest.p99)} at rest`,
        ceiling: `raw ${ms(rawMs)} under the same traffic (${ms(rawAtRestMs)} at rest: ${(purgeMs / rawAtRestMs).toFixed(2)})`,
        ratio,
        target: '≤ 2.0',
        met: ratio <= 2 && verified && removed === signals * 2,
        details: {
          entries: signals * 2,
          removed,
          purgeMs,
          rawMs,
          rawAtRestMs,
          consistent: verified,
          signalAtRest: rest,
          signalDuringPurge: during,
        },
      },
    ];
  },
};

/** Single `signal` requests from 4 sequential callers while `during` runs: latency summary (ms). */
async function singleSignals(app: App, token: string, during: () => Promise<void>) {
  let running = true;
  const latencies: number[] = [];
  const caller = async (id: number) => {
    for (let i = 0; running; i++) {
      const started = performance.now();
      await graphql(app, token, `mutation ($input: SignalInput!) { signal(input: $input) { forwarded } }`, {
        input: {
          userId: String(1000 + id),
          itemId: `item-${(i * 7 + id) % ITEMS}`,
          kind: 'VIEW',
          context: { cohortIds: [`cohort-${i % COHORTS}`] },
        },
      });
      latencies.push(performance.now() - started);
    }
  };
  const callers = Array.from({ length: 4 }, (_, id) => caller(id));
  try {
    await during();
  } finally {
    running = false;
    await Promise.allSettled(callers);
  }
  return summarize(latencies);
}

/**
 * One statement deleting the user's ledger rows (their forwarded signals too, which the purge keeps)
 * with RETURNING and subtracting them from the aggregates; rolled back, so the purge finds the same
 * rows. Its time in ms.
 */
async function rawDelete(db: pg.Client): Promise<number> {
  const started = performance.now();
  await db.query('BEGIN');
  await db.query(
    `WITH s AS (
       DELETE FROM signal WHERE user_id = $1 AND forwarded RETURNING item_id, weight_micros
     ), c AS (
       DELETE FROM cohort_contribution WHERE user_id = $1 RETURNING cohort_id, item_id, weight_micros
     ), sa AS (
       UPDATE community_item_aggregate a SET signal_count = a.signal_count - d.n, weight_micros_sum = a.weight_micros_sum - d.w
         FROM (SELECT item_id, count(*) AS n, sum(weight_micros) AS w FROM s GROUP BY item_id) d
        WHERE a.item_id = d.item_id AND a.shard = 99
     )
     UPDATE cohort_item_aggregate a SET signal_count = a.signal_count - d.n, weight_micros_sum = a.weight_micros_sum - d.w
       FROM (SELECT cohort_id, item_id, count(*) AS n, sum(weight_micros) AS w FROM c GROUP BY 1, 2) d
      WHERE a.cohort_id = d.cohort_id AND a.item_id = d.item_id AND a.shard = 99`,
    [USER],
  );
  const ms = performance.now() - started;
  await db.query('ROLLBACK');
  await db.query('VACUUM ANALYZE');
  return ms;
}
