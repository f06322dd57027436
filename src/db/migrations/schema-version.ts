import { sql, type Kysely } from 'kysely';
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
}

export const KNOWN_MIGRATIONS = Object.keys(migrations).sort();

/** Reads Kysely's own bookkeeping (`kysely_migration`); a database it never touched has none. */
export async function schemaState(db: Kysely<any>): Promise<SchemaState> {
  const { rows } = await sql<{ present: boolean }>`SELECT to_regclass('kysely_migration') IS NOT NULL AS present`.execute(db);
  const applied = rows[0]?.present
    ? (await sql<{ name: string }>`SELECT name FROM kysely_migration ORDER BY name`.execute(db)).rows.map((row) => row.name)
    : [];
  return {
    applied,
    pending: KNOWN_MIGRATIONS.filter((name) => !applied.includes(name)),
    unknown: applied.filter((name) => !KNOWN_MIGRATIONS.includes(name)),
  };
}

const latest = (names: string[]) => names.at(-1) ?? 'none';

/** A newer build's schema is never run by an older build (nor migrated by it: Kysely would refuse too). */
export function refuseNewerSchema(state: SchemaState): void {
  if (state.unknown.length === 0) return;
  throw new SchemaVersionError(
    `the database schema is newer than this build: it is at ${latest(state.applied)} and has ${state.unknown.join(', ')}, ` +
      `which this build does not know (it knows up to ${latest(KNOWN_MIGRATIONS)}). Deploy the build that applied them, or a newer one.`,
  );
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
  options: { migrateOnStart: boolean; migrate: () => Promise<string[]> },
): Promise<string[]> {
  const state = await schemaState(db);
  refuseNewerSchema(state);
  if (state.pending.length === 0) return [];
  if (!options.migrateOnStart) refuseOlderSchema(state);
  return options.migrate();
}
