import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { describe, expect, inject, it } from 'vitest';
import { loadConfig } from '../src/config/config.js';
import { KNOWN_MIGRATIONS } from '../src/db/migrations/schema-version.js';
import { withDatabase } from '../tooling/databases.js';
import { TEST_SECRET, freshDatabase, sqlClient, startApp } from './support/harness.js';

const LATEST = KNOWN_MIGRATIONS.at(-1)!;

async function emptyDatabase(): Promise<string> {
  const adminUrl = inject('adminDatabaseUrl');
  const name = `test_empty_${randomBytes(6).toString('hex')}`;
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    await client.query(`CREATE DATABASE ${name}`);
  } finally {
    await client.end();
  }
  return withDatabase(adminUrl, name);
}

async function migrationTable(url: string): Promise<string[] | null> {
  const client = await sqlClient(url);
  try {
    const { rows } = await client.query(`SELECT to_regclass('kysely_migration') IS NOT NULL AS present`);
    if (!rows[0].present) return null;
    return (await client.query(`SELECT name FROM kysely_migration ORDER BY name`)).rows.map((row) => row.name);
  } finally {
    await client.end();
  }
}

describe('an instance starts only on its own schema', () => {
  it('MIGRATE_ON_START is on unless production', () => {
    const production = { NODE_ENV: 'production', DATABASE_URL: 'postgres://db/x', AUTH_JWT_SECRET: TEST_SECRET };
    expect(loadConfig(production).database.migrateOnStart).toBe(false);
    expect(loadConfig({ ...production, MIGRATE_ON_START: 'true' }).database.migrateOnStart).toBe(true);
    expect(loadConfig({ NODE_ENV: 'development' }).database.migrateOnStart).toBe(true);
  });

  it('on an unmigrated database with MIGRATE_ON_START=false it refuses, naming the versions, and touches nothing; with true it migrates', async () => {
    const url = await emptyDatabase();
    await expect(startApp(url, { MIGRATE_ON_START: 'false' })).rejects.toThrow(
      new RegExp(
        `schema is behind this build: it is at none, this build needs ${LATEST} \\(pending: ${KNOWN_MIGRATIONS[0]}, .*${LATEST}\\)\\. Run the migrate step first`,
      ),
    );
    expect(await migrationTable(url)).toBeNull();

    const app = await startApp(url, { MIGRATE_ON_START: 'true' });
    await app.stop();
    expect(await migrationTable(url)).toEqual(KNOWN_MIGRATIONS);
  });

  it('on a schema a newer build migrated it refuses even with MIGRATE_ON_START=true, naming both versions', async () => {
    const url = await freshDatabase();
    const client = await sqlClient(url);
    try {
      await client.query(`INSERT INTO kysely_migration (name, timestamp) VALUES ('9999_from_a_newer_build', now()::text)`);
    } finally {
      await client.end();
    }
    await expect(startApp(url, { MIGRATE_ON_START: 'true' })).rejects.toThrow(
      `the database schema is newer than this build: it is at 9999_from_a_newer_build and has 9999_from_a_newer_build, which this build does not know (it knows up to ${LATEST})`,
    );
    expect(await migrationTable(url)).toEqual([...KNOWN_MIGRATIONS, '9999_from_a_newer_build']);
  });
});
