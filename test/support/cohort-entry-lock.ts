import type pg from 'pg';

/**
 * Locks a user's `offset`-th cohort entry (in key order) in a transaction `client` keeps open until
 * it ends it: a purge chunk that reaches the entry waits there. The row is found apart, because rows
 * an OFFSET skips under FOR UPDATE are locked too.
 */
export async function lockCohortEntry(client: pg.Client, userId: string, offset: number): Promise<void> {
  await client.query('SET idle_in_transaction_session_timeout = 0; BEGIN');
  await client.query(
    `SELECT 1 FROM cohort_contribution WHERE (user_id, at_ns, signal_id, cohort_id) = (SELECT user_id, at_ns, signal_id, cohort_id
       FROM cohort_contribution WHERE user_id = $1 ORDER BY at_ns, signal_id, cohort_id OFFSET $2 LIMIT 1) FOR UPDATE`,
    [userId, offset],
  );
}
