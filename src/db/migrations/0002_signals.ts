import { sql, type Kysely } from 'kysely';
import type { Compatibility } from './compatibility.js';

/** expand: New tables, a view and a type only. */
export const compatibility: Compatibility = 'expand';

/**
 * Signals (every one stored for its owner), the contributions ledger (what reached a shared
 * aggregate, stamped on the database clock: forwarded signals plus cohort attributions) and the
 * aggregates themselves.
 *
 * Weights are fixed-point micro-units (6 decimals) so aggregates equal the ledger sum exactly.
 * Aggregates are split into shards (one per writing connection) so that a hot item does not
 * serialize ingestion on one row lock; readers sum the shards.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TYPE signal_kind AS ENUM ('VIEW', 'CLICK', 'LIKE', 'SHARE', 'SAVE', 'SKIP', 'DISLIKE');

    -- forwarded: the signal reached the community aggregate; it is then itself the community entry
    -- of the contributions ledger (one row instead of two on the hot path).
    CREATE TABLE signal (
      id bigserial PRIMARY KEY,
      user_id u64 NOT NULL,
      item_id text NOT NULL,
      kind signal_kind NOT NULL,
      weight_micros bigint NOT NULL,
      occurred_at timestamptz,
      surface text,
      cohort_ids text[] NOT NULL DEFAULT '{}',
      at_ns bigint NOT NULL,
      forwarded boolean NOT NULL
    );
    CREATE INDEX signal_user_at_idx ON signal (user_id, at_ns, id);
    CREATE INDEX signal_gated_idx ON signal (user_id, at_ns) WHERE NOT forwarded;

    -- One row per cohort a forwarded signal reached. signal_id points at signal(id), written in the
    -- same statement; no foreign key, whose per-row check and row lock would slow ingestion.
    CREATE TABLE cohort_contribution (
      signal_id bigint NOT NULL,
      cohort_id text NOT NULL,
      user_id u64 NOT NULL,
      item_id text NOT NULL,
      weight_micros bigint NOT NULL,
      at_ns bigint NOT NULL,
      PRIMARY KEY (signal_id, cohort_id)
    );
    CREATE INDEX cohort_contribution_user_at_idx ON cohort_contribution (user_id, at_ns, signal_id);

    -- The contributions ledger: everything that reached a shared aggregate. cohort_id NULL is the
    -- community aggregate.
    CREATE VIEW contribution AS
      SELECT s.user_id, s.id AS signal_id, NULL::text AS cohort_id, s.item_id, s.weight_micros, s.at_ns
        FROM signal s WHERE s.forwarded
      UNION ALL
      SELECT c.user_id, c.signal_id, c.cohort_id, c.item_id, c.weight_micros, c.at_ns
        FROM cohort_contribution c;

    CREATE TABLE community_item_aggregate (
      item_id text NOT NULL,
      shard int2 NOT NULL,
      signal_count bigint NOT NULL,
      weight_micros_sum numeric NOT NULL,
      PRIMARY KEY (item_id, shard)
    );

    CREATE TABLE cohort_item_aggregate (
      cohort_id text NOT NULL,
      item_id text NOT NULL,
      shard int2 NOT NULL,
      signal_count bigint NOT NULL,
      weight_micros_sum numeric NOT NULL,
      PRIMARY KEY (cohort_id, item_id, shard)
    );
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    DROP VIEW contribution;
    DROP TABLE cohort_item_aggregate, community_item_aggregate, cohort_contribution, signal;
    DROP TYPE signal_kind;
  `.execute(db);
}
