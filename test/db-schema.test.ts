import { readFile } from 'node:fs/promises';
import { expect, it } from 'vitest';
import { connectDatabase } from '../src/db/database.js';
import { dumpSchema } from '../tooling/postgres/catalog-dump.js';
import { readSqlFile } from '../src/db/migrations/sql-files.js';
import { createLogger } from '../src/observability/logger.js';
import { freshDatabase } from './support/harness.js';

it('db/schema.sql is the schema the migrations build (run `npm run db:schema` after changing them)', async () => {
  const database = connectDatabase({ url: await freshDatabase(), poolMax: 1, logger: createLogger({ env: 'test', logLevel: 'silent' }) });
  try {
    const committed = await readFile(new URL('../db/schema.sql', import.meta.url), 'utf8');
    expect(await dumpSchema(database.db)).toBe(committed);
  } finally {
    await database.close();
  }
});

it('a migration gets the version of a function file it asks for, and never one that does not exist', async () => {
  const current = await readSqlFile(['ingest_signals', 1]);
  expect(current).toMatch(/^-- version: 1\n/);
  await expect(readSqlFile(['ingest_signals', 99])).rejects.toThrow(/asks for 99/);
});
