import { sql, type Kysely } from 'kysely';
import type { Compatibility } from './compatibility.js';

/** expand: New primary keys; no build names them (rows are written by the functions). */
export const compatibility: Compatibility = 'expand';

/**
 * Every table holding a user's rows has user_id in its primary key, so distributing them by user
 * (Citus: co-located with community_membership) or partitioning them later needs no key rewrite of
 * tables that have grown large (docs/scaling.md). Signal ids stay unique by their sequence.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE signal DROP CONSTRAINT signal_pkey, ADD CONSTRAINT signal_pkey PRIMARY KEY (user_id, id)`.execute(db);
  await sql`ALTER TABLE cohort_contribution DROP CONSTRAINT cohort_contribution_pkey,
    ADD CONSTRAINT cohort_contribution_pkey PRIMARY KEY (user_id, signal_id, cohort_id)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE signal DROP CONSTRAINT signal_pkey, ADD CONSTRAINT signal_pkey PRIMARY KEY (id)`.execute(db);
  await sql`ALTER TABLE cohort_contribution DROP CONSTRAINT cohort_contribution_pkey,
    ADD CONSTRAINT cohort_contribution_pkey PRIMARY KEY (signal_id, cohort_id)`.execute(db);
}
