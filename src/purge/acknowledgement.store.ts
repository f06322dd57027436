import { sql, type Kysely, type Selectable } from 'kysely';
import type { Database, DownstreamProcessorTable, PurgeAcknowledgementState } from '../db/schema.js';
import { fitsInt8 } from '../ids/int8.js';
import { DownstreamRefusal } from './downstream-refusal.js';

/**
 * The one owner of the downstream tables (downstream_processor, purge_acknowledgement,
 * purge_acknowledgement_change). A processor's state for a purge is its last acknowledgement (last
 * write wins, in commit order: its latest report is its truth, so a retry that succeeded after a
 * failure reads DONE); every change of it is kept, so a FAILED before the DONE stays on record.
 */

export type DownstreamProcessor = Selectable<DownstreamProcessorTable>;

export interface AcknowledgementChange {
  state: PurgeAcknowledgementState;
  reason: string | null;
  /** Nanoseconds since the epoch (microsecond precision). */
  atNs: bigint;
}

export interface ProcessorState {
  purgeId: string;
  processor: DownstreamProcessor;
  state: PurgeAcknowledgementState | 'PENDING';
  reason: string | null;
  atNs: bigint | null;
  /** Oldest first. */
  history: AcknowledgementChange[];
}

const UNIQUE_VIOLATION = '23505';

export async function registerProcessor(db: Kysely<Database>, subject: string, name: string): Promise<DownstreamProcessor> {
  try {
    return await db.insertInto('downstream_processor').values({ subject, name, retired_at: null }).returningAll().executeTakeFirstOrThrow();
  } catch (error) {
    if ((error as { code?: unknown }).code !== UNIQUE_VIOLATION) throw error;
    throw new DownstreamRefusal('PROCESSOR_EXISTS', `A processor with subject "${subject}" is already registered.`);
  }
}

export function listProcessors(db: Kysely<Database>): Promise<DownstreamProcessor[]> {
  return db.selectFrom('downstream_processor').selectAll().orderBy('id').execute();
}

/** It no longer counts towards any purge, nor may it acknowledge; its acknowledgements stay. */
export async function retireProcessor(db: Kysely<Database>, id: string): Promise<DownstreamProcessor | undefined> {
  if (!fitsInt8(id)) return undefined;
  return db
    .updateTable('downstream_processor')
    .set({ retired_at: sql<Date>`coalesce(retired_at, now())` })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirst();
}

/**
 * Records the acknowledgement of `subject`'s processor in one statement: the upsert and, when the
 * state or reason changed, its history row (a repeat of the current state writes nothing, keeping
 * its first time). Unknown (or retired) processor or purge: a refusal, and nothing written.
 */
export async function acknowledgePurge(
  db: Kysely<Database>,
  ack: { subject: string; purgeId: string; state: PurgeAcknowledgementState; reason: string | null },
): Promise<ProcessorState> {
  if (!fitsInt8(ack.purgeId)) throw new DownstreamRefusal('PURGE_NOT_FOUND', `There is no purge ${ack.purgeId}.`);
  const { rows } = await sql<{ processor_id: string | null; purge_id: string | null }>`
    WITH processor AS (SELECT id FROM downstream_processor WHERE subject = ${ack.subject} AND retired_at IS NULL),
         purge AS (SELECT id FROM community_purge WHERE id = ${ack.purgeId}::bigint),
         upserted AS (
           INSERT INTO purge_acknowledgement AS a (purge_id, processor_id, state, reason)
           SELECT purge.id, processor.id, ${ack.state}::purge_acknowledgement_state, ${ack.reason}::text FROM processor, purge
           ON CONFLICT (purge_id, processor_id) DO UPDATE SET state = excluded.state, reason = excluded.reason, acknowledged_at = now()
             WHERE (a.state, a.reason) IS DISTINCT FROM (excluded.state, excluded.reason)
           RETURNING a.*),
         changed AS (
           INSERT INTO purge_acknowledgement_change (purge_id, processor_id, state, reason, acknowledged_at)
           SELECT purge_id, processor_id, state, reason, acknowledged_at FROM upserted)
    SELECT (SELECT id FROM processor) AS processor_id, (SELECT id FROM purge) AS purge_id`.execute(db);
  const row = rows[0]!;
  if (row.processor_id === null) {
    throw new DownstreamRefusal(
      'UNKNOWN_PROCESSOR',
      `No registered downstream processor has the subject "${ack.subject}" (registerDownstreamProcessor).`,
    );
  }
  if (row.purge_id === null) throw new DownstreamRefusal('PURGE_NOT_FOUND', `There is no purge ${ack.purgeId}.`);
  const states = await processorStates(db, ack.purgeId);
  return states.find((state) => state.processor.id === row.processor_id)!;
}

const epochNs = (column: string) => sql<string>`((extract(epoch FROM ${sql.ref(column)}) * 1000000)::bigint * 1000)::text`;

/**
 * Every processor a purge counts: those registered when it was requested, and any that has
 * acknowledged it since, unless retired; PENDING until they acknowledge. In processor order.
 */
export async function processorStates(db: Kysely<Database>, purgeId: string): Promise<ProcessorState[]> {
  const rows = await db
    .selectFrom('community_purge as p')
    .innerJoin('downstream_processor as d', (join) => join.on('d.retired_at', 'is', null))
    .leftJoin('purge_acknowledgement as a', (join) => join.onRef('a.purge_id', '=', 'p.id').onRef('a.processor_id', '=', 'd.id'))
    .selectAll('d')
    .select(['a.state', 'a.reason'])
    .select(sql<string | null>`CASE WHEN a.acknowledged_at IS NULL THEN NULL ELSE ${epochNs('a.acknowledged_at')} END`.as('at_ns'))
    .select(
      sql<{ state: PurgeAcknowledgementState; reason: string | null; at_ns: string }[]>`coalesce((
      SELECT json_agg(json_build_object('state', c.state, 'reason', c.reason, 'at_ns', ${epochNs('c.acknowledged_at')}) ORDER BY c.id)
        FROM purge_acknowledgement_change c WHERE c.purge_id = p.id AND c.processor_id = d.id), '[]')`.as('history'),
    )
    .where('p.id', '=', purgeId)
    .where((eb) => eb.or([eb('d.registered_at', '<=', eb.ref('p.requested_at')), eb('a.purge_id', 'is not', null)]))
    .orderBy('d.id')
    .execute();
  return rows.map(({ state, reason, at_ns, history, ...processor }) => ({
    purgeId,
    processor,
    state: state ?? 'PENDING',
    reason,
    atNs: at_ns === null ? null : BigInt(at_ns),
    history: history.map((change) => ({ state: change.state, reason: change.reason, atNs: BigInt(change.at_ns) })),
  }));
}

/** Every recorded change of every processor's state for the user's purges, by change id (keyset pages: the export). */
export function acknowledgementChangesAfter(db: Kysely<Database>, userId: string, afterId: string, limit: number) {
  return db
    .selectFrom('purge_acknowledgement_change as c')
    .innerJoin('community_purge as p', 'p.id', 'c.purge_id')
    .innerJoin('downstream_processor as d', 'd.id', 'c.processor_id')
    .select(['c.id', 'c.purge_id', 'd.subject', 'd.name', 'c.state', 'c.reason', 'c.acknowledged_at'])
    .where('p.user_id', '=', userId)
    .where('c.id', '>', afterId)
    .orderBy('c.id')
    .limit(limit)
    .execute();
}

export type AcknowledgementChangeRow = Awaited<ReturnType<typeof acknowledgementChangesAfter>>[number];
