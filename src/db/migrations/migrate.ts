import { Migrator, type Kysely } from 'kysely';
import type { Logger } from 'pino';
import { connectDatabase, type DatabaseHandle } from '../database.js';
import { migrations } from './index.js';
import { refuseNewerSchema, schemaState } from './schema-version.js';
import { migrateWorkerSchema } from './worker-schema.js';
import { grantAppPrivileges } from '../roles/grant.js';

/** Applies pending migrations. Kysely takes a database lock, so concurrent starts are safe. */
export async function migrateToLatest(db: Kysely<any>): Promise<string[]> {
  const migrator = new Migrator({ db, provider: { getMigrations: async () => migrations } });
  const { error, results } = await migrator.migrateToLatest();
  if (error) throw error instanceof Error ? error : new Error(String(error));
  return (results ?? []).filter((result) => result.status === 'Success').map((result) => result.migrationName);
}

/** Our migrations, then graphile-worker's schema: everything schema-level, as the migrating role. `session` needs two connections. */
export async function migrateEverything(session: DatabaseHandle, logger: Logger): Promise<string[]> {
  const applied = await migrateToLatest(session.db);
  await migrateWorkerSchema(session.pool, logger);
  return applied;
}

/**
 * Migrates over a short-lived session of its own: give it the listen URL, never a transaction
 * pooler. Kysely's migration lock is a session advisory lock (pg_advisory_lock … pg_advisory_unlock
 * in separate statements); through a pooler the unlock may reach another server session and the
 * lock would leak, holding up every later migration. `npm run migrate` and the schema dump use it.
 * A database a newer build migrated is refused (SchemaVersionError), never migrated "back".
 * `grantTo`: the running service's role, granted exactly what it needs afterwards (src/db/roles/).
 */
export async function migrateOverSession(sessionUrl: string, logger: Logger, grantTo?: string): Promise<string[]> {
  const session = connectDatabase({ url: sessionUrl, poolMax: 2, logger });
  try {
    refuseNewerSchema(await schemaState(session.db));
    const applied = await migrateEverything(session, logger);
    if (grantTo) await grantAppPrivileges(session.db, grantTo);
    return applied;
  } finally {
    await session.close();
  }
}
