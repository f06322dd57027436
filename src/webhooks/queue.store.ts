import { sql, type Kysely } from 'kysely';
import type { Database } from '../db/schema.js';

/**
 * The webhook jobs on graphile-worker's queue (its own schema, installed by its runner): the one
 * place that names the task, the lanes and graphile-worker's SQL functions.
 */
export const DELIVER_TASK = 'deliver_webhook';
/** Most deliveries one job attempts (in order, one endpoint's). */
export const JOB_DELIVERIES = 50;

/**
 * The flag of jobs whose endpoint was on probation when they were queued: an instance whose slow
 * lane is full does not take them (graphile-worker's forbiddenFlags), so they wait in the queue,
 * not in a worker. A job queued without it whose endpoint is on probation by then, finding the
 * lane full, is queued again with it (delivery-attempt.ts).
 */
export const PROBATION_FLAG = 'webhook:probation';

/** How lanes are named (laneOf), as the dispatcher's SQL spells them too. */
export const LANE_PREFIX = 'webhook:';

/**
 * An endpoint's lane: graphile-worker runs the jobs of one named queue one at a time, across every
 * instance, so an endpoint never holds more than one delivery worker, however slow it is.
 */
export function laneOf(endpointId: string): string {
  return `${LANE_PREFIX}${endpointId}`;
}

/** Enqueues one job of deliveries (one endpoint's, in order) in its lane; flagged when the endpoint is on probation. */
export async function enqueueDeliveries(
  db: Kysely<Database>,
  endpointId: string,
  deliveryIds: string[],
  runAt?: Date,
  probation = false,
): Promise<void> {
  await sql`
    SELECT graphile_worker.add_job(${DELIVER_TASK}, ${JSON.stringify(deliveryIds)}::json, queue_name => ${laneOf(endpointId)},
      run_at => ${runAt ?? null}::timestamptz, flags => ${probation ? [PROBATION_FLAG] : null}::text[])
  `.execute(db);
}

/** The two keys of a worker's session advisory lock: this namespace and the hash of its worker id. */
export const WORKER_LOCK_NAMESPACE = 1129073006;

/**
 * Releases the jobs (and lanes) held by workers that died: a live worker holds a session advisory
 * lock named by its id (worker-liveness.ts), so a job whose worker's lock nobody holds belongs to
 * a dead one. Only jobs locked more than `graceMs` ago, so a worker just started has taken its lock
 * first. Answers the worker ids released.
 */
export async function releaseDeadWorkers(db: Kysely<Database>, graceMs: number): Promise<string[]> {
  const { rows } = await sql<{ workers: string[] | null }>`
    WITH dead AS (
      SELECT DISTINCT j.locked_by FROM graphile_worker.jobs j
      WHERE j.locked_by IS NOT NULL AND j.locked_at < now() - make_interval(secs => ${graceMs / 1000})
        AND NOT EXISTS (
          SELECT 1 FROM pg_locks l
          WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 2
            AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
            AND l.classid = ${WORKER_LOCK_NAMESPACE}::int::oid AND l.objid = hashtext(j.locked_by)::oid
        )
    ),
    released AS (SELECT graphile_worker.force_unlock_workers(array_agg(locked_by)) FROM dead HAVING count(*) > 0)
    SELECT (SELECT array_agg(locked_by) FROM dead) AS workers, (SELECT count(*) FROM released) AS released
  `.execute(db);
  return rows[0]?.workers ?? [];
}
