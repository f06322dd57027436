import { parseArgs } from 'node:util';
import { readConfigOrExit } from './read-config.js';
import { createLogger } from '../observability/logger.js';
import { configuredDatabase } from '../../tooling/postgres/configured-database.js';
import { EmbeddedStartError } from '../../tooling/postgres/embedded/start-error.js';
import { migrateOverSession } from '../db/migrations/migrate.js';
import { SchemaVersionError } from '../db/migrations/schema-version.js';
import { answerStandardOptions } from './command-line.js';

const USAGE = `usage: node dist/src/cli/migrate.js [--grant-to ROLE] (npm run migrate [-- --grant-to ROLE] in a checkout)

Applies pending migrations and exits: the release step, or the init container, before instances
start with MIGRATE_ON_START=false. Connects over DATABASE_LISTEN_URL (default DATABASE_URL): a
session connection straight to PostgreSQL, never a transaction pooler (Kysely's migration lock is a
session advisory lock). Refuses a database migrated by a newer build. Without DATABASE_URL it
migrates the embedded development database. Installs graphile-worker's schema too: run it as the
role that owns the database.

  --grant-to ROLE   then grant ROLE, the role the service runs as, exactly the privileges it needs
                    (docs/operations.md, "Roles and grants"); default DATABASE_APP_ROLE`;

answerStandardOptions(USAGE);
const grantTo = grantedRole();
const config = readConfigOrExit();
const appRole = grantTo ?? config.database.appRole;
const logger = createLogger(config);
const database = await configuredDatabase(config, () => undefined).catch((error: unknown) => {
  if (!(error instanceof EmbeddedStartError)) throw error;
  console.error(error.message);
  process.exit(1);
});
try {
  const applied = await migrateOverSession(database.listenUrl, logger, appRole);
  logger.info({ applied }, applied.length ? 'migrations applied' : 'database already up to date');
  if (appRole) logger.info({ role: appRole }, 'privileges granted');
} catch (error) {
  if (!(error instanceof SchemaVersionError)) throw error;
  console.error(`migrate: ${error.message}`);
  process.exitCode = 1;
} finally {
  await database.embedded?.stop();
}

function grantedRole(): string | undefined {
  try {
    return parseArgs({ options: { 'grant-to': { type: 'string' } } }).values['grant-to'];
  } catch (error) {
    console.error(`${error instanceof Error ? error.message : String(error)}\n\n${USAGE}`);
    process.exit(2);
  }
}
