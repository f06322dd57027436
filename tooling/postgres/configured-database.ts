import type { Config } from '../../src/config/config.js';
import type { EmbeddedDatabase } from './embedded.js';

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
 * an EmbeddedStartError when the embedded one cannot start; `signal` gives up a start under way,
 * `notice` hears what the start did beyond starting (embedded `notice`).
 */
export async function configuredDatabase(
  { database }: Pick<Config, 'database'>,
  log: (message: string) => void,
  { signal, notice }: { signal?: AbortSignal; notice?: (message: string) => void } = {},
): Promise<ConfiguredDatabase> {
  if (database.url) return { url: database.url, listenUrl: database.listenUrl ?? database.url, embedded: null };
  // Loaded only here: a production install has no embedded PostgreSQL (a development dependency).
  const { startEmbeddedPostgres } = await import('./embedded.js');
  const embedded = await startEmbeddedPostgres({
    dataDir: database.embeddedDataDir,
    database: 'community_layer',
    persistent: true,
    log,
    ...(signal ? { signal } : {}),
    ...(notice ? { notice } : {}),
  });
  return { url: embedded.url, listenUrl: embedded.url, embedded };
}
