import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import { WEIGHT_SCALE } from '../src/signals/signal-input.js';
import { DEFAULT_WEIGHTS } from '../src/signals/signal-kind.js';
import type { SignalInputJson } from './workload.js';

/**
 * The database ceilings write the same rows into a table shaped like `signal` (same columns,
 * defaults and indexes): what storing signals costs with none of the service's work around it.
 */
export async function createScratchTable(client: pg.Client): Promise<void> {
  await client.query('CREATE TABLE bench_signal (LIKE signal INCLUDING ALL)');
}

const COLUMNS = 'user_id, item_id, kind, weight_micros, occurred_at, surface, cohort_ids, at_ns, forwarded';

export function singleInsert(input: SignalInputJson, left: ReadonlySet<string>): pg.QueryConfig {
  return {
    name: 'bench-single-insert',
    text: `INSERT INTO bench_signal (${COLUMNS}) VALUES ($1, $2, $3, $4, NULL, $5, $6, now_ns(), $7)`,
    values: [input.userId, input.itemId, input.kind, weightMicros(input), input.context.surface, input.context.cohortIds, !left.has(input.userId)],
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
