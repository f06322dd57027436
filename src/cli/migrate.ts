import { loadConfig } from '../config/config.js';
import { createLogger } from '../observability/logger.js';
import { connectDatabase } from '../db/database.js';
import { EmbeddedStartError, startEmbeddedPostgres } from '../db/embedded.js';
import { migrateToLatest } from '../db/migrations/migrate.js';

/** `npm run migrate`: apply pending migrations and exit. */
const config = loadConfig(process.env);
const logger = createLogger(config);
const embedded = config.database.url
  ? null
  : await startEmbeddedPostgres({ dataDir: config.database.embeddedDataDir, database: 'community_layer', persistent: true, log: () => undefined }).catch(
      (error: unknown) => {
        if (!(error instanceof EmbeddedStartError)) throw error;
        console.error(error.message);
        process.exit(1);
      },
    );
const database = connectDatabase({ url: config.database.url ?? embedded!.url, poolMax: 2, logger });
try {
  const applied = await migrateToLatest(database.db);
  logger.info({ applied }, applied.length ? 'migrations applied' : 'database already up to date');
} finally {
  await database.close();
  await embedded?.stop();
}
