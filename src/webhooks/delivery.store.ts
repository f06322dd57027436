import { sql, type Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import { fitsInt8 } from '../ids/int8.js';
import { membershipEvents } from '../membership/membership-events.store.js';
import { disableEndpoint, ENDPOINT_DISABLED } from './endpoint.store.js';
import type { WebhookDelivery } from './webhook-records.js';

/** Deliveries and their outcomes (one of the webhook stores, endpoint.store.ts says which). */

export async function listDeliveries(db: Kysely<Database>, endpointId: string, limit: number): Promise<WebhookDelivery[]> {
  if (!fitsInt8(endpointId)) return [];
  return db.selectFrom('webhook_delivery').selectAll().where('endpoint_id', '=', endpointId).orderBy('id', 'desc').limit(limit).execute();
}

/** The deliveries, each with its endpoint and its event, for one job's attempts (in id order). */
export async function deliveriesToAttempt(db: Kysely<Database>, ids: string[]) {
  if (ids.length === 0) return [];
  return db
    .selectFrom('webhook_delivery as d')
    .innerJoin('webhook_endpoint as w', 'w.id', 'd.endpoint_id')
    .innerJoin(membershipEvents(db).as('e'), 'e.position', 'd.event_position')
    .select([
      'd.id',
      'd.status',
      'd.attempts',
      'd.created_at',
      'w.id as endpoint_id',
      'w.url',
      'w.secret',
      'w.disabled_at',
      'w.failing_since',
      'w.fast_successes',
      'e.position',
      'e.kind',
      'e.user_id',
      'e.left_at_ns',
      'e.rejoined_at_ns',
      'e.purge_id',
      'e.recorded_at',
      'e.reason',
      'e.reason_text',
      'e.policy_version',
    ])
    .where('d.id', 'in', ids)
    .orderBy('d.id')
    .execute();
}

/** The most `fast_successes` counts (migration 0021): the most WEBHOOK_PROBATION_SUCCESSES can ask. */
export const FAST_SUCCESSES_CAP = 1000;

/**
 * Delivered, in one statement (one commit for a job's successes, all one endpoint's); the
 * endpoint's failure streak ends and its fast successes in a row are now `fastSuccesses` (the job
 * counted them from the value it read: its lane runs one job of the endpoint at a time).
 */
export async function recordSuccesses(
  db: Kysely<Database>,
  delivered: { id: string; statusCode: number }[],
  fastSuccesses: number,
): Promise<void> {
  if (delivered.length === 0) return;
  await sql`
    WITH done AS (
      UPDATE webhook_delivery d SET status = 'DELIVERED', attempts = d.attempts + 1, last_status_code = v.code, last_error = NULL, delivered_at = now()
      FROM unnest(${delivered.map((d) => d.id)}::bigint[], ${delivered.map((d) => d.statusCode)}::int[]) AS v (id, code)
      WHERE d.id = v.id
      RETURNING d.endpoint_id
    )
    UPDATE webhook_endpoint SET consecutive_failures = 0, failing_since = NULL, fast_successes = ${Math.min(fastSuccesses, FAST_SUCCESSES_CAP)}
    WHERE id IN (SELECT endpoint_id FROM done)
  `.execute(db);
}

export interface Failure {
  id: string;
  endpointId: string;
  statusCode: number | null;
  error: string;
  /** The retry period is over: the delivery is FAILED. */
  final: boolean;
  /** The receiver answered 410 Gone: it wants no more deliveries, so the endpoint is disabled now. */
  gone: boolean;
  disableAfterFailures: number;
  disableAfterMs: number;
}

/** After a failure: whether the endpoint is disabled, and the reason when this failure disabled it. */
export type FailureOutcome = { disabled: false } | { disabled: true; reason: string | null };

/**
 * Records a failed attempt; the endpoint is on probation again (no fast successes in a row). It is
 * disabled, with the reason, at a 410 Gone, or once it has failed `disableAfterFailures` attempts
 * in a row or for `disableAfterMs` since its last success.
 */
export async function recordFailure(db: Kysely<Database>, failure: Failure): Promise<FailureOutcome> {
  return db.transaction().execute(async (trx) => {
    await trx
      .updateTable('webhook_delivery')
      .set((eb) => ({
        status: failure.final ? 'FAILED' : 'PENDING',
        attempts: eb('attempts', '+', 1),
        last_status_code: failure.statusCode,
        last_error: failure.error,
      }))
      .where('id', '=', failure.id)
      .execute();
    const endpoint = await trx
      .updateTable('webhook_endpoint')
      .set((eb) => ({
        consecutive_failures: eb('consecutive_failures', '+', 1),
        failing_since: sql<Date>`coalesce(failing_since, now())`,
        fast_successes: 0,
      }))
      .where('id', '=', failure.endpointId)
      .returning(['consecutive_failures', 'disabled_at', sql<number>`extract(epoch FROM now() - failing_since) * 1000`.as('failing_ms')])
      .executeTakeFirstOrThrow();
    if (endpoint.disabled_at !== null) return { disabled: true, reason: null };
    const failingMs = Number(endpoint.failing_ms);
    const failures = `${endpoint.consecutive_failures} consecutive failed deliveries`;
    let reason: string;
    if (failure.gone) reason = 'the receiver answered 410 Gone (it asks for no more deliveries)';
    else if (endpoint.consecutive_failures >= failure.disableAfterFailures) reason = `${failures}; last: ${failure.error}`;
    else if (failingMs >= failure.disableAfterMs)
      reason = `failing for ${Math.round(failingMs / 1000)} s (${failures}); last: ${failure.error}`;
    else return { disabled: false };
    await disableEndpoint(trx, failure.endpointId, reason);
    return { disabled: true, reason };
  });
}

/** Deliveries given up because their endpoint is disabled (enabling it replays them). */
export async function recordSkipped(db: Kysely<Database>, ids: string[]): Promise<void> {
  if (ids.length === 0) return;
  await db.updateTable('webhook_delivery').set({ status: 'FAILED', last_error: ENDPOINT_DISABLED }).where('id', 'in', ids).execute();
}

/** Sets a delivery PENDING again (a replay): its attempts start a fresh retry period. */
export async function resetDelivery(db: Kysely<Database>, id: string): Promise<WebhookDelivery | undefined> {
  if (!fitsInt8(id)) return undefined;
  return db
    .updateTable('webhook_delivery')
    .set({ status: 'PENDING', created_at: sql<Date>`now()`, delivered_at: null })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirst();
}

/** Deliveries pending in the whole deployment, and the oldest one's age (0 when none). */
export async function pendingDeliveries(db: Kysely<Database>): Promise<{ pending: number; oldestSeconds: number }> {
  const { rows } = await sql<{ pending: number; oldest_seconds: number }>`
    SELECT count(*)::int AS pending, coalesce(extract(epoch FROM now() - min(created_at)), 0)::float8 AS oldest_seconds
    FROM webhook_delivery WHERE status = 'PENDING'`.execute(db);
  return { pending: rows[0]!.pending, oldestSeconds: rows[0]!.oldest_seconds };
}
