import { Migrator, type Kysely } from 'kysely';
import type { Logger } from 'pino';
import { connectDatabase } from '../database.js';
import { migrations } from './index.js';
import { refuseNewerSchema, schemaState } from './schema-version.js';

/** Applies pending migrations. Kysely takes a database lock, so concurrent starts are safe. */
export async function migrateToLatest(db: Kysely<any>): Promise<string[]> {
  const migrator = new Migrator({ db, provider: { getMigrations: async () => migrations } });
  const { error, results } = await migrator.migrateToLatest();
  if (error) throw error instanceof Error ? error : new Error(String(error));
  return (results ?? []).filter((result) => result.status === 'Success').map((result) => result.migrationName);
}

/**
 * Migrates over a short-lived session of its own: give it the listen URL, never a transaction
 * pooler. Kysely's migration lock is a session advisory lock (pg_advisory_lock … pg_advisory_unlock
 * in separate statements); through a pooler the unlock may reach another server session and the
 * lock would leak, holding up every later migration. `npm run migrate` and the schema dump use it.
 * A database a newer build migrated is refused (SchemaVersionError), never migrated "back".
 */
export async function migrateOverSession(sessionUrl: string, logger: Logger): Promise<string[]> {
  const session = connectDatabase({ url: sessionUrl, poolMax: 1, logger });
  try {
    refuseNewerSchema(await schemaState(session.db));
    return await migrateToLatest(session.db);
  } finally {
    await session.close();
  }
}
