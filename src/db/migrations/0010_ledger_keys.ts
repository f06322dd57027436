import { sql, type Kysely } from 'kysely';
import type { Compatibility } from './compatibility.js';
import { applySqlFiles } from './sql-files.js';

/** expand: Keys and indexes no build names; the chunk function keeps its signature. */
export const compatibility: Compatibility = 'expand';

/**
 * One index fewer per ledger row: `signal` and `cohort_contribution` each had a primary key led by
 * (user_id, id) and a second index led by (user_id, at_ns) for the keyset reads (contributions,
 * purge chunks, the leave fence). The keys now lead with (user_id, at_ns) and serve both, so an
 * insert updates one btree less; they are also the keys partitioning by at_ns needs
 * (docs/scaling.md). Signal ids stay unique by their sequence, and a signal's cohort rows carry its
 * at_ns, so (user_id, at_ns, signal_id, cohort_id) is as unique as (user_id, signal_id, cohort_id).
 * The purge chunk finds rows by the new keys (run_community_purge_chunk v2).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    ALTER TABLE signal DROP CONSTRAINT signal_pkey, ADD CONSTRAINT signal_pkey PRIMARY KEY (user_id, at_ns, id);
    DROP INDEX signal_user_at_idx;
    ALTER TABLE cohort_contribution DROP CONSTRAINT cohort_contribution_pkey,
      ADD CONSTRAINT cohort_contribution_pkey PRIMARY KEY (user_id, at_ns, signal_id, cohort_id);
    DROP INDEX cohort_contribution_user_at_idx;
  `.execute(db);
  await applySqlFiles(db, [['run_community_purge_chunk', 2]]);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    ALTER TABLE signal DROP CONSTRAINT signal_pkey, ADD CONSTRAINT signal_pkey PRIMARY KEY (user_id, id);
    CREATE INDEX signal_user_at_idx ON signal (user_id, at_ns, id);
    ALTER TABLE cohort_contribution DROP CONSTRAINT cohort_contribution_pkey,
      ADD CONSTRAINT cohort_contribution_pkey PRIMARY KEY (user_id, signal_id, cohort_id);
    CREATE INDEX cohort_contribution_user_at_idx ON cohort_contribution (user_id, at_ns, signal_id);
  `.execute(db);
  await applySqlFiles(db, [['run_community_purge_chunk', 1]]);
}
