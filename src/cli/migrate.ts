import { loadConfig } from '../config/config.js';
import { createLogger } from '../observability/logger.js';
import { configuredDatabase } from '../db/configured-database.js';
import { EmbeddedStartError } from '../db/embedded.js';
import { migrateOverSession } from '../db/migrations/migrate.js';

/** `npm run migrate`: apply pending migrations and exit, over the session (listen) URL as the server does. */
const config = loadConfig(process.env);
const logger = createLogger(config);
const database = await configuredDatabase(config, () => undefined).catch((error: unknown) => {
  if (!(error instanceof EmbeddedStartError)) throw error;
  console.error(error.message);
  process.exit(1);
});
try {
  const applied = await migrateOverSession(database.listenUrl, logger);
  logger.info({ applied }, applied.length ? 'migrations applied' : 'database already up to date');
} finally {
  await database.embedded?.stop();
}
