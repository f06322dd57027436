import { sql, type Kysely } from 'kysely';
import type { Database } from '../schema.js';
import { WORKER_SCHEMA_REVISION } from '../migrations/worker-schema.js';
import { APP_WRITABLE_TABLES, grantAdvice, SERVICE_SCHEMA, TABLE_WRITES, WORKER_SCHEMA } from './app-privileges.js';

/** The connected role lacks a privilege the service needs; the message names it and the grant. */
export class MissingPrivilegeError extends Error {
  override name = 'MissingPrivilegeError';
}

/**
 * Before an instance serves: its role must hold every privilege of app-privileges.ts on the
 * objects that exist (a database not migrated yet has none to check), else the start is refused in
 * one line instead of a permission error from deep inside a part. The owner and a superuser hold
 * them all. graphile-worker's schema must exist unless the role could create it, and be at the
 * build's revision unless the role owns it (and so its worker could migrate it).
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
  if (rows.length > 0) {
    const role = rows[0]!.role;
    const more = rows.length > 1 ? ` (and ${rows.length - 1} more)` : '';
    throw new MissingPrivilegeError(`database role "${role}" lacks ${rows[0]!.missing}${more}: ${grantAdvice(role)}`);
  }
  // Only with the privileges held: reading graphile-worker's migrations needs them.
  const behind = await workerSchemaBehind(db);
  if (behind) throw new MissingPrivilegeError(behind);
}

/**
 * After an upgrade of graphile-worker its schema may be behind the build's, and its worker would
 * migrate it at start: a role that does not own the schema would fail deep inside the worker.
 * Null when the schema is missing (the check above covers it), current, or the role owns it.
 */
async function workerSchemaBehind(db: Kysely<Database>): Promise<string | null> {
  const { rows } = await sql<{ exists: boolean }>`SELECT to_regclass(${`${WORKER_SCHEMA}.migrations`}) IS NOT NULL AS exists`.execute(db);
  if (!rows[0]?.exists) return null;
  const { rows: state } = await sql<{ role: string; revision: number | null; owns: boolean }>`
    SELECT current_user AS role, (SELECT max(id) FROM graphile_worker.migrations) AS revision,
           pg_has_role(n.nspowner, 'USAGE') AS owns
      FROM pg_namespace n WHERE n.nspname = ${WORKER_SCHEMA}`.execute(db);
  const { role, revision, owns } = state[0]!;
  if (owns || (revision ?? 0) >= WORKER_SCHEMA_REVISION) return null;
  return `graphile-worker's schema is at revision ${revision ?? 0}, this build's graphile-worker needs ${WORKER_SCHEMA_REVISION}, and database role "${role}" cannot migrate it: run migrate as the owner first (\`npm run migrate -- --grant-to ${role}\`)`;
}
