import type { Config } from '../config/config.js';
import { startEmbeddedPostgres, type EmbeddedDatabase } from './embedded.js';

/** Where an entry point's database is: the URL for the pool, the session URL for LISTEN and migrations. */
export interface ConfiguredDatabase {
  url: string;
  listenUrl: string;
  /** Started here when DATABASE_URL is unset; the caller stops it. */
  embedded: EmbeddedDatabase | null;
}

/**
 * The start-up of `npm start` and `npm run migrate`: the configured PostgreSQL, or (DATABASE_URL
 * unset) the embedded one in `embeddedDataDir`, started here and kept between runs. Fails with
 * an EmbeddedStartError when the embedded one cannot start.
 */
export async function configuredDatabase(
  config: Pick<Config, 'databaseUrl' | 'databaseListenUrl' | 'embeddedDataDir'>,
  log: (message: string) => void,
): Promise<ConfiguredDatabase> {
  if (config.databaseUrl) return { url: config.databaseUrl, listenUrl: config.databaseListenUrl ?? config.databaseUrl, embedded: null };
  const embedded = await startEmbeddedPostgres({ dataDir: config.embeddedDataDir, database: 'community_layer', persistent: true, log });
  return { url: embedded.url, listenUrl: embedded.url, embedded };
}
