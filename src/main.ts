import type { Config } from './config/config.js';
import { maskedDatabaseUrl } from './config/database-url.js';
import { configuredDatabase, type ConfiguredDatabase } from '../tooling/postgres/configured-database.js';
import { EmbeddedStartError, type EmbeddedDatabase } from '../tooling/postgres/embedded.js';
import { startApp } from '../tooling/start-app.js';
import type { App } from './app.js';
import { SCOPES } from './auth/authenticate.js';
import { mintToken, resolveAuthKey, resolveReceiptKey } from './auth/tokens.js';
import { serverStart } from './cli/server-command-line.js';
import { onStopSignals } from './cli/stop-signals.js';

/** `npm start`: the configured PostgreSQL, or an embedded one under EMBEDDED_PG_DIR. */
async function main(): Promise<void> {
  const { config, logger } = serverStart();
  const started = performance.now();
  if (!config.database.url) logger.info({ dataDir: config.database.embeddedDataDir }, 'DATABASE_URL not set; starting embedded PostgreSQL');
  // A stop during start-up gives up the embedded database's start where it is (a wait included).
  const starts = new AbortController();
  const starting: Promise<ConfiguredDatabase> = configuredDatabase(config, (message) => logger.debug({ postgres: message.trim() }), {
    signal: starts.signal,
    notice: (message) => logger.info(message),
  });
  const stopEmbedded = async () => {
    starts.abort();
    await (await starting.catch(() => null))?.embedded?.stop();
  };
  let app: App | null = null;
  // Installed before the wait: a signal during start-up must still stop the embedded database.
  const stop = onStopSignals(logger, {
    drain: async () => {
      // A start on the same data folder meanwhile (`npm start | head` then `npm start`) waits for this one.
      void starting.then(
        (started) => started.embedded?.stopping(),
        () => undefined,
      );
      await app?.stop().catch((error: unknown) => logger.error({ err: error }, 'error while stopping'));
      await stopEmbedded();
    },
    stopNow: stopEmbedded,
  });
  const { url: databaseUrl, embedded: database } = await starting.catch((error: unknown) => {
    if (stop.requested) return { url: '', embedded: null };
    throw error;
  });
  if (database) {
    logger.info(
      { databaseUrl: maskedDatabaseUrl(database.url), dataDir: database.pgdata, binaries: database.binaries },
      'embedded PostgreSQL ready',
    );
  }
  if (stop.requested) return;
  const authKey = await resolveAuthKey(config.auth, config.database.embeddedDataDir);
  const receiptKey = await resolveReceiptKey(
    config.downstream.receiptSigningKey,
    config.env === 'production',
    config.database.embeddedDataDir,
  );
  const tokens = authKey.kind === 'secret' && authKey.generated ? await developmentTokens(authKey.secret, config) : null;
  try {
    const resources = { databaseUrl, authKey, receiptKey, ...(tokens ? { developmentToken: tokens.admin } : {}) };
    // Known once created, before it has started: a signal during start-up stops it.
    app = await startApp(config, resources, { logger, created: (instance) => void (app = instance) });
  } catch (error) {
    if (stop.requested) return;
    await stopEmbedded();
    throw error;
  }
  logger.info({ url: app.url, ms: Math.round(performance.now() - started) }, `community-layer ready: ${app.url}`);
  if (database) printEmbeddedDatabase(database);
  if (tokens) printDevelopmentTokens(tokens);
}

/** To stdout, never to the log: the URL carries the embedded database's password. */
function printEmbeddedDatabase(database: EmbeddedDatabase): void {
  console.log(
    [
      '',
      `Embedded PostgreSQL (data and password in ${database.pgdata}). A second instance can share it:`,
      `  PORT=4001 DATABASE_URL=${database.url} npm start`,
    ].join('\n'),
  );
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

main().catch((error: unknown) => {
  // An EmbeddedStartError says what failed, why and what to do: its message alone is the report.
  console.error(
    error instanceof EmbeddedStartError
      ? error.message
      : `community-layer failed to start: ${error instanceof Error ? error.message : String(error)}`,
  );
  process.exit(1);
});
