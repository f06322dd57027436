import { ConfigError, loadConfig, resolveConfig, type Config } from './config/config.js';
import { startEmbeddedPostgres, type EmbeddedDatabase } from './db/embedded.js';
import { createApp } from './app.js';
import { SCOPES } from './auth/authenticate.js';
import { mintToken, resolveAuthKey } from './auth/tokens.js';
import { createLogger } from './server/logger.js';

/** `npm start`: the configured PostgreSQL, or an embedded one under EMBEDDED_PG_DIR. */
async function main(): Promise<void> {
  const config = readConfig();
  const logger = createLogger(config);
  const started = performance.now();
  let embedded: EmbeddedDatabase | null = null;
  if (!config.databaseUrl) {
    logger.info({ dataDir: config.embeddedDataDir }, 'DATABASE_URL not set; starting embedded PostgreSQL');
    embedded = await startEmbeddedPostgres({
      dataDir: config.embeddedDataDir,
      database: 'community_layer',
      persistent: true,
      log: (message) => logger.debug({ postgres: message.trim() }),
    });
    // A second instance can share it: DATABASE_URL with the password from README (dev only).
    logger.info({ databaseUrl: embedded.url.replace(/:[^:@/]+@/, ':***@') }, 'embedded PostgreSQL ready');
  }
  const authKey = await resolveAuthKey(config.auth, config.embeddedDataDir);
  const tokens = authKey.kind === 'secret' && authKey.generated ? await developmentTokens(authKey.secret, config) : null;
  const app = createApp(
    resolveConfig(config, { databaseUrl: config.databaseUrl ?? embedded!.url, authKey, ...(tokens ? { developmentToken: tokens.admin } : {}) }),
    { logger },
  );
  let stopping = false;
  const shutdown = async (signal: string): Promise<void> => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down');
    await app.stop().catch((error: unknown) => logger.error({ err: error }, 'error while stopping'));
    await embedded?.stop();
    logger.info('stopped');
    process.exit(0);
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
  try {
    await app.start();
  } catch (error) {
    await embedded?.stop();
    throw error;
  }
  logger.info({ url: app.url, ms: Math.round(performance.now() - started) }, `community-layer ready: ${app.url}`);
  if (tokens) printDevelopmentTokens(tokens);
}

/** Development only (the secret was generated locally): a user token and an all-scopes one. */
async function developmentTokens(secret: string, config: Config): Promise<{ user: string; admin: string }> {
  const claims = { issuer: config.auth.issuer, audience: config.auth.audience };
  const user = await mintToken(secret, { sub: '42', ...claims });
  const admin = await mintToken(secret, { sub: '1', scope: `${SCOPES.admin} ${SCOPES.signalWriter}`, ...claims });
  return { user, admin };
}

/** Ready-to-paste headers (never logged in production: there the key is configured, not generated). */
function printDevelopmentTokens({ user, admin }: { user: string; admin: string }): void {
  console.log(
    [
      '',
      'Development tokens (AUTH_JWT_SECRET not set; secret kept in .data/dev-jwt-secret). GraphiQL starts with the admin one; for "Headers":',
      `  user 42:  {"authorization": "Bearer ${user}"}`,
      `  admin:    {"authorization": "Bearer ${admin}"}`,
      'More: npm run token -- --sub 7 --scope "community:admin"',
      '',
    ].join('\n'),
  );
}

function readConfig(): Config {
  try {
    return loadConfig(process.env);
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(error.message);
      process.exit(2);
    }
    throw error;
  }
}

main().catch((error: unknown) => {
  console.error('community-layer failed to start:', error instanceof Error ? error.message : error);
  process.exit(1);
});
