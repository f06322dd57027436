import { sql, type Kysely } from 'kysely';
import type { Database, PurgeStatus } from '../db/schema.js';
import { WEIGHT_SCALE } from '../signals/signal-input.js';

/**
 * The one owner of the purge tables (community_purge, community_purge_target). Writes go through
 * request_community_purge and run_community_purge_chunk (src/db/sql/), which also touch the ledger
 * and the aggregates they remove entries from.
 */

export interface PurgeTarget {
  /** "community" or the cohort id. */
  target: string;
  /** Null for the community aggregate. */
  cohortId: string | null;
  entries: number;
  weight: number;
}

export interface PurgeReceipt {
  purgeId: string;
  userId: string;
  status: PurgeStatus;
  /** Entries with at_ns below it are removed (ns since the epoch, decimal). */
  boundaryNs: string;
  /** The previous purge's boundary ("0" for the first): nothing older was left to remove. */
  fromNs: string;
  requestedAtNs: bigint;
  finishedAtNs: bigint | null;
  removedSoFar: number;
  weightRemoved: number;
  chunks: number;
  targets: PurgeTarget[];
}

export interface PurgeRequest {
  purgeId: string;
  /** False when a running purge of the user was returned instead. */
  created: boolean;
}

/** The SQLSTATEs the purge functions raise; mapped to GraphQL errors in api/domain-errors.ts. */
export const NOT_LEFT_SQLSTATE = 'CLP01';
export const PURGE_RUNNING_SQLSTATE = 'CLP02';

export async function requestPurge(db: Kysely<Database>, userId: string): Promise<PurgeRequest> {
  const { rows } = await sql<{ purge_id: string; created: boolean }>`SELECT * FROM request_community_purge(${userId})`.execute(db);
  return { purgeId: rows[0]!.purge_id, created: rows[0]!.created };
}

export interface ChunkResult {
  purgeId: string;
  userId: string;
  finished: boolean;
  removedSoFar: number;
}

/** One chunk of the oldest running purge no one else is working on; null when there is none. */
export async function runChunk(db: Kysely<Database>, limit: number): Promise<ChunkResult | null> {
  const { rows } = await sql<{ purge_id: string | null; user_id: string; finished: boolean; removed_so_far: string }>`
    SELECT * FROM run_community_purge_chunk(${limit}::int)`.execute(db);
  const row = rows[0];
  if (!row || row.purge_id === null) return null;
  return { purgeId: row.purge_id, userId: row.user_id, finished: row.finished, removedSoFar: Number(row.removed_so_far) };
}

const epochNs = (column: string) => sql<string>`((extract(epoch FROM ${sql.ref(column)}) * 1000000)::bigint * 1000)::text`;

function receipts(db: Kysely<Database>) {
  return db.selectFrom('community_purge as p').select([
    'p.id',
    'p.user_id',
    'p.status',
    'p.boundary_ns',
    'p.from_ns',
    epochNs('p.requested_at').as('requested_at_ns'),
    sql<string | null>`CASE WHEN p.finished_at IS NULL THEN NULL ELSE ${epochNs('p.finished_at')} END`.as('finished_at_ns'),
    'p.removed_so_far',
    'p.weight_micros_removed',
    'p.chunks',
    sql<{ cohort_id: string; entries: string; weight_micros: string }[]>`coalesce((
        SELECT json_agg(json_build_object('cohort_id', t.cohort_id, 'entries', t.entries::text, 'weight_micros', t.weight_micros::text)
                        ORDER BY t.cohort_id)
          FROM community_purge_target t WHERE t.purge_id = p.id), '[]')`.as('targets'),
  ]);
}

type ReceiptRow = Awaited<ReturnType<ReturnType<typeof receipts>['executeTakeFirstOrThrow']>>;

export async function findPurge(db: Kysely<Database>, purgeId: string): Promise<PurgeReceipt | null> {
  const row = await receipts(db).where('p.id', '=', purgeId).executeTakeFirst();
  return row ? toReceipt(row) : null;
}

/** A user's purges, newest first. */
export async function listPurges(db: Kysely<Database>, userId: string, limit: number): Promise<PurgeReceipt[]> {
  const rows = await receipts(db).where('p.user_id', '=', userId).orderBy('p.id', 'desc').limit(limit).execute();
  return rows.map(toReceipt);
}

/** A user's purges, oldest first, after `afterId` (keyset pages: the export). */
export async function purgesAfter(db: Kysely<Database>, userId: string, afterId: string, limit: number): Promise<PurgeReceipt[]> {
  const rows = await receipts(db).where('p.user_id', '=', userId).where('p.id', '>', afterId).orderBy('p.id').limit(limit).execute();
  return rows.map(toReceipt);
}

function toReceipt(row: ReceiptRow): PurgeReceipt {
  return {
    purgeId: row.id,
    userId: row.user_id,
    status: row.status,
    boundaryNs: row.boundary_ns,
    fromNs: row.from_ns,
    requestedAtNs: BigInt(row.requested_at_ns),
    finishedAtNs: row.finished_at_ns === null ? null : BigInt(row.finished_at_ns),
    removedSoFar: Number(row.removed_so_far),
    weightRemoved: Number(row.weight_micros_removed) / WEIGHT_SCALE,
    chunks: row.chunks,
    targets: row.targets.map((target) => ({
      target: target.cohort_id === '' ? 'community' : target.cohort_id,
      cohortId: target.cohort_id === '' ? null : target.cohort_id,
      entries: Number(target.entries),
      weight: Number(target.weight_micros) / WEIGHT_SCALE,
    })),
  };
}

/** Purges not finished in the whole deployment (the partial unique index on RUNNING covers it). */
export async function runningPurges(db: Kysely<Database>): Promise<number> {
  const { rows } = await sql<{ running: number }>`SELECT count(*)::int AS running FROM community_purge WHERE status = 'RUNNING'`.execute(
    db,
  );
  return rows[0]!.running;
}

/** A finished purge's time from request to end, database clock. */
export async function purgeDurationSeconds(db: Kysely<Database>, purgeId: string): Promise<number | null> {
  const { rows } = await sql<{ seconds: number | null }>`
    SELECT extract(epoch FROM finished_at - requested_at)::float8 AS seconds FROM community_purge WHERE id = ${purgeId}`.execute(db);
  return rows[0]?.seconds ?? null;
}
