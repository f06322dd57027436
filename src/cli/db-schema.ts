import path from 'node:path';
import { readFile, writeFile } from 'node:fs/promises';
import { createLogger } from '../observability/logger.js';
import { connectDatabase } from '../db/database.js';
import { migrateOverSession } from '../db/migrations/migrate.js';
import { dumpSchema } from '../../tooling/postgres/catalog-dump.js';
import { startTemporaryPostgres } from '../../tooling/postgres/temporary-postgres.js';
import { projectRoot } from '../util/project-root.js';
import { answerStandardOptions } from './command-line.js';

answerStandardOptions(
  `usage: npm run db:schema | npm run db:check\n\nWrites db/schema.sql from a freshly migrated temporary database; --check fails (exit 1) when it is stale.`,
);

/** `npm run db:schema` writes db/schema.sql from a freshly migrated database; `db:check` fails when it is stale. */
const SCHEMA_FILE = path.join(projectRoot(), 'db/schema.sql');

const logger = createLogger({ env: 'test', logLevel: 'silent' });
const embedded = await startTemporaryPostgres('schema');
let dumped: string;
try {
  await migrateOverSession(embedded.url, logger);
  const database = connectDatabase({ url: embedded.url, poolMax: 1, logger });
  dumped = await dumpSchema(database.db).finally(() => database.close());
} finally {
  await embedded.stop();
}

if (process.argv.includes('--check')) {
  const committed = await readFile(SCHEMA_FILE, 'utf8').catch(() => '');
  if (committed !== dumped) {
    console.error('db/schema.sql does not match the migrated database: run `npm run db:schema` and review the diff');
    process.exit(1);
  }
  console.log('db/schema.sql is up to date');
} else {
  await writeFile(SCHEMA_FILE, dumped);
  console.log('wrote db/schema.sql');
}
