import { sql, type Kysely } from 'kysely';
import type { Compatibility } from './compatibility.js';
import { applySqlFiles } from './sql-files.js';

/** expand: New tables, a column, functions and a trigger; the view keeps its columns. */
export const compatibility: Compatibility = 'expand';

/**
 * Purges: removing a LEFT user's ledger entries below their boundary, exactly, from the ledger and
 * the aggregates, with a durable receipt that is also the job's state (see src/purge/).
 *
 * A purged community entry stays in `signal` (the user's own record) with `purge_id` set, and
 * leaves the `contribution` view; `forwarded` keeps saying what happened at ingest, so the
 * gated-signal counts of leave windows are unchanged by a purge.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TYPE purge_status AS ENUM ('RUNNING', 'FINISHED');

    CREATE TABLE community_purge (
      id bigserial PRIMARY KEY,
      user_id u64 NOT NULL,
      -- The boundary used: entries with at_ns below it are removed.
      boundary_ns bigint NOT NULL,
      -- The previous purge's boundary (0 for the first): everything below it was already removed.
      from_ns bigint NOT NULL,
      requested_at timestamptz NOT NULL DEFAULT now(),
      finished_at timestamptz,
      status purge_status NOT NULL,
      removed_so_far bigint NOT NULL DEFAULT 0,
      weight_micros_removed numeric NOT NULL DEFAULT 0,
      chunks int NOT NULL DEFAULT 0,
      -- The last signal a committed chunk took, in (at_ns, id) order.
      cursor_at_ns bigint NOT NULL,
      cursor_signal_id bigint NOT NULL,
      CONSTRAINT finished_at_iff_finished CHECK ((status = 'FINISHED') = (finished_at IS NOT NULL))
    );
    CREATE INDEX community_purge_user_idx ON community_purge (user_id, id);
    CREATE UNIQUE INDEX community_purge_one_running_idx ON community_purge (user_id) WHERE status = 'RUNNING';

    -- What a purge removed per target: cohort_id '' is the community aggregate (ids are never empty).
    CREATE TABLE community_purge_target (
      purge_id bigint NOT NULL REFERENCES community_purge (id) ON DELETE CASCADE,
      cohort_id text NOT NULL,
      entries bigint NOT NULL,
      weight_micros numeric NOT NULL,
      CONSTRAINT community_purge_target_pkey PRIMARY KEY (purge_id, cohort_id)
    );

    ALTER TABLE signal ADD COLUMN purge_id bigint;

    CREATE OR REPLACE VIEW contribution AS
      SELECT s.user_id, s.id AS signal_id, NULL::text AS cohort_id, s.item_id, s.weight_micros, s.at_ns
        FROM signal s WHERE s.forwarded AND s.purge_id IS NULL
      UNION ALL
      SELECT c.user_id, c.signal_id, c.cohort_id, c.item_id, c.weight_micros, c.at_ns
        FROM cohort_contribution c;
  `.execute(db);
  await applySqlFiles(db, [
    ['request_community_purge', 1],
    ['run_community_purge_chunk', 1],
    ['community_membership_purge_guard', 1],
    ['verify_community_aggregates', 1],
  ]);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    DROP TRIGGER community_membership_purge_guard ON community_membership;
    DROP FUNCTION community_membership_purge_guard, verify_community_aggregates, run_community_purge_chunk, request_community_purge;
    CREATE OR REPLACE VIEW contribution AS
      SELECT s.user_id, s.id AS signal_id, NULL::text AS cohort_id, s.item_id, s.weight_micros, s.at_ns
        FROM signal s WHERE s.forwarded
      UNION ALL
      SELECT c.user_id, c.signal_id, c.cohort_id, c.item_id, c.weight_micros, c.at_ns
        FROM cohort_contribution c;
    ALTER TABLE signal DROP COLUMN purge_id;
    DROP TABLE community_purge_target, community_purge;
    DROP TYPE purge_status;
  `.execute(db);
}
