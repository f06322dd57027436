import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import { WEIGHT_SCALE } from '../src/signals/signal-input.js';
import { DEFAULT_WEIGHTS } from '../src/signals/signal-kind.js';
import type { SignalInputJson } from './workload.js';

/**
 * The database ceilings write the same rows into tables shaped like the service's (same columns,
 * defaults and indexes): what storing signals costs with none of the service's work around it.
 */
export async function createScratchTable(client: pg.Client): Promise<void> {
  await client.query(`CREATE TABLE bench_signal (LIKE signal INCLUDING ALL);
    CREATE TABLE bench_cohort_contribution (LIKE cohort_contribution INCLUDING ALL);
    CREATE TABLE bench_community_item_aggregate (LIKE community_item_aggregate INCLUDING ALL);
    CREATE TABLE bench_cohort_item_aggregate (LIKE cohort_item_aggregate INCLUDING ALL)`);
}

const COLUMNS = 'user_id, item_id, kind, weight_micros, occurred_at, surface, cohort_ids, at_ns, forwarded';

export function singleInsert(input: SignalInputJson, left: ReadonlySet<string>): pg.QueryConfig {
  return {
    name: 'bench-single-insert',
    text: `INSERT INTO bench_signal (${COLUMNS}) VALUES ($1, $2, $3, $4, NULL, $5, $6, now_ns(), $7)`,
    values: [
      input.userId,
      input.itemId,
      input.kind,
      weightMicros(input),
      input.context.surface,
      input.context.cohortIds,
      !left.has(input.userId),
    ],
  };
}

export function multiInsert(inputs: readonly SignalInputJson[], left: ReadonlySet<string>): pg.QueryConfig {
  return {
    name: 'bench-multi-insert',
    text: `INSERT INTO bench_signal (${COLUMNS})
           SELECT u::u64, i, k::signal_kind, w, NULL, s, c::text[], now_ns(), f
             FROM unnest($1::text[], $2::text[], $3::text[], $4::bigint[], $5::text[], $6::text[], $7::boolean[]) AS t(u, i, k, w, s, c, f)`,
    values: [
      inputs.map((input) => input.userId),
      inputs.map((input) => input.itemId),
      inputs.map((input) => input.kind),
      inputs.map(weightMicros),
      inputs.map((input) => input.context.surface),
      // unnest cannot yield ragged arrays, so each row's cohorts travel as an array literal.
      inputs.map((input) => `{${input.context.cohortIds.join(',')}}`),
      inputs.map((input) => !left.has(input.userId)),
    ],
  };
}

/**
 * Every row `ingest_signals` writes for these inputs, in one plain statement with no gate, no lock
 * and no status read (`forwarded` comes from the bench's own LEFT set): the signal rows with a
 * fresh event id each, the cohort ledger rows of the forwarded ones, and the community and cohort
 * aggregate upserts into this connection's shard. The data model's own cost per group.
 */
export function sameRowsInsert(inputs: readonly SignalInputJson[], left: ReadonlySet<string>): pg.QueryConfig {
  const statement = multiInsert(inputs, left);
  return {
    name: 'bench-same-rows',
    text: `WITH stored AS (
             INSERT INTO bench_signal (${COLUMNS}, event_id)
             SELECT u::u64, i, k::signal_kind, w, NULL, s, c::text[], now_ns(), f, e
               FROM unnest($1::text[], $2::text[], $3::text[], $4::bigint[], $5::text[], $6::text[], $7::boolean[], $8::text[])
                    AS t(u, i, k, w, s, c, f, e)
             RETURNING id, user_id, item_id, weight_micros, cohort_ids, at_ns, forwarded
           ), attributed AS (
             SELECT s.id, s.user_id, s.item_id, s.weight_micros AS w, s.at_ns, c.cohort
               FROM stored s CROSS JOIN LATERAL unnest(s.cohort_ids) AS c(cohort) WHERE s.forwarded
           ), ledger AS (
             INSERT INTO bench_cohort_contribution (signal_id, cohort_id, user_id, item_id, weight_micros, at_ns)
             SELECT a.id, a.cohort, a.user_id, a.item_id, a.w, a.at_ns FROM attributed a
           ), community AS (
             INSERT INTO bench_community_item_aggregate AS agg (item_id, shard, signal_count, weight_micros_sum)
             SELECT s.item_id, (pg_backend_pid() % 32)::int2, count(*), sum(s.weight_micros) FROM stored s WHERE s.forwarded GROUP BY s.item_id ORDER BY s.item_id
             ON CONFLICT (item_id, shard) DO UPDATE
               SET signal_count = agg.signal_count + excluded.signal_count, weight_micros_sum = agg.weight_micros_sum + excluded.weight_micros_sum
           ), cohort AS (
             INSERT INTO bench_cohort_item_aggregate AS agg (cohort_id, item_id, shard, signal_count, weight_micros_sum)
             SELECT a.cohort, a.item_id, (pg_backend_pid() % 32)::int2, count(*), sum(a.w) FROM attributed a GROUP BY a.cohort, a.item_id ORDER BY a.cohort, a.item_id
             ON CONFLICT (cohort_id, item_id, shard) DO UPDATE
               SET signal_count = agg.signal_count + excluded.signal_count, weight_micros_sum = agg.weight_micros_sum + excluded.weight_micros_sum
           )
           SELECT s.id, s.forwarded, CASE WHEN s.forwarded THEN cardinality(s.cohort_ids) ELSE 0 END AS cohorts FROM stored s`,
    values: [
      ...statement.values!.slice(0, 5),
      // Deduplicated per signal, as validation does in the service.
      inputs.map((input) => `{${[...new Set(input.context.cohortIds)].join(',')}}`),
      statement.values![6],
      inputs.map(() => randomUUID()),
    ],
  };
}

function weightMicros(input: SignalInputJson): number {
  return DEFAULT_WEIGHTS[input.kind] * WEIGHT_SCALE;
}

/**
 * One `ingest_signals` call straight from pg (the service's database work alone), every signal
 * with a fresh event id or none (the function then stores and counts it like before event ids).
 */
export function ingestCall(inputs: readonly SignalInputJson[], left: ReadonlySet<string>, eventIds: boolean): pg.QueryConfig {
  // Deduplicated per signal, as validation does in the service.
  const cohorts = inputs.map((input) => [...new Set(input.context.cohortIds)]);
  return {
    name: 'bench-ingest-signals',
    text: `SELECT * FROM ingest_signals($1::text[], $2::text[], $3::signal_kind[], $4::bigint[], $5::timestamptz[], $6::text[],
             $7::boolean[], $8::int[], $9::text[], $10::text[])`,
    values: [
      inputs.map((input) => input.userId),
      inputs.map((input) => input.itemId),
      inputs.map((input) => input.kind),
      inputs.map(weightMicros),
      inputs.map(() => null),
      inputs.map((input) => input.context.surface),
      inputs.map((input) => !left.has(input.userId)),
      cohorts.flatMap((ids, i) => ids.map(() => i + 1)),
      cohorts.flat(),
      inputs.map(() => (eventIds ? randomUUID() : null)),
    ],
  };
}
