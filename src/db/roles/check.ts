import { sql, type Kysely } from 'kysely';
import type { Database } from '../schema.js';
import { APP_WRITABLE_TABLES, grantAdvice, SERVICE_SCHEMA, TABLE_WRITES, WORKER_SCHEMA } from './app-privileges.js';

/** The connected role lacks a privilege the service needs; the message names it and the grant. */
export class MissingPrivilegeError extends Error {
  override name = 'MissingPrivilegeError';
}

/**
 * Before an instance serves: its role must hold every privilege of app-privileges.ts on the
 * objects that exist (a database not migrated yet has none to check), else the start is refused in
 * one line instead of a permission error from deep inside a part. The owner and a superuser hold
 * them all. graphile-worker's schema must exist unless the role could create it.
 */
export async function refuseMissingPrivileges(db: Kysely<Database>): Promise<void> {
  const schemas = [SERVICE_SCHEMA, WORKER_SCHEMA];
  const { rows } = await sql<{ role: string; missing: string }>`
    WITH relations AS (
      SELECT c.oid, n.nspname, c.relname, c.relkind FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
       WHERE n.nspname = ANY(${schemas}::text[]) AND c.relkind IN ('r', 'p', 'v')
    ), needed(what, held) AS (
      SELECT format('USAGE on schema %I', s), has_schema_privilege(s, 'USAGE')
        FROM unnest(${schemas}::text[]) s WHERE to_regnamespace(s) IS NOT NULL
      UNION ALL
      SELECT format('SELECT on %I.%I', nspname, relname), has_table_privilege(oid, 'SELECT') FROM relations
      UNION ALL
      SELECT format('%s on %I.%I', p, nspname, relname), has_table_privilege(oid, p)
        FROM relations, unnest(${[...TABLE_WRITES]}::text[]) p
       WHERE relkind <> 'v' AND (nspname = ${WORKER_SCHEMA} OR (nspname = ${SERVICE_SCHEMA} AND relname = ANY(${[...APP_WRITABLE_TABLES]}::text[])))
      UNION ALL
      SELECT format('EXECUTE on function %s', p.oid::regprocedure), has_function_privilege(p.oid, 'EXECUTE')
        FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname = ANY(${schemas}::text[])
      UNION ALL
      SELECT format('CREATE on database %I (graphile-worker''s schema is not installed)', current_database()), false
       WHERE to_regnamespace(${WORKER_SCHEMA}) IS NULL AND NOT has_database_privilege(current_database(), 'CREATE')
    )
    SELECT current_user AS role, what AS missing FROM needed WHERE NOT held ORDER BY what`.execute(db);
  if (rows.length === 0) return;
  const role = rows[0]!.role;
  const more = rows.length > 1 ? ` (and ${rows.length - 1} more)` : '';
  throw new MissingPrivilegeError(`database role "${role}" lacks ${rows[0]!.missing}${more}: ${grantAdvice(role)}`);
}
