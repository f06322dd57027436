import { sql, type Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import { membershipEvents } from '../membership/membership-events.store.js';
import { DELIVER_TASK, JOB_DELIVERIES, LANE_PREFIX, PROBATION_FLAG } from './queue.store.js';

/** The dispatcher's cursor and the deliveries it creates (one of the webhook stores, endpoint.store.ts says which). */

/**
 * One page of events, in one statement (no transaction left idle between round trips); answers
 * how many were dispatched (0 when another instance holds the cursor). The cursor is a scalar
 * subquery so the page is an index range from it (joined, every event ever was scanned). One job
 * per endpoint and chunk of its deliveries, in the endpoint's lane (queue.store.ts), not one per
 * delivery: each job costs commits the leave's commit queues behind. All of a page's jobs in one
 * call of graphile-worker's bulk `add_jobs` (its SQL docs: add_job is add_jobs of one spec, and
 * ten add_job calls cost a pass ~15 ms where one add_jobs costs ~3.5). The jobs CTE is read by the
 * final SELECT, so add_jobs runs. The jobs of an endpoint on probation (fewer than
 * `probationSuccesses` quick successes in a row) carry PROBATION_FLAG.
 */
export async function dispatchPage(db: Kysely<Database>, page: number, probationSuccesses: number): Promise<number> {
  const { rows } = await sql<{ dispatched: string; jobs: string }>`
    WITH cursor AS (SELECT d.position FROM webhook_dispatch d FOR UPDATE SKIP LOCKED),
    page AS (
      SELECT e.position, e.kind FROM ${membershipEvents(db)} e
      WHERE e.position > (SELECT c.position FROM cursor c) ORDER BY e.position LIMIT ${page}
    ),
    created AS (
      INSERT INTO webhook_delivery (endpoint_id, event_position)
      SELECT w.id, p.position FROM page p JOIN webhook_endpoint w ON p.kind = ANY (w.event_kinds) AND w.disabled_at IS NULL
      ON CONFLICT ON CONSTRAINT webhook_delivery_once DO NOTHING
      RETURNING id, endpoint_id
    ),
    chunked AS (SELECT id, endpoint_id, (row_number() OVER (PARTITION BY endpoint_id ORDER BY id) - 1) / ${JOB_DELIVERIES} AS chunk FROM created),
    jobs AS (
      SELECT j.id FROM graphile_worker.add_jobs((
        SELECT array_agg(ROW(${DELIVER_TASK}::text, g.ids, ${LANE_PREFIX}::text || g.endpoint_id, NULL, NULL, NULL, NULL,
          CASE WHEN w.fast_successes < ${probationSuccesses} THEN ARRAY[${PROBATION_FLAG}::text] END)::graphile_worker.job_spec)
        FROM (SELECT endpoint_id, json_agg(id::text ORDER BY id) AS ids FROM chunked GROUP BY endpoint_id, chunk) g
        JOIN webhook_endpoint w ON w.id = g.endpoint_id
      )) j
    ),
    moved AS (
      UPDATE webhook_dispatch SET position = (SELECT max(p.position) FROM page p) WHERE EXISTS (SELECT 1 FROM page) RETURNING 1
    )
    SELECT (SELECT count(*) FROM page) AS dispatched, (SELECT count(*) FROM jobs) AS jobs, (SELECT count(*) FROM moved) AS moved
  `.execute(db);
  return Number(rows[0]?.dispatched ?? 0);
}

/** Age of the oldest event past the dispatch cursor (0 when caught up): the primary key's range. */
export async function dispatchLagSeconds(db: Kysely<Database>): Promise<number> {
  const { rows } = await sql<{ lag: number }>`
    SELECT coalesce(extract(epoch FROM now() - min(e.recorded_at)), 0)::float8 AS lag FROM ${membershipEvents(db)} e
    WHERE e.position > coalesce((SELECT position FROM webhook_dispatch), 0)`.execute(db);
  return rows[0]!.lag;
}
