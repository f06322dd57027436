import { parseArgs } from 'node:util';
import { readConfigOrExit } from './read-config.js';
import { createLogger } from '../observability/logger.js';
import { configuredDatabase } from '../../tooling/postgres/configured-database.js';
import { EmbeddedStartError } from '../../tooling/postgres/embedded/start-error.js';
import { migrateOverSession } from '../db/migrations/migrate.js';
import { SchemaVersionError } from '../db/migrations/schema-version.js';
import { answerStandardOptions } from './command-line.js';
import { failInOneLine } from './one-line-failure.js';

const USAGE = `usage: node dist/src/cli/migrate.js [--grant-to ROLE] [--to MIGRATION] (npm run migrate [-- …] in a checkout)

Applies pending migrations and exits: the release step, or the init container, before instances
start with MIGRATE_ON_START=false. Connects over DATABASE_LISTEN_URL (default DATABASE_URL): a
session connection straight to PostgreSQL, never a transaction pooler (Kysely's migration lock is a
session advisory lock). A database a newer build migrated is left as it is when the migrations this
build does not know are all expand ones, refused otherwise. Without DATABASE_URL it migrates the
embedded development database. Installs graphile-worker's schema too: run it as the role that owns
the database.

  --grant-to ROLE  then grant ROLE, the role the service runs as, exactly the privileges it needs
                   (docs/operations.md, "Roles and grants"); default DATABASE_APP_ROLE
  --to MIGRATION   steps back to MIGRATION (e.g. 0021_webhook_probation) by running the down() of
                   each later one, newest first; refused unless every one of them is an expand
                   migration (docs/operations.md, "Rollouts and rollbacks")`;

answerStandardOptions(USAGE);
failInOneLine('migrate', (config) => config.database.listenUrl ?? config.database.url);
const { 'grant-to': grantTo, to } = commandOptions();
// Its Job's Secret holds the owner's URL and no token key: migrate neither verifies nor mints tokens.
const config = readConfigOrExit({ tokens: false });
const appRole = grantTo ?? config.database.appRole;
const logger = createLogger(config);
const database = await configuredDatabase(config, () => undefined).catch((error: unknown) => {
  if (!(error instanceof EmbeddedStartError)) throw error;
  console.error(error.message);
  process.exit(1);
});
try {
  const changed = await migrateOverSession(database.listenUrl, logger, { to, grantTo: appRole });
  if (to !== undefined) logger.info({ undone: changed, to }, changed.length ? 'migrations undone' : `database already at ${to}`);
  else logger.info({ applied: changed }, changed.length ? 'migrations applied' : 'database already up to date');
  if (appRole) logger.info({ role: appRole }, 'privileges granted');
} catch (error) {
  if (!(error instanceof SchemaVersionError)) throw error;
  console.error(`migrate: ${error.message}`);
  process.exitCode = 1;
} finally {
  await database.embedded?.stop();
}

function commandOptions(): { 'grant-to'?: string; to?: string } {
  try {
    return parseArgs({ options: { 'grant-to': { type: 'string' }, to: { type: 'string' } }, strict: true }).values;
  } catch (error) {
    console.error(`${error instanceof Error ? error.message : String(error)}\n\n${USAGE}`);
    process.exit(2);
  }
}
