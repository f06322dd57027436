import { sql, type Kysely } from 'kysely';
import type { Logger } from 'pino';
import { recordedCompatibility, type Compatibility } from './compatibility.js';
import { migrations } from './index.js';

/** The database's schema does not match this build's migrations; the message names both versions. */
export class SchemaVersionError extends Error {
  override name = 'SchemaVersionError';
}

/** Where the database stands against the migrations this build knows (src/db/migrations/index.ts). */
export interface SchemaState {
  applied: string[];
  /** Known here, not applied there. */
  pending: string[];
  /** Applied there, unknown here: a newer build migrated this database. */
  unknown: string[];
  /** The declarations the database recorded for `unknown` (a name without one is missing). */
  unknownCompatibility: Map<string, Compatibility>;
}

export const KNOWN_MIGRATIONS = Object.keys(migrations).sort();

/** Reads Kysely's own bookkeeping (`kysely_migration`); a database it never touched has none. */
export async function schemaState(db: Kysely<any>): Promise<SchemaState> {
  const { rows } = await sql<{ present: boolean }>`SELECT to_regclass('kysely_migration') IS NOT NULL AS present`.execute(db);
  const applied = rows[0]?.present
    ? (await sql<{ name: string }>`SELECT name FROM kysely_migration ORDER BY name`.execute(db)).rows.map((row) => row.name)
    : [];
  const unknown = applied.filter((name) => !KNOWN_MIGRATIONS.includes(name));
  return {
    applied,
    pending: KNOWN_MIGRATIONS.filter((name) => !applied.includes(name)),
    unknown,
    unknownCompatibility: await recordedCompatibility(db, unknown),
  };
}

const latest = (names: string[]) => names.at(-1) ?? 'none';

/**
 * A newer build's schema is run only when every migration this build does not know is recorded as
 * `expand` (a migration without a record, from a build older than the records, counts as
 * `contract`); it is never migrated by this build. Returns the newer migrations it runs on.
 */
export function refuseNewerSchema(state: SchemaState): string[] {
  if (state.unknown.length === 0) return [];
  const contracts = state.unknown.filter((name) => state.unknownCompatibility.get(name) !== 'expand');
  const newer = `the database schema is newer than this build: it is at ${latest(state.applied)} and has ${state.unknown.join(', ')}, which this build does not know (it knows up to ${latest(KNOWN_MIGRATIONS)})`;
  if (contracts.length > 0) {
    const steps = contracts.map((name) => (state.unknownCompatibility.has(name) ? name : `${name} (no compatibility record)`));
    throw new SchemaVersionError(
      `${newer}, and ${steps.join(', ')} ${contracts.length === 1 ? 'is a contract migration' : 'are contract migrations'} that builds before it cannot run on. ` +
        'Deploy the build that applied them, or a newer one.',
    );
  }
  if (state.pending.length > 0) {
    throw new SchemaVersionError(
      `${newer}, and lacks ${state.pending.join(', ')}, which this build needs. Deploy the build that applied them, or a newer one.`,
    );
  }
  return state.unknown;
}

export function refuseOlderSchema(state: SchemaState): void {
  if (state.pending.length === 0) return;
  throw new SchemaVersionError(
    `the database schema is behind this build: it is at ${latest(state.applied)}, this build needs ${latest(KNOWN_MIGRATIONS)} ` +
      `(pending: ${state.pending.join(', ')}). Run the migrate step first (\`node dist/src/cli/migrate.js\`, or \`npm run migrate\`), ` +
      'or start with MIGRATE_ON_START=true.',
  );
}

/**
 * Before an instance serves: the schema must be this build's. Pending migrations are applied
 * (`migrate`) only when `migrateOnStart`; otherwise the start is refused. Returns what was applied.
 */
export async function ensureSchema(
  db: Kysely<any>,
  options: { migrateOnStart: boolean; migrate: () => Promise<string[]>; logger: Logger },
): Promise<string[]> {
  const state = await schemaState(db);
  warnNewerSchema(refuseNewerSchema(state), state, options.logger);
  if (state.pending.length === 0) return [];
  if (!options.migrateOnStart) refuseOlderSchema(state);
  return options.migrate();
}

/** Runs on a newer schema of `expand` migrations: said once at start, naming both versions. */
export function warnNewerSchema(newer: string[], state: SchemaState, logger: Logger): void {
  if (newer.length === 0) return;
  logger.warn(
    { schemaVersion: latest(state.applied), buildVersion: latest(KNOWN_MIGRATIONS), newerMigrations: newer },
    `the database schema (${latest(state.applied)}) is newer than this build (${latest(KNOWN_MIGRATIONS)}); its newer migrations are all expand, so this build runs on it`,
  );
}
