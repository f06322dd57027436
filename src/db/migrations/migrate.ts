import { Migrator, type Kysely, type MigrationResultSet } from 'kysely';
import type { Logger } from 'pino';
import { connectDatabase, type DatabaseHandle } from '../database.js';
import { grantAppPrivileges } from '../roles/grant.js';
import { migrateWorkerSchema } from './worker-schema.js';
import { ensureCompatibilityTable, recording, type Compatibility } from './compatibility.js';
import { migrations } from './index.js';
import { refuseNewerSchema, schemaState, warnNewerSchema } from './schema-version.js';
import { refuseStepBack } from './step-back.js';

const DECLARATIONS: Record<string, Compatibility> = Object.fromEntries(
  Object.entries(migrations).map(([name, migration]) => [name, migration.compatibility]),
);

/** Kysely's migrator over this build's migrations, each recording its declaration (compatibility.ts). */
async function migrator(db: Kysely<any>): Promise<Migrator> {
  await ensureCompatibilityTable(db, DECLARATIONS);
  const recorded = Object.fromEntries(Object.entries(migrations).map(([name, migration]) => [name, recording(name, migration)]));
  return new Migrator({ db, provider: { getMigrations: async () => recorded } });
}

function succeeded({ error, results }: MigrationResultSet): string[] {
  if (error) throw error instanceof Error ? error : new Error(String(error));
  return (results ?? []).filter((result) => result.status === 'Success').map((result) => result.migrationName);
}

/** Applies pending migrations. Kysely takes a database lock, so concurrent starts are safe. */
export async function migrateToLatest(db: Kysely<any>): Promise<string[]> {
  return succeeded(await (await migrator(db)).migrateToLatest());
}

/**
 * Steps the schema back to `target` by running the `down()`s of the migrations after it, newest
 * first; refused (SchemaVersionError) unless every one of them is `expand`. Returns those undone.
 */
export async function stepBackTo(db: Kysely<any>, target: string): Promise<string[]> {
  refuseStepBack(await schemaState(db), target);
  return succeeded(await (await migrator(db)).migrateTo(target));
}

/** Our migrations, then graphile-worker's schema: everything schema-level, as the migrating role. `session` needs two connections. */
export async function migrateEverything(session: DatabaseHandle, logger: Logger): Promise<string[]> {
  const applied = await migrateToLatest(session.db);
  await migrateWorkerSchema(session.pool, logger);
  return applied;
}

/** Migrates to this build's latest, unless a newer build's (expand) migrations are there already. */
async function migrateUnlessNewer(session: DatabaseHandle, logger: Logger): Promise<string[]> {
  const state = await schemaState(session.db);
  const newer = refuseNewerSchema(state);
  warnNewerSchema(newer, state, logger);
  return newer.length > 0 ? [] : await migrateEverything(session, logger);
}

/**
 * Migrates over a short-lived session of its own: give it the listen URL, never a transaction
 * pooler. Kysely's migration lock is a session advisory lock (pg_advisory_lock … pg_advisory_unlock
 * in separate statements); through a pooler the unlock may reach another server session and the
 * lock would leak, holding up every later migration. `npm run migrate` and the schema dump use it.
 * A database a newer build migrated is left as it is when its newer migrations are all `expand`,
 * refused (SchemaVersionError) otherwise, never migrated "back" (that is `--to`, with `stepBackTo`).
 * `grantTo`: the running service's role, granted exactly what it needs afterwards (src/db/roles/).
 */
export async function migrateOverSession(
  sessionUrl: string,
  logger: Logger,
  options: { to?: string; grantTo?: string } = {},
): Promise<string[]> {
  const session = connectDatabase({ url: sessionUrl, poolMax: 2, logger });
  try {
    const changed = options.to !== undefined ? await stepBackTo(session.db, options.to) : await migrateUnlessNewer(session, logger);
    if (options.grantTo) await grantAppPrivileges(session.db, options.grantTo);
    return changed;
  } finally {
    await session.close();
  }
}
