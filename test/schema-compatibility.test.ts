import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, inject, it } from 'vitest';
import { migrations } from '../src/db/migrations/index.js';
import { KNOWN_MIGRATIONS } from '../src/db/migrations/schema-version.js';
import { emptyDatabase } from '../tooling/databases.js';
import { capturedLog, freshDatabase, gql, sqlClient, startApp, token } from './support/harness.js';

const LATEST = KNOWN_MIGRATIONS.at(-1)!;
/** The last contract migration: `--to` may step back to it and no further. */
const LAST_CONTRACT = KNOWN_MIGRATIONS.filter((name) => migrations[name]!.compatibility === 'contract').at(-1)!;

async function sql(url: string, text: string): Promise<any[]> {
  const client = await sqlClient(url);
  try {
    return (await client.query(text)).rows;
  } finally {
    await client.end();
  }
}

/** What a newer build's migrate leaves behind: its migration, applied and recorded with its declaration. */
async function plant(url: string, name: string, compatible: boolean): Promise<void> {
  await sql(
    url,
    `CREATE TABLE planted_${name.slice(5)} (id int);
     INSERT INTO kysely_migration (name, timestamp) VALUES ('${name}', now()::text);
     INSERT INTO schema_migration_compatibility (name, previous_release_compatible) VALUES ('${name}', ${compatible})`,
  );
}

async function migrate(url: string, args: string[] = []): Promise<{ code: number; stderr: string }> {
  try {
    const { stderr } = await promisify(execFile)(process.execPath, ['scripts/cli.mjs', 'migrate', ...args], {
      env: { ...process.env, NODE_ENV: 'test', LOG_LEVEL: 'warn', DATABASE_URL: url },
    });
    return { code: 0, stderr };
  } catch (error) {
    const failed = error as { code: number; stderr: string };
    return { code: failed.code, stderr: failed.stderr };
  }
}

const applied = async (url: string) => (await sql(url, 'SELECT name FROM kysely_migration ORDER BY name')).map((row) => row.name);
const recorded = async (url: string) =>
  (await sql(url, 'SELECT name, previous_release_compatible AS c FROM schema_migration_compatibility ORDER BY name')).map(
    (row) => `${row.name}:${row.c ? 'expand' : 'contract'}`,
  );
const declared = (names: string[]) => names.map((name) => `${name}:${migrations[name]!.compatibility}`);

describe('a build on a schema newer than its own', () => {
  it('refuses across a contract migration, naming both versions and the step; runs, and serves a leave, across expand ones', async () => {
    const url = await freshDatabase();
    expect(await recorded(url)).toEqual(declared(KNOWN_MIGRATIONS));

    await plant(url, '9998_planted_contract', false);
    await plant(url, '9999_planted_expand', true);
    await expect(startApp(url, { MIGRATE_ON_START: 'true' })).rejects.toThrow(
      `the database schema is newer than this build: it is at 9999_planted_expand and has 9998_planted_contract, 9999_planted_expand, ` +
        `which this build does not know (it knows up to ${LATEST}), and 9998_planted_contract is a contract migration that builds before it cannot run on.`,
    );
    expect((await migrate(url)).stderr).toContain('9998_planted_contract is a contract migration');

    // The newer build's contract step is rolled back by its own tooling; what is left is expand only.
    await sql(url, `DROP TABLE planted_planted_contract; DELETE FROM kysely_migration WHERE name = '9998_planted_contract'`);
    const { logger, entries } = capturedLog();
    const app = await startApp(url, { MIGRATE_ON_START: 'true' }, { logger });
    try {
      expect(entries.find((entry) => entry.newerMigrations)).toMatchObject({
        level: 40,
        schemaVersion: '9999_planted_expand',
        buildVersion: LATEST,
        newerMigrations: ['9999_planted_expand'],
      });
      const left = await gql(app, 'mutation { leaveCommunityLayer { userId status } }', undefined, await token('4242'));
      expect(left).toMatchObject({ status: 200, data: { leaveCommunityLayer: { userId: '4242', status: 'LEFT' } } });
    } finally {
      await app.stop();
    }
    expect(await applied(url)).toEqual([...KNOWN_MIGRATIONS, '9999_planted_expand']);
    expect(await migrate(url)).toMatchObject({ code: 0 });
    expect(await applied(url)).toEqual([...KNOWN_MIGRATIONS, '9999_planted_expand']);
  });

  it('without a record (a build older than the records migrated it) counts as contract', async () => {
    const url = await freshDatabase();
    await sql(url, `INSERT INTO kysely_migration (name, timestamp) VALUES ('9999_unrecorded', now()::text)`);
    await expect(startApp(url)).rejects.toThrow('and 9999_unrecorded (no compatibility record) is a contract migration');
  });
});

describe('migrate --to', () => {
  it('steps back across expand migrations with their down()s, keeps the rows, and migrates forward again', async () => {
    const url = await emptyDatabase(inject('adminDatabaseUrl'));
    expect(await migrate(url)).toMatchObject({ code: 0 });
    await sql(url, `SELECT leave_community_layer('77')`);

    const refused = await migrate(url, ['--to', KNOWN_MIGRATIONS[KNOWN_MIGRATIONS.indexOf(LAST_CONTRACT) - 1]!]);
    expect(refused.code).toBe(1);
    expect(refused.stderr.trim().split('\n')).toEqual([expect.stringContaining(`${LAST_CONTRACT} is a contract migration`)]);
    expect(await applied(url)).toEqual(KNOWN_MIGRATIONS);

    expect(await migrate(url, ['--to', LAST_CONTRACT])).toMatchObject({ code: 0 });
    const back = KNOWN_MIGRATIONS.slice(0, KNOWN_MIGRATIONS.indexOf(LAST_CONTRACT) + 1);
    expect(back.length).toBeLessThan(KNOWN_MIGRATIONS.length);
    expect(await applied(url)).toEqual(back);
    expect(await recorded(url)).toEqual(declared(back));
    expect(await sql(url, `SELECT to_regclass('fair_share_bucket') AS t`)).toEqual([{ t: null }]);
    await expect(startApp(url, { MIGRATE_ON_START: 'false' })).rejects.toThrow('the database schema is behind this build');

    expect(await migrate(url)).toMatchObject({ code: 0 });
    expect(await applied(url)).toEqual(KNOWN_MIGRATIONS);
    expect(await recorded(url)).toEqual(declared(KNOWN_MIGRATIONS));
    expect(await sql(url, `SELECT user_id::text, status FROM community_membership`)).toEqual([{ user_id: '77', status: 'LEFT' }]);
  });
});
