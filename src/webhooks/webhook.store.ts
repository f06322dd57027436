import { randomBytes } from 'node:crypto';
import { sql, type Kysely, type Selectable } from 'kysely';
import type { Database, MembershipEventKind, WebhookDeliveryTable, WebhookEndpointTable } from '../db/schema.js';
import { fitsInt8 } from '../ids/int8.js';

/** The one owner of the webhook tables (webhook_endpoint, webhook_delivery, webhook_dispatch). */

export type WebhookEndpoint = Selectable<WebhookEndpointTable>;
export type WebhookDelivery = Selectable<WebhookDeliveryTable>;

/** An endpoint's columns; its kinds as text[], which pg parses (it leaves an array of our enum a string). */
const ENDPOINT = ['id', 'url', 'secret', sql<MembershipEventKind[]>`event_kinds::text[]`.as('event_kinds'), 'created_at', 'consecutive_failures', 'disabled_at', 'disabled_reason'] as const;

/** A Standard Webhooks secret: whsec_ and 24 random bytes in base64. */
function newSecret(): string {
  return `whsec_${randomBytes(24).toString('base64')}`;
}

export function registerEndpoint(db: Kysely<Database>, url: string, eventKinds: MembershipEventKind[]): Promise<WebhookEndpoint> {
  return db.insertInto('webhook_endpoint').values({ url, secret: newSecret(), event_kinds: eventKinds, disabled_at: null, disabled_reason: null })
    .returning(ENDPOINT).executeTakeFirstOrThrow();
}

export function listEndpoints(db: Kysely<Database>): Promise<WebhookEndpoint[]> {
  return db.selectFrom('webhook_endpoint').select(ENDPOINT).orderBy('id').execute();
}

export async function findEndpoint(db: Kysely<Database>, id: string): Promise<WebhookEndpoint | undefined> {
  if (!fitsInt8(id)) return undefined;
  return db.selectFrom('webhook_endpoint').select(ENDPOINT).where('id', '=', id).executeTakeFirst();
}

/** Disables an endpoint by hand, with the operator's reason (an endpoint already disabled keeps its first). */
export async function disableEndpoint(db: Kysely<Database>, id: string, reason: string): Promise<WebhookEndpoint | undefined> {
  if (!fitsInt8(id)) return undefined;
  return db.updateTable('webhook_endpoint').set({ disabled_at: sql<Date>`coalesce(disabled_at, now())`, disabled_reason: sql<string>`coalesce(disabled_reason, ${reason})` })
    .where('id', '=', id).returning(ENDPOINT).executeTakeFirst();
}

/** Enables a disabled endpoint again, with a clean failure count. */
export async function enableEndpoint(db: Kysely<Database>, id: string): Promise<WebhookEndpoint | undefined> {
  if (!fitsInt8(id)) return undefined;
  return db.updateTable('webhook_endpoint').set({ disabled_at: null, disabled_reason: null, consecutive_failures: 0 })
    .where('id', '=', id).returning(ENDPOINT).executeTakeFirst();
}

export async function listDeliveries(db: Kysely<Database>, endpointId: string, limit: number): Promise<WebhookDelivery[]> {
  if (!fitsInt8(endpointId)) return [];
  return db.selectFrom('webhook_delivery').selectAll().where('endpoint_id', '=', endpointId).orderBy('id', 'desc').limit(limit).execute();
}

export async function findDelivery(db: Kysely<Database>, id: string): Promise<WebhookDelivery | undefined> {
  if (!fitsInt8(id)) return undefined;
  return db.selectFrom('webhook_delivery').selectAll().where('id', '=', id).executeTakeFirst();
}

/** The deliveries, each with its endpoint and its event, for one job's attempts (in id order). */
export async function deliveriesToAttempt(db: Kysely<Database>, ids: string[]) {
  if (ids.length === 0) return [];
  return db.selectFrom('webhook_delivery as d')
    .innerJoin('webhook_endpoint as w', 'w.id', 'd.endpoint_id')
    .innerJoin('membership_event as e', 'e.position', 'd.event_position')
    .select(['d.id', 'd.status', 'd.attempts', 'd.created_at', 'w.id as endpoint_id', 'w.url', 'w.secret', 'w.disabled_at',
      'e.position', 'e.kind', 'e.user_id', 'e.left_at_ns', 'e.rejoined_at_ns', 'e.purge_id', 'e.recorded_at'])
    .where('d.id', 'in', ids)
    .orderBy('d.id')
    .execute();
}

/** Delivered, in one statement (one commit for a job's successes); their endpoints' failure streaks end. */
export async function recordSuccesses(db: Kysely<Database>, delivered: { id: string; statusCode: number }[]): Promise<void> {
  if (delivered.length === 0) return;
  await sql`
    WITH done AS (
      UPDATE webhook_delivery d SET status = 'DELIVERED', attempts = d.attempts + 1, last_status_code = v.code, last_error = NULL, delivered_at = now()
      FROM unnest(${delivered.map((d) => d.id)}::bigint[], ${delivered.map((d) => d.statusCode)}::int[]) AS v (id, code)
      WHERE d.id = v.id
      RETURNING d.endpoint_id
    )
    UPDATE webhook_endpoint SET consecutive_failures = 0 WHERE id IN (SELECT endpoint_id FROM done)
  `.execute(db);
}

/**
 * Records a failed attempt; `final`: the retry period is over. The endpoint is disabled, with the
 * reason, once `disableAfter` attempts in a row have failed. Answers whether it is now disabled.
 */
export async function recordFailure(
  db: Kysely<Database>,
  attempt: { id: string; endpointId: string; statusCode: number | null; error: string; final: boolean; disableAfter: number },
): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    await trx.updateTable('webhook_delivery')
      .set((eb) => ({ status: attempt.final ? 'FAILED' : 'PENDING', attempts: eb('attempts', '+', 1), last_status_code: attempt.statusCode, last_error: attempt.error }))
      .where('id', '=', attempt.id).execute();
    const endpoint = await trx.updateTable('webhook_endpoint').set((eb) => ({ consecutive_failures: eb('consecutive_failures', '+', 1) }))
      .where('id', '=', attempt.endpointId).returning(['consecutive_failures', 'disabled_at']).executeTakeFirstOrThrow();
    if (endpoint.disabled_at !== null) return true;
    if (endpoint.consecutive_failures < attempt.disableAfter) return false;
    await trx.updateTable('webhook_endpoint')
      .set({ disabled_at: new Date(), disabled_reason: `${endpoint.consecutive_failures} consecutive failed deliveries; last: ${attempt.error}` })
      .where('id', '=', attempt.endpointId).execute();
    return true;
  });
}

/** A delivery given up because its endpoint is disabled. */
export async function recordSkipped(db: Kysely<Database>, id: string): Promise<void> {
  await db.updateTable('webhook_delivery').set({ status: 'FAILED', last_error: 'endpoint disabled' }).where('id', '=', id).execute();
}

/** Sets a delivery PENDING again (a replay): its attempts start a fresh retry period. */
export async function resetDelivery(db: Kysely<Database>, id: string): Promise<WebhookDelivery | undefined> {
  if (!fitsInt8(id)) return undefined;
  return db.updateTable('webhook_delivery').set({ status: 'PENDING', created_at: sql<Date>`now()`, delivered_at: null })
    .where('id', '=', id).returningAll().executeTakeFirst();
}
