import { sql, type Kysely } from 'kysely';
import type { Database } from '../schema.js';
import { APP_WRITABLE_TABLES, SERVICE_SCHEMA, WORKER_SCHEMA } from './app-privileges.js';

/**
 * Gives `role` exactly the privileges of app-privileges.ts, as the owner, in one transaction: what
 * it held on our objects is revoked first, so a grant made by hand (a write on a boundary table)
 * does not survive. Run after every migrate, so the tables and functions a migration adds are
 * covered; default privileges are not used, since a new table must not become writable unnoticed.
 */
export async function grantAppPrivileges(db: Kysely<Database>, role: string): Promise<void> {
  const grantee = sql.id(role);
  const schemas = sql.join([SERVICE_SCHEMA, WORKER_SCHEMA].map((schema) => sql.id(schema)));
  const ours = sql.id(SERVICE_SCHEMA);
  const worker = sql.id(WORKER_SCHEMA);
  const writable = sql.join(APP_WRITABLE_TABLES.map((table) => sql.id(SERVICE_SCHEMA, table)));
  await db.transaction().execute(async (trx) => {
    const { rows } = await sql<{ database: string; owner: boolean }>`
      SELECT current_database() AS database, pg_has_role(${role}, d.datdba, 'USAGE') AS owner
        FROM pg_database d WHERE d.datname = current_database()`.execute(trx);
    // The owner (or a member of it) holds everything anyway; revoking would strip the owner itself.
    if (rows[0]!.owner) throw new Error(`--grant-to ${role}: that role owns the database; name the role the service runs as`);
    const statements = [
      sql`REVOKE ALL ON ALL TABLES IN SCHEMA ${schemas} FROM ${grantee}`,
      sql`REVOKE ALL ON ALL SEQUENCES IN SCHEMA ${schemas} FROM ${grantee}`,
      sql`REVOKE ALL ON ALL FUNCTIONS IN SCHEMA ${schemas} FROM ${grantee}`,
      sql`REVOKE ALL ON SCHEMA ${schemas} FROM ${grantee}`,
      sql`GRANT CONNECT ON DATABASE ${sql.id(rows[0]!.database)} TO ${grantee}`,
      sql`GRANT USAGE ON SCHEMA ${schemas} TO ${grantee}`,
      sql`GRANT SELECT ON ALL TABLES IN SCHEMA ${ours} TO ${grantee}`,
      sql`GRANT INSERT, UPDATE, DELETE ON ${writable} TO ${grantee}`,
      sql`GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA ${schemas} TO ${grantee}`,
      sql`GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA ${worker} TO ${grantee}`,
      sql`GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA ${worker} TO ${grantee}`,
    ];
    for (const statement of statements) await statement.execute(trx);
    // The writable tables' id sequences (nextval on insert); the boundary tables' stay the functions'.
    const { rows: sequences } = await sql<{ sequence: string }>`
      SELECT DISTINCT d.objid::regclass::text AS sequence
        FROM pg_depend d JOIN pg_class s ON s.oid = d.objid AND s.relkind = 'S'
       WHERE d.refobjid = ANY(${APP_WRITABLE_TABLES.map((table) => `${SERVICE_SCHEMA}.${table}`)}::regclass[])
         AND d.deptype IN ('a', 'i')`.execute(trx);
    for (const { sequence } of sequences) await sql`GRANT USAGE ON SEQUENCE ${sql.raw(sequence)} TO ${grantee}`.execute(trx);
    // graphile-worker turns row-level security on for its private tables with no policy: only their
    // owner sees a row. The running role gets one policy allowing it every row of them.
    const { rows: secured } = await sql<{ name: string }>`
      SELECT c.relname AS name FROM pg_class c WHERE c.relnamespace = ${WORKER_SCHEMA}::regnamespace AND c.relrowsecurity`.execute(trx);
    for (const { name } of secured) {
      const table = sql.id(WORKER_SCHEMA, name);
      await sql`DROP POLICY IF EXISTS service_role ON ${table}`.execute(trx);
      await sql`CREATE POLICY service_role ON ${table} TO ${grantee} USING (true) WITH CHECK (true)`.execute(trx);
    }
  });
}
