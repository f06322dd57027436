import { createApp, type App, type AppOptions } from '../../src/app.js';
import { loadConfig, resolveConfig } from '../../src/config/config.js';

/**
 * A real app instance (`createApp`, as `src/main.ts` builds it) on an ephemeral loopback port,
 * started: configured from `environment` over quiet defaults, its tokens signed with `secret`
 * unless the environment configures another key. Tests and the bench start theirs here.
 */
export async function startApp(
  databaseUrl: string,
  { secret, environment = {}, options = {} }: { secret: string; environment?: Record<string, string>; options?: AppOptions },
): Promise<App> {
  const config = loadConfig({ NODE_ENV: 'test', PORT: '0', METRICS_PORT: '0', LOG_LEVEL: 'silent', DATABASE_URL: databaseUrl, AUTH_JWT_SECRET: secret, ...environment });
  const authKey = config.auth.key.kind === 'development' ? { kind: 'secret' as const, secret } : config.auth.key;
  const app = createApp(resolveConfig(config, { databaseUrl, authKey }), options);
  await app.start();
  return app;
}
