import { sql, type Kysely, type Migration } from 'kysely';

/**
 * What a migration promises the builds before it (docs/operations.md, "Rollouts and rollbacks"):
 * - `expand`: additive; every build back to the last `contract` migration runs on the schema after it;
 * - `contract`: it removes or changes what such a build uses; the builds before it cannot run on it.
 * Every migration module exports one (`export const compatibility`); index.ts types them so a module
 * without it does not compile.
 */
export type Compatibility = 'expand' | 'contract';

export interface DeclaredMigration extends Migration {
  readonly compatibility: Compatibility;
}

/**
 * The declarations travel with the database, since an older build has not got the newer
 * migrations' code: migrate writes each one in its migration's own transaction. Bookkeeping of the
 * migrator, like Kysely's `kysely_migration` (left out of the schema dump, created by migrate).
 */
export const COMPATIBILITY_TABLE = 'schema_migration_compatibility';

/** A migration that records its declaration when applied and forgets it when undone. */
export function recording(name: string, migration: DeclaredMigration): Migration {
  const compatible = migration.compatibility === 'expand';
  return {
    async up(db) {
      await migration.up(db);
      await sql`INSERT INTO schema_migration_compatibility (name, previous_release_compatible) VALUES (${name}, ${compatible})
        ON CONFLICT (name) DO UPDATE SET previous_release_compatible = EXCLUDED.previous_release_compatible, applied_at = now()`.execute(
        db,
      );
    },
    async down(db) {
      if (!migration.down) throw new Error(`${name} has no down()`);
      await migration.down(db);
      await sql`DELETE FROM schema_migration_compatibility WHERE name = ${name}`.execute(db);
    },
  };
}

/**
 * Creates the table when missing and records the declarations of migrations applied before it
 * existed (this build knows them). Under a lock of its own, so concurrent migrates do not race.
 */
export async function ensureCompatibilityTable(db: Kysely<any>, declarations: Record<string, Compatibility>): Promise<void> {
  const names = Object.keys(declarations);
  const compatible = names.map((name) => declarations[name] === 'expand');
  await db.transaction().execute(async (trx) => {
    await sql`SELECT pg_advisory_xact_lock(hashtext(${COMPATIBILITY_TABLE}))`.execute(trx);
    await sql`CREATE TABLE IF NOT EXISTS schema_migration_compatibility (
      name text PRIMARY KEY,
      previous_release_compatible boolean NOT NULL,
      applied_at timestamptz NOT NULL DEFAULT now()
    )`.execute(trx);
    const { rows } = await sql<{ present: boolean }>`SELECT to_regclass('kysely_migration') IS NOT NULL AS present`.execute(trx);
    if (!rows[0]?.present) return;
    await sql`INSERT INTO schema_migration_compatibility (name, previous_release_compatible)
      SELECT d.name, d.compatible FROM unnest(${names}::text[], ${compatible}::boolean[]) AS d (name, compatible)
       WHERE d.name IN (SELECT name FROM kysely_migration)
      ON CONFLICT (name) DO NOTHING`.execute(trx);
  });
}

/** The recorded declarations of the named migrations; a name without one is missing from the map. */
export async function recordedCompatibility(db: Kysely<any>, names: string[]): Promise<Map<string, Compatibility>> {
  if (names.length === 0) return new Map();
  const { rows: present } = await sql<{ present: boolean }>`SELECT to_regclass(${COMPATIBILITY_TABLE}) IS NOT NULL AS present`.execute(db);
  if (!present[0]?.present) return new Map();
  const { rows } = await sql<{ name: string; previous_release_compatible: boolean }>`
    SELECT name, previous_release_compatible FROM schema_migration_compatibility WHERE name = ANY(${names}::text[])`.execute(db);
  return new Map(rows.map((row) => [row.name, row.previous_release_compatible ? 'expand' : 'contract']));
}
