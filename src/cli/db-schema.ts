import { chmod, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createLogger } from '../observability/logger.js';
import { connectDatabase } from '../db/database.js';
import { startEmbeddedPostgres } from '../db/embedded.js';
import { migrateToLatest } from '../db/migrations/migrate.js';
import { dumpSchema } from '../db/schema-dump/catalog-dump.js';
import { projectRoot } from '../util/project-root.js';

/** `npm run db:schema` writes db/schema.sql from a freshly migrated database; `db:check` fails when it is stale. */
const SCHEMA_FILE = path.join(projectRoot(), 'db/schema.sql');

const parent = await mkdtemp(path.join(tmpdir(), 'community-layer-schema-'));
// As root the embedded server runs as "postgres", which must be able to enter this folder.
await chmod(parent, 0o755);
const embedded = await startEmbeddedPostgres({ dataDir: path.join(parent, 'pg'), database: 'schema', persistent: false, log: () => undefined });
const database = connectDatabase({ url: embedded.url, poolMax: 2, logger: createLogger({ env: 'test', logLevel: 'silent' }) });
let dumped: string;
try {
  await migrateToLatest(database.db);
  dumped = await dumpSchema(database.db);
} finally {
  await database.close();
  await embedded.stop();
  await rm(parent, { recursive: true, force: true });
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
