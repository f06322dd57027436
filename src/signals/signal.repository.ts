import { sql, type Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import { timestamptzText } from '../time/rfc3339.js';
import type { ValidSignal } from './signal-input.js';

export interface GatedSignal {
  signal: ValidSignal;
  /** The in-memory gate's answer: false when the cache knows the user LEFT. */
  gateOpen: boolean;
}

export interface StoredSignal {
  signalId: string;
  forwarded: boolean;
  cohortsAttributed: number;
}

/** Stores a group of signals and fans out the forwardable ones: one statement, one transaction. */
export async function ingestSignals(db: Kysely<Database>, group: readonly GatedSignal[]): Promise<StoredSignal[]> {
  const columns = {
    userIds: [] as string[],
    itemIds: [] as string[],
    kinds: [] as string[],
    weights: [] as number[],
    occurredAt: [] as (string | null)[],
    surfaces: [] as (string | null)[],
    gateOpen: [] as boolean[],
    cohortOrds: [] as number[],
    cohortIds: [] as string[],
  };
  group.forEach(({ signal, gateOpen }, index) => {
    columns.userIds.push(signal.userId);
    columns.itemIds.push(signal.itemId);
    columns.kinds.push(signal.kind);
    columns.weights.push(signal.weightMicros);
    columns.occurredAt.push(signal.occurredAt === null ? null : timestamptzText(signal.occurredAt));
    columns.surfaces.push(signal.surface);
    columns.gateOpen.push(gateOpen);
    for (const cohortId of signal.cohortIds) {
      columns.cohortOrds.push(index + 1);
      columns.cohortIds.push(cohortId);
    }
  });
  const { rows } = await sql<{ r_signal_id: string; r_forwarded: boolean; r_cohorts_attributed: number }>`
    SELECT * FROM ingest_signals(
      ${columns.userIds}::text[], ${columns.itemIds}::text[], ${columns.kinds}::signal_kind[],
      ${columns.weights}::bigint[], ${columns.occurredAt}::timestamptz[], ${columns.surfaces}::text[],
      ${columns.gateOpen}::boolean[], ${columns.cohortOrds}::int[], ${columns.cohortIds}::text[])
  `.execute(db);
  return rows.map((row) => ({
    signalId: row.r_signal_id,
    forwarded: row.r_forwarded,
    cohortsAttributed: row.r_cohorts_attributed,
  }));
}
