import { sql, type Kysely } from 'kysely';
import type { Database } from './schema.js';

/**
 * Readiness: the database accepts writes. A standby, a demoted primary or a database set to
 * `default_transaction_read_only` answers `SELECT 1` but refuses every leave and signal.
 */
export async function acceptsWrites(db: Kysely<Database>): Promise<boolean> {
  const { rows } = await sql<{
    writable: boolean;
  }>`SELECT NOT pg_is_in_recovery() AND current_setting('transaction_read_only') = 'off' AS writable`.execute(db);
  return rows[0]?.writable === true;
}
