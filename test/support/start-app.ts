import { createApp, type App, type AppOptions } from '../../src/app.js';
import { loadConfig, resolveConfig, type AppConfig } from '../../src/config/config.js';

interface Configured {
  secret: string;
  environment?: Record<string, string>;
}

/**
 * The configuration of a test or bench instance: from `environment` over quiet defaults on an
 * ephemeral loopback port, its tokens signed with `secret` unless the environment configures
 * another key.
 */
export function appConfig(databaseUrl: string, { secret, environment = {} }: Configured): AppConfig {
  const config = loadConfig({ NODE_ENV: 'test', PORT: '0', METRICS_PORT: '0', LOG_LEVEL: 'silent', DATABASE_URL: databaseUrl, AUTH_JWT_SECRET: secret, ...environment });
  const authKey = config.auth.key.kind === 'development' ? { kind: 'secret' as const, secret } : config.auth.key;
  return resolveConfig(config, { databaseUrl, authKey });
}

/** A real app instance (`createApp`, as `src/main.ts` builds it) on `appConfig`, started. Tests and the bench start theirs here. */
export async function startApp(databaseUrl: string, { options = {}, ...configured }: Configured & { options?: AppOptions }): Promise<App> {
  const app = createApp(appConfig(databaseUrl, configured), options);
  await app.start();
  return app;
}
