import { sql, type Kysely } from 'kysely';

/**
 * Signals (every one stored for its owner), the contributions ledger (what reached a shared
 * aggregate, stamped on the database clock) and the aggregates themselves.
 *
 * Weights are fixed-point micro-units (6 decimals) so aggregates equal the ledger sum exactly.
 * Aggregates are split into shards (one per writing connection) so that a hot item does not
 * serialize ingestion on one row lock; readers sum the shards.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TYPE signal_kind AS ENUM ('VIEW', 'CLICK', 'LIKE', 'SHARE', 'SAVE', 'SKIP', 'DISLIKE');

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
    CREATE INDEX signal_user_at_idx ON signal (user_id, at_ns);
    CREATE INDEX signal_gated_idx ON signal (user_id, at_ns) WHERE NOT forwarded;

    -- cohort_id NULL is the community aggregate. signal_id points at signal(id), written in the same
    -- statement; no foreign key, whose per-row check and row lock would double the cost of ingestion.
    CREATE TABLE contribution (
      id bigserial PRIMARY KEY,
      user_id u64 NOT NULL,
      signal_id bigint NOT NULL,
      cohort_id text,
      item_id text NOT NULL,
      weight_micros bigint NOT NULL,
      at_ns bigint NOT NULL
    );
    CREATE INDEX contribution_user_at_idx ON contribution (user_id, at_ns, id);

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
    DROP TABLE cohort_item_aggregate, community_item_aggregate, contribution, signal;
    DROP TYPE signal_kind;
  `.execute(db);
}
