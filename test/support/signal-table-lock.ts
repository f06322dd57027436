import type pg from 'pg';

/** Takes the lock that inserts into `signal` wait behind, in a transaction the caller ends (ROLLBACK). */
export async function lockSignalTable(client: pg.Client): Promise<void> {
  await client.query('BEGIN; LOCK TABLE signal IN SHARE ROW EXCLUSIVE MODE');
}

/** How many sessions of this database wait for a lock on `signal`. */
export async function signalLockWaiters(client: pg.Client): Promise<number> {
  const { rows } = await client.query(
    `SELECT count(*)::int AS n FROM pg_locks WHERE database = (SELECT oid FROM pg_database WHERE datname = current_database()) AND NOT granted AND relation = 'signal'::regclass`,
  );
  return rows[0].n;
}
