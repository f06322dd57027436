import { sql, type Kysely } from 'kysely';
import type { Compatibility } from './compatibility.js';
import { applySqlFiles } from './sql-files.js';

/** expand: A new table and function. */
export const compatibility: Compatibility = 'expand';

/**
 * Fair share (src/budgets): one token bucket per principal (and per user for membership changes),
 * shared by every instance, which lease slices of it through fair_share_lease. Unlogged: a bucket
 * is a few seconds of state; after a crash every bucket starts full again, as a new one would.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE UNLOGGED TABLE fair_share_bucket (
      key text PRIMARY KEY,
      tokens float8 NOT NULL,
      updated_at timestamptz NOT NULL
    )`.execute(db);
  await sql`CREATE INDEX fair_share_bucket_updated_idx ON fair_share_bucket (updated_at)`.execute(db);
  await applySqlFiles(db, [['fair_share_lease', 1]]);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP FUNCTION fair_share_lease(text[], float8[], float8[], float8[], float8[])`.execute(db);
  await sql`DROP TABLE fair_share_bucket`.execute(db);
}
