import { randomBytes } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import type { Database, MembershipEventKind } from '../db/schema.js';
import { fitsInt8 } from '../ids/int8.js';
import { membershipEvents } from '../membership/membership-events.store.js';
import { DELIVER_TASK, JOB_DELIVERIES, laneOf, PROBATION_FLAG } from './queue.store.js';
import type { WebhookEndpoint } from './webhook-records.js';

/**
 * The webhook stores (endpoint, delivery, dispatch, queue .store.ts) are the one owner of the
 * webhook tables (webhook_endpoint, webhook_delivery, webhook_dispatch); this one, of endpoints.
 */

/** An endpoint's columns; its kinds as text[], which pg parses (it leaves an array of our enum a string). */
const ENDPOINT = [
  'id',
  'url',
  'secret',
  sql<MembershipEventKind[]>`event_kinds::text[]`.as('event_kinds'),
  'created_at',
  'consecutive_failures',
  'failing_since',
  'disabled_at',
  'disabled_reason',
] as const;

/** The skipped deliveries of a disabled endpoint carry this error; enabling it replays them. */
export const ENDPOINT_DISABLED = 'endpoint disabled';

/** A Standard Webhooks secret: whsec_ and 24 random bytes in base64. */
function newSecret(): string {
  return `whsec_${randomBytes(24).toString('base64')}`;
}

export function registerEndpoint(db: Kysely<Database>, url: string, eventKinds: MembershipEventKind[]): Promise<WebhookEndpoint> {
  return db
    .insertInto('webhook_endpoint')
    .values({ url, secret: newSecret(), event_kinds: eventKinds, disabled_at: null, disabled_reason: null })
    .returning(ENDPOINT)
    .executeTakeFirstOrThrow();
}

export function listEndpoints(db: Kysely<Database>): Promise<WebhookEndpoint[]> {
  return db.selectFrom('webhook_endpoint').select(ENDPOINT).orderBy('id').execute();
}

/**
 * Disables an endpoint (by hand, or after failing too long), with the reason (an endpoint already
 * disabled keeps its first). It records how far the dispatcher had come, under the dispatch row's
 * lock, so that enabling it again creates the deliveries of every event dispatched in between.
 */
export async function disableEndpoint(db: Kysely<Database>, id: string, reason: string): Promise<WebhookEndpoint | undefined> {
  if (!fitsInt8(id)) return undefined;
  return db
    .updateTable('webhook_endpoint')
    .set({
      disabled_at: sql<Date>`coalesce(disabled_at, now())`,
      disabled_reason: sql<string>`coalesce(disabled_reason, ${reason})`,
      disabled_position: sql<string>`coalesce(disabled_position, (SELECT position FROM webhook_dispatch FOR SHARE))`,
    })
    .where('id', '=', id)
    .returning(ENDPOINT)
    .executeTakeFirst();
}

/**
 * Enables a disabled endpoint again, with a clean failure record, and replays what it missed while
 * disabled, in one statement: the deliveries skipped for it, and a delivery of every event of its
 * kinds dispatched in the meantime (the dispatcher creates none for a disabled endpoint), enqueued
 * in its lane in order. The dispatch row is held FOR SHARE, so no dispatch pass runs in between.
 */
export async function enableEndpoint(db: Kysely<Database>, id: string): Promise<WebhookEndpoint | undefined> {
  if (!fitsInt8(id)) return undefined;
  const { rows } = await sql<WebhookEndpoint>`
    WITH cursor AS (SELECT position FROM webhook_dispatch FOR SHARE),
    -- NO KEY UPDATE: a dispatch pass inserting deliveries (their foreign key takes KEY SHARE) is not blocked.
    was AS (SELECT id, disabled_at, disabled_position, event_kinds FROM webhook_endpoint WHERE id = ${id} FOR NO KEY UPDATE),
    enabled AS (
      -- On probation again, like a new endpoint: it failed, or was stopped by hand.
      UPDATE webhook_endpoint w SET disabled_at = NULL, disabled_reason = NULL, disabled_position = NULL, consecutive_failures = 0, failing_since = NULL,
        fast_successes = 0
      FROM was WHERE w.id = was.id
      RETURNING w.id, w.url, w.secret, w.event_kinds::text[] AS event_kinds, w.created_at, w.consecutive_failures, w.failing_since, w.disabled_at, w.disabled_reason
    ),
    missed AS (
      INSERT INTO webhook_delivery (endpoint_id, event_position)
      SELECT was.id, e.position FROM was JOIN ${membershipEvents(db)} e ON e.kind = ANY (was.event_kinds)
      WHERE was.disabled_at IS NOT NULL AND e.position > was.disabled_position AND e.position <= (SELECT position FROM cursor)
      ON CONFLICT ON CONSTRAINT webhook_delivery_once DO NOTHING
      RETURNING id
    ),
    skipped AS (
      UPDATE webhook_delivery d SET status = 'PENDING', created_at = now(), delivered_at = NULL
      FROM was WHERE was.disabled_at IS NOT NULL AND d.endpoint_id = was.id AND d.status = 'FAILED' AND d.last_error = ${ENDPOINT_DISABLED}
      RETURNING d.id
    ),
    replayed AS (SELECT id, (row_number() OVER (ORDER BY id) - 1) / ${JOB_DELIVERIES} AS chunk FROM (SELECT id FROM missed UNION ALL SELECT id FROM skipped) r),
    jobs AS (
      SELECT graphile_worker.add_job(${DELIVER_TASK}, json_agg(id::text ORDER BY id), queue_name => ${laneOf(id)}, flags => ARRAY[${PROBATION_FLAG}::text])
      FROM replayed GROUP BY chunk
    )
    SELECT enabled.*, (SELECT count(*) FROM jobs) AS jobs FROM enabled
  `.execute(db);
  if (rows[0] === undefined) return undefined;
  const { jobs: _jobs, ...endpoint } = rows[0] as WebhookEndpoint & { jobs: string };
  return endpoint;
}
