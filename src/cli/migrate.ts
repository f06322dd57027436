import { readConfigOrExit } from './read-config.js';
import { createLogger } from '../observability/logger.js';
import { configuredDatabase } from '../../tooling/postgres/configured-database.js';
import { EmbeddedStartError } from '../../tooling/postgres/embedded/start-error.js';
import { migrateOverSession } from '../db/migrations/migrate.js';
import { SchemaVersionError } from '../db/migrations/schema-version.js';
import { answerStandardOptions, refuseArguments } from './command-line.js';
import { failInOneLine } from './one-line-failure.js';

const USAGE = `usage: node dist/src/cli/migrate.js (npm run migrate in a checkout)

Applies pending migrations and exits: the release step, or the init container, before instances
start with MIGRATE_ON_START=false. Connects over DATABASE_LISTEN_URL (default DATABASE_URL): a
session connection straight to PostgreSQL, never a transaction pooler (Kysely's migration lock is a
session advisory lock). Refuses a database migrated by a newer build. Without DATABASE_URL it
migrates the embedded development database.`;

answerStandardOptions(USAGE);
failInOneLine('migrate', (config) => config.database.listenUrl ?? config.database.url);
refuseArguments(USAGE);
const config = readConfigOrExit();
const logger = createLogger(config);
const database = await configuredDatabase(config, () => undefined).catch((error: unknown) => {
  if (!(error instanceof EmbeddedStartError)) throw error;
  console.error(error.message);
  process.exit(1);
});
try {
  const applied = await migrateOverSession(database.listenUrl, logger);
  logger.info({ applied }, applied.length ? 'migrations applied' : 'database already up to date');
} catch (error) {
  if (!(error instanceof SchemaVersionError)) throw error;
  console.error(`migrate: ${error.message}`);
  process.exitCode = 1;
} finally {
  await database.embedded?.stop();
}
