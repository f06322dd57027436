import pg from 'pg';

/**
 * Every table's row count and checksum, but the fair-share budget's buckets: each instance leases
 * from them in the background, for what any request spent (refused or not).
 */
export async function fingerprint(db: pg.Client): Promise<Record<string, string>> {
  const { rows: tables } = await db.query(
    `SELECT table_name FROM information_schema.tables
      WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' AND table_name <> 'fair_share_bucket'
      ORDER BY 1`,
  );
  const prints: Record<string, string> = {};
  for (const { table_name: table } of tables as { table_name: string }[]) {
    const { rows } = await db.query(
      `SELECT count(*) || ':' || md5(coalesce(string_agg(t::text, '|' ORDER BY t::text), '')) AS print
         FROM ${pg.escapeIdentifier(table)} t`,
    );
    prints[table] = rows[0].print;
  }
  return prints;
}
